//! Method bodies: the statement interpreter.
//!
//! The compiler turns a `Body` node into statement bytecode along one path
//! ([`compiler::murano::emit::compile_body`]: YAML -> IR -> [`Code`]);
//! this module runs it. An activation holds the method's variables and
//! the YAQL frame its expressions see; the instructions
//! ([`vm::bc::stmt::SOp`]) evaluate template operands, assign through
//! compiled destinations, jump, iterate, dispatch exceptions through the
//! handler table (`Try`/`Catch`/`Else`/`Finally`, `Throw`, `Rethrow`) and
//! run `Parallel` branches as green threads (`vm::coro`). An error leaving
//! a statement gets the statement's position in its MuranoPL trace and as
//! its location.

use runtime::ErrorKind;
use std::sync::{Arc, OnceLock};

use compiler::murano::emit::{Code, Operand, Target, TargetRoot, TargetStep};
use compiler::murano::ir::{ExprId, InvalidOp};
use runtime::ctx::Frame;
use runtime::{Dict, Env, Error, Result, Value};
use vm::bc::stmt::{finally_between, find_handler, Handler, HandlerKind, SOp, NONE};

use crate::class::{Class, Method};
use crate::code::eval_operand;
pub use crate::code::{Body, CTemplate};
use crate::executor::Executor;
pub use crate::executor::{Scope, MURANO_EXCEPTION};

// ---- execution -----------------------------------------------------------

enum Flow {
    Next,
    Return(Value),
}

/// The frame key `this`, shared.
fn this_key() -> Arc<str> {
    // An immutable constant made once per process (a cache, not state):
    // every frame that binds `$this` shares the one allocation.
    static THIS: OnceLock<Arc<str>> = OnceLock::new();
    THIS.get_or_init(|| Arc::from("this")).clone()
}

struct Activation<'a> {
    ex: &'a Executor,
    env: &'a Env,
    class: &'a Arc<Class>,
    /// The running method's name (for stack traces).
    method: Arc<str>,
    this: Value,
    vars: Vars,
    frame: Option<Arc<Frame>>,
}

type VarList = Vec<(Arc<str>, Value)>;

/// A method's local variables: its own, or, in its `Parallel` branches,
/// the method's, which every branch reads and assigns as it runs (murano's
/// `set_data`, murano/dsl/lhs_expression.py, assigns in the method's
/// variable scope from inside any block).
///
/// A `For` variable or a `Catch` `As` name is set in the block's own
/// context in murano (`context[name] = ...` in murano/dsl/macros.py), so
/// in a branch it stays the branch's: the `local` overlay.
enum Vars {
    Own(VarList),
    /// The shared variables, the version the cached frame holds, and the
    /// branch's own.
    Shared(std::rc::Rc<SharedVars>, u64, VarList),
}

/// Variables shared by `Parallel` branches; `version` counts assignments.
struct SharedVars {
    vars: std::cell::RefCell<VarList>,
    version: std::cell::Cell<u64>,
}

impl Vars {
    /// True when a frame built at the last [`Vars::seen`] is up to date.
    fn fresh(&self) -> bool {
        match self {
            Vars::Own(_) => true,
            Vars::Shared(s, seen, _) => s.version.get() == *seen,
        }
    }

    fn seen(&mut self) {
        if let Vars::Shared(s, seen, _) = self {
            *seen = s.version.get();
        }
    }

    /// Every variable once, a branch's own before the shared ones.
    fn each(&self, f: &mut dyn FnMut(&Arc<str>, &Value)) {
        match self {
            Vars::Own(v) => v.iter().for_each(|(k, x)| f(k, x)),
            Vars::Shared(s, _, local) => {
                local.iter().for_each(|(k, x)| f(k, x));
                s.vars
                    .borrow()
                    .iter()
                    .filter(|(k, _)| !local.iter().any(|(l, _)| l == k))
                    .for_each(|(k, x)| f(k, x));
            }
        }
    }

    /// Assigns a variable of the method.
    fn set(&mut self, name: &Arc<str>, v: Value) {
        match self {
            Vars::Own(vars) => set_in(vars, name, v),
            Vars::Shared(s, _, _) => {
                set_in(&mut s.vars.borrow_mut(), name, v);
                s.version.set(s.version.get() + 1);
            }
        }
    }

    /// Sets a variable of the running block (a branch's own in a branch).
    fn set_local(&mut self, name: &Arc<str>, v: Value) {
        match self {
            Vars::Own(vars) | Vars::Shared(_, _, vars) => set_in(vars, name, v),
        }
    }

    /// The variables as branches share them; `true` when they were this
    /// activation's own until now (see [`Vars::unshare`]).
    fn share(&mut self) -> (std::rc::Rc<SharedVars>, bool) {
        match self {
            Vars::Shared(s, _, _) => (s.clone(), false),
            Vars::Own(v) => {
                let s = std::rc::Rc::new(SharedVars {
                    vars: std::cell::RefCell::new(std::mem::take(v)),
                    version: std::cell::Cell::new(0),
                });
                *self = Vars::Shared(s.clone(), u64::MAX, Vec::new());
                (s, true)
            }
        }
    }

    /// Takes the variables back once the branches are done.
    fn unshare(&mut self) {
        if let Vars::Shared(s, _, _) = self {
            *self = Vars::Own(s.vars.take());
        }
    }
}

fn set_in(vars: &mut VarList, name: &Arc<str>, v: Value) {
    match vars.iter_mut().find(|(k, _)| k == name) {
        Some(slot) => slot.1 = v,
        None => vars.push((name.clone(), v)),
    }
}

impl Activation<'_> {
    fn ctx(&mut self) -> Arc<Frame> {
        if let Some(f) = &self.frame {
            if self.vars.fresh() {
                return f.clone();
            }
        }
        let mut f = Frame::default();
        f.args.push(self.this.clone());
        f.vars.push((this_key(), self.this.clone()));
        f.scope = Some(
            Scope {
                class: Some(self.class.clone()),
                ..Scope::default()
            }
            .into_frame_scope(),
        );
        self.vars
            .each(&mut |k, v| f.vars.push((k.clone(), v.clone())));
        self.vars.seen();
        let f = Arc::new(f);
        self.frame = Some(f.clone());
        f
    }

    /// Evaluates operand `i` of `code`.
    fn eval(&mut self, code: &Code, i: u32) -> Result<Value> {
        self.eval_operand(code, &code.operands[i as usize])
    }

    fn eval_operand(&mut self, code: &Code, o: &Operand) -> Result<Value> {
        let ctx = self.ctx();
        eval_operand(o, &code.programs, self.env, &ctx)
    }

    /// Evaluates expression `id` of `code` (not finalized).
    fn eval_expr(&mut self, code: &Code, id: ExprId) -> Result<Value> {
        let ctx = self.ctx();
        code.program(id).eval_in(self.env, &ctx)
    }

    fn set_var(&mut self, name: &Arc<str>, v: Value) {
        self.frame = None;
        self.vars.set(name, v);
    }

    fn set_local(&mut self, name: &Arc<str>, v: Value) {
        self.frame = None;
        self.vars.set_local(name, v);
    }

    fn get_var(&mut self, name: &str) -> Value {
        let ctx = self.ctx();
        ctx.var(name)
    }

    fn error_names(&self, e: &Error) -> Vec<String> {
        error_names(self.ex, e, true)
    }

    fn assign(&mut self, code: &Code, target: &Target, v: Value) -> Result<()> {
        let steps = &target.path[..];
        match &target.root {
            TargetRoot::Local(name) => {
                if steps.is_empty() {
                    // murano's `set_data`: `$` and `$this` are not variables.
                    if name.is_empty() || &**name == "this" {
                        return Err(Error::new(
                            ErrorKind::ValueError,
                            format!("Cannot assign to ${name}"),
                        ));
                    }
                    self.set_var(name, v);
                    return Ok(());
                }
                let cur = self.get_var(name);
                let nv = self.set_path(code, cur, steps, v)?;
                if let Some(nv) = nv {
                    self.set_var(name, nv);
                }
                Ok(())
            }
            TargetRoot::Of(base, name) => {
                let b = self.eval_expr(code, *base)?;
                match b {
                    Value::Type(ref t) => {
                        let cls = self.ex.class(&t.name)?;
                        self.assign_static(code, &cls, name, steps, v)
                    }
                    o @ Value::Object(_) => self
                        .set_at(code, o, Value::str(&**name), steps, v)
                        .map(|_| ()),
                    other => Err(Error::type_(format!(
                        "cannot set property {name} of {}",
                        other.type_name()
                    ))),
                }
            }
            TargetRoot::Prop(name) => {
                let Value::Object(o) = &self.this else {
                    let cls = self.class.clone();
                    return self.assign_static(code, &cls, name, steps, v);
                };
                let o = o.clone();
                if steps.is_empty() {
                    return self.ex.set_property(&o, name, v, true, Some(self.class));
                }
                let cur = read_for_update(self.ex.get_property(&o, name, true))?;
                if let Some(nv) = self.set_path(code, cur, steps, v)? {
                    self.ex.set_property(&o, name, nv, true, Some(self.class))?;
                }
                Ok(())
            }
        }
    }

    /// Assigns static property `name` of `cls` (or of the ancestor declaring
    /// it), along `steps` into its value.
    fn assign_static(
        &mut self,
        code: &Code,
        cls: &Arc<Class>,
        name: &str,
        steps: &[TargetStep],
        v: Value,
    ) -> Result<()> {
        let nv = if steps.is_empty() {
            Some(v)
        } else {
            let owner = cls.find_prop(name).map_or(&*cls.key, |(c, _)| &*c.key);
            let cur = self.ex.static_get(owner, name).unwrap_or_else(empty_dict);
            self.set_path(code, cur, steps, v)?
        };
        match nv {
            Some(nv) => self.ex.set_static(cls, name, nv),
            None => Ok(()),
        }
    }

    /// Returns the container with the value set along `steps`, or `None`
    /// when the write went into an object (no rebuild needed).
    fn set_path(
        &mut self,
        code: &Code,
        cur: Value,
        steps: &[TargetStep],
        v: Value,
    ) -> Result<Option<Value>> {
        let Some((first, rest)) = steps.split_first() else {
            return Ok(Some(v));
        };
        let key = match first {
            TargetStep::Key(k) => k.clone(),
            TargetStep::Index(id) => {
                let k = self.eval_expr(code, *id)?;
                stdlib::finalize(self.env, k)?
            }
        };
        self.set_at(code, cur, key, rest, v)
    }

    /// [`Activation::set_path`] with the first key computed.
    fn set_at(
        &mut self,
        code: &Code,
        cur: Value,
        key: Value,
        rest: &[TargetStep],
        v: Value,
    ) -> Result<Option<Value>> {
        match cur {
            Value::Object(ref o) => {
                let name = runtime::pyrepr::to_str(&key);
                let inside = matches!(&self.this, Value::Object(t) if t.slot == o.slot);
                if rest.is_empty() {
                    self.ex
                        .set_property(o, &name, v, inside, Some(self.class))?;
                } else {
                    let inner = read_for_update(self.ex.get_property(o, &name, inside))?;
                    if let Some(nv) = self.set_path(code, inner, rest, v)? {
                        self.ex
                            .set_property(o, &name, nv, inside, Some(self.class))?;
                    }
                }
                Ok(None)
            }
            Value::List(ref l) => {
                let Some(i) = key.as_i64().filter(|_| !matches!(key, Value::Bool(_))) else {
                    return Err(not_assignable());
                };
                let n = l.len() as i64;
                if rest.is_empty() {
                    // `src[:i] + (value,) + src[i + 1:]`, with Python's
                    // slice bounds: past the end appends, and a negative
                    // index splices as Python slices it.
                    let clamp = |k: i64| {
                        let k = if k < 0 { (k + n).max(0) } else { k.min(n) };
                        k as usize
                    };
                    let (a, b) = (clamp(i), clamp(i.saturating_add(1)));
                    let mut out: Vec<Value> = l[..a].to_vec();
                    out.push(v);
                    out.extend_from_slice(&l[b..]);
                    return Ok(Some(Value::list(out)));
                }
                let mut items = (**l).clone();
                let ix = if i < 0 { i + n } else { i };
                if ix < 0 || ix >= n {
                    return Err(Error::index("list index out of range"));
                }
                let inner = items[ix as usize].clone();
                match self.set_path(code, inner, rest, v)? {
                    Some(nv) => items[ix as usize] = nv,
                    None => return Ok(None),
                }
                Ok(Some(Value::list(items)))
            }
            Value::Dict(ref d) => {
                let mut d2 = (**d).clone();
                // A missing key reads as an empty dict.
                let inner = d2.get(&key).cloned().unwrap_or_else(empty_dict);
                match self.set_path(code, inner, rest, v)? {
                    Some(nv) => {
                        d2.insert(key, nv);
                    }
                    None => return Ok(None),
                }
                Ok(Some(Value::dict(d2)))
            }
            // An index into a string changes nothing (murano's indexation
            // setter ignores what is neither a list nor a dict).
            Value::Str(_) if rest.is_empty() && key.as_i64().is_some() => Ok(None),
            _ => Err(not_assignable()),
        }
    }
}

fn empty_dict() -> Value {
    Value::dict(Dict::default())
}

/// A property read to assign into it: an uninitialized one reads as an
/// empty dict (murano's attribution getter).
fn read_for_update(r: Result<Value>) -> Result<Value> {
    match r {
        Err(e) if *e.error_kind() == ErrorKind::UninitializedPropertyAccessError => {
            Ok(empty_dict())
        }
        r => r,
    }
}

/// murano's `LhsExpression` refuses to assign into what is neither an
/// object nor a dictionary (a list, by an integer index).
fn not_assignable() -> Error {
    Error::new(
        ErrorKind::ValueError,
        "attribution may only be applied to objects and dictionaries",
    )
}

/// The names an error is known by inside MuranoPL (`Catch: With:`) or, with
/// `qualified` false, as the harness reports them.
pub fn error_names(ex: &Executor, e: &Error, qualified: bool) -> Vec<String> {
    if e.kind() == MURANO_EXCEPTION {
        if let Some(Value::Object(o)) = e.data() {
            if let Ok(Some(Value::List(ref l))) =
                ex.with_obj(o, |s| s.attrs.get(&Value::str("#names")).cloned())
            {
                return l.iter().map(runtime::pyrepr::to_str).collect();
            }
        }
    }
    if qualified {
        vec![crate::executor::qualified_kind(e.kind())]
    } else {
        vec![e.kind().to_string()]
    }
}

/// Runs a method body with its arguments bound.
pub fn run_method(
    ex: &Executor,
    env: &Env,
    class: &Arc<Class>,
    method: &Arc<Method>,
    this: Value,
    vars: Vec<(Arc<str>, Value)>,
) -> Result<Value> {
    let prev = ex.set_caller(Some(class.key.clone()));
    let r = run_method_inner(ex, env, class, method, this, vars);
    ex.set_caller(prev);
    r
}

fn run_method_inner(
    ex: &Executor,
    env: &Env,
    class: &Arc<Class>,
    method: &Arc<Method>,
    this: Value,
    vars: Vec<(Arc<str>, Value)>,
) -> Result<Value> {
    let mut act = Activation {
        ex,
        env,
        class,
        method: method.name.clone(),
        this,
        vars: Vars::Own(vars),
        frame: None,
    };
    let code = method.body.code();
    match act.run(code) {
        Ok(Flow::Return(v)) => Ok(v),
        Ok(Flow::Next) => Ok(Value::Null),
        Err(e) => Err(e.leave_method(class.name.clone(), method.name.clone())),
    }
}

// ---- statement bytecode ---------------------------------------------------

/// Records that `e` left the statement of instruction `pc`: the
/// statement's position joins the MuranoPL trace and, unless the error has
/// a location already (from a statement further in), becomes its location.
fn leaving(e: Error, code: &Code, pc: u32) -> Error {
    let pc = pc as usize;
    e.leave_statement(code.pos[pc].location(), code.texts[pc].clone())
}

/// Completion pending while a `Finally` block runs.
enum Pending {
    Throw(Error),
    Return(Value),
    Jump(u32),
}

struct Run {
    slots: Vec<Slot>,
    caught: Vec<Option<Error>>,
    pending: Vec<(u32, Pending)>,
}

#[derive(Clone)]
enum Slot {
    Empty,
    Items(Vec<Value>, usize),
    Count(i64),
    Value(Value),
    Flag(bool),
}

impl Activation<'_> {
    fn run(&mut self, code: &Code) -> Result<Flow> {
        let mut st = Run {
            slots: vec![Slot::Empty; code.nslots as usize],
            caught: vec![None; code.ntries as usize],
            pending: Vec::new(),
        };
        let mut pc: u32 = 0;
        loop {
            let Some(op) = code.ops.get(pc as usize).copied() else {
                return Ok(Flow::Next);
            };
            if !self.ex.spend_step() {
                let e = Error::new(
                    ErrorKind::ExecutionLimitExceeded,
                    "the execution ran out of its statement budget",
                );
                return Err(leaving(e, code, pc));
            }
            // A statement is a unit of work of the enclosing time budget
            // (a `runtime::budget` scope the caller opened, if any).
            if let Err(e) = runtime::budget::tick() {
                return Err(leaving(e, code, pc));
            }
            match self.step(code, &mut st, pc, op) {
                Ok(Step2::Next) => pc += 1,
                Ok(Step2::Goto(t)) => pc = t,
                Ok(Step2::Return(v)) => return Ok(Flow::Return(v)),
                Err(e) => {
                    let e = leaving(e, code, pc);
                    match find_handler(&code.handlers, pc).copied() {
                        Some(Handler {
                            target,
                            kind: HandlerKind::Catch(t),
                            ..
                        }) => {
                            st.caught[t as usize] = Some(e);
                            pc = target;
                        }
                        Some(Handler {
                            target,
                            kind: HandlerKind::Finally(t),
                            ..
                        }) => {
                            st.pending.push((t, Pending::Throw(e)));
                            pc = target;
                        }
                        None => return Err(e),
                    }
                }
            }
        }
    }

    /// Continues a return or jump from `pc` through the `Finally` blocks it
    /// leaves.
    fn unwind(&self, code: &Code, st: &mut Run, pc: u32, p: Pending) -> Result<Step2> {
        let to = match &p {
            Pending::Jump(t) => Some(*t),
            _ => None,
        };
        if let Some(h) = finally_between(&code.handlers, pc, to) {
            let HandlerKind::Finally(t) = h.kind else {
                unreachable!()
            };
            st.pending.push((t, p));
            return Ok(Step2::Goto(h.target));
        }
        match p {
            Pending::Jump(t) => Ok(Step2::Goto(t)),
            Pending::Return(v) => Ok(Step2::Return(v)),
            Pending::Throw(e) => Err(e),
        }
    }

    fn step(&mut self, code: &Code, st: &mut Run, pc: u32, op: SOp) -> Result<Step2> {
        Ok(match op {
            SOp::Eval { expr } => {
                self.eval(code, expr)?;
                Step2::Next
            }
            SOp::Assign { target, expr } => {
                let v = self.eval(code, expr)?;
                self.assign(code, &code.targets[target as usize], v)?;
                Step2::Next
            }
            SOp::JumpIfNot { cond, to } => {
                if self.eval(code, cond)?.truthy() {
                    Step2::Next
                } else {
                    Step2::Goto(to)
                }
            }
            SOp::Jump { to } => Step2::Goto(to),
            SOp::Leave { to } => return self.unwind(code, st, pc, Pending::Jump(to)),
            SOp::Return { expr } => {
                let v = if expr == NONE {
                    Value::Null
                } else {
                    self.eval(code, expr)?
                };
                return self.unwind(code, st, pc, Pending::Return(v));
            }
            SOp::IterInit { slot, expr } => {
                st.slots[slot as usize] = Slot::Items(self.items(code, expr)?, 0);
                Step2::Next
            }
            SOp::IterNext { slot, var, done } => self.iter_next(code, st, slot, var, done),
            SOp::CountInit { slot, expr } => {
                let n = self.eval(code, expr)?.as_i64().unwrap_or(0);
                st.slots[slot as usize] = Slot::Count(n);
                Step2::Next
            }
            SOp::CountNext { slot, done } => match &mut st.slots[slot as usize] {
                Slot::Count(n) if *n > 0 => {
                    *n -= 1;
                    Step2::Next
                }
                _ => Step2::Goto(done),
            },
            SOp::SetTemp { slot, expr } => {
                st.slots[slot as usize] = Slot::Value(self.eval(code, expr)?);
                Step2::Next
            }
            SOp::JumpIfNe { slot, expr, to } => {
                let k = self.eval(code, expr)?;
                match &st.slots[slot as usize] {
                    Slot::Value(v) if *v == k => Step2::Next,
                    _ => Step2::Goto(to),
                }
            }
            SOp::Flag { slot } => {
                st.slots[slot as usize] = Slot::Flag(true);
                Step2::Next
            }
            SOp::ClearFlag { slot } => {
                st.slots[slot as usize] = Slot::Flag(false);
                Step2::Next
            }
            SOp::JumpIfFlag { slot, to } => match st.slots[slot as usize] {
                Slot::Flag(true) => Step2::Goto(to),
                _ => Step2::Next,
            },
            SOp::Parallel {
                first,
                count,
                limit,
            } => {
                self.parallel(code, first, count, limit)?;
                Step2::Next
            }
            SOp::Catch { try_, clauses } => return self.catch(code, st, try_, clauses),
            SOp::EndCatch { try_ } => {
                st.caught[try_ as usize] = None;
                Step2::Next
            }
            SOp::EndFinally { try_ } => return self.end_finally(code, st, pc, try_),
            SOp::Throw { throw } => return Err(self.throw(code, throw)),
            SOp::Rethrow { try_ } => return Err(rethrow(st, try_)),
            SOp::Invalid { what } => return Err(invalid(what)),
        })
    }

    /// `IterInit`: the items a `For` walks (a dict's keys).
    #[inline]
    fn items(&mut self, code: &Code, expr: u32) -> Result<Vec<Value>> {
        let coll = self.eval(code, expr)?;
        Ok(match &coll {
            Value::Dict(d) => d.keys().cloned().collect(),
            Value::Null => Vec::new(),
            v => runtime::seq::iterate_unlimited(v)?.collect::<Result<_>>()?,
        })
    }

    /// `IterNext`: binds the next item, or leaves the loop.
    #[inline]
    fn iter_next(&mut self, code: &Code, st: &mut Run, slot: u32, var: u32, done: u32) -> Step2 {
        let next = match &mut st.slots[slot as usize] {
            Slot::Items(items, i) => {
                let v = items.get(*i).cloned();
                *i += 1;
                v
            }
            _ => None,
        };
        match next {
            Some(v) => {
                let name = code.names[var as usize].clone();
                self.set_local(&name, v);
                Step2::Next
            }
            None => Step2::Goto(done),
        }
    }

    /// `Parallel`: runs branches `first..first + count` as green threads
    /// (at most `limit` at a time), sharing the method's variables.
    #[inline(never)]
    fn parallel(&mut self, code: &Code, first: u32, count: u32, limit: u32) -> Result<()> {
        let limit = if limit == NONE {
            0
        } else {
            self.eval(code, limit)?.as_i64().unwrap_or(0).max(0) as usize
        };
        let mut tasks: Vec<Box<dyn FnOnce() -> Result<Flow>>> = Vec::new();
        let (shared, own) = self.vars.share();
        self.frame = None;
        for i in first..first + count {
            let sub = code.subs[i as usize].clone();
            let ex = self.ex.arc();
            let env = self.env.clone();
            let class = self.class.clone();
            let method = self.method.clone();
            let this = self.this.clone();
            let vars = Vars::Shared(shared.clone(), u64::MAX, Vec::new());
            tasks.push(Box::new(move || {
                let mut act = Activation {
                    ex: &ex,
                    env: &env,
                    class: &class,
                    method,
                    this,
                    vars,
                    frame: None,
                };
                let prev = ex.set_caller(Some(class.key.clone()));
                let r = act.run(&sub);
                ex.set_caller(prev);
                r
            }));
        }
        let r = self
            .ex
            .run_green(tasks, limit)
            .and_then(|results| self.ex.first_error(results, "Parallel"));
        drop(shared);
        if own {
            self.vars.unshare();
        }
        r.map(drop)
    }

    /// `Catch`: the clause of Try `try_` that catches its error, if any,
    /// with `As` bound; an error no clause catches goes on.
    #[inline(never)]
    fn catch(&mut self, code: &Code, st: &mut Run, try_: u32, clauses: u32) -> Result<Step2> {
        let Some(e) = st.caught[try_ as usize].clone() else {
            return Ok(Step2::Next);
        };
        let names = self.error_names(&e);
        // The clause that catches it, with the first of its names
        // that clause names (`None` for a clause that catches all).
        let hit = code.clauses[clauses as usize].iter().find_map(|c| {
            if c.with.is_empty() {
                return Some((c, None));
            }
            let with: Vec<String> = c.with.iter().map(|w| self.class.resolve(w)).collect();
            names
                .iter()
                .find(|n| with.contains(n))
                .map(|n| (c, Some(n)))
        });
        let Some((c, caught)) = hit else {
            st.caught[try_ as usize] = None;
            return Err(e);
        };
        if let Some(a) = &c.as_ {
            let at = e
                .clone()
                .leave_method(self.class.name.clone(), self.method.clone());
            let obj = self.ex.exception_object(&at, &names)?;
            // The object is named by the name caught.
            if let (Some(n), Value::Object(o)) = (caught, &obj) {
                self.ex.with_obj(o, |s| {
                    s.props.insert(Value::str("name"), Value::str(n.as_str()));
                })?;
            }
            self.set_local(a, obj);
        }
        Ok(Step2::Goto(c.target))
    }

    /// `EndFinally`: what was pending when the `Finally` of Try `try_`
    /// began (an exception, a return, a jump) goes on.
    #[inline(never)]
    fn end_finally(&self, code: &Code, st: &mut Run, pc: u32, try_: u32) -> Result<Step2> {
        match st.pending.last() {
            Some((t, _)) if *t == try_ => {}
            _ => return Ok(Step2::Next),
        }
        match st.pending.pop() {
            // A pending exception continues to the handlers outside
            // this Try.
            Some((_, Pending::Throw(e))) => Err(e),
            Some((_, other)) => self.unwind(code, st, pc, other),
            None => Ok(Step2::Next),
        }
    }

    /// `Throw`: the error carrying a new `io.murano.Exception`.
    #[inline(never)]
    fn throw(&mut self, code: &Code, throw: u32) -> Error {
        match self.exception(code, throw) {
            Ok(e) | Err(e) => e,
        }
    }

    fn exception(&mut self, code: &Code, throw: u32) -> Result<Error> {
        let t = &code.throws[throw as usize];
        let names_v = self.eval_operand(code, &t.names)?;
        let mut names: Vec<String> = match &names_v {
            Value::List(l) => l.iter().map(runtime::pyrepr::to_str).collect(),
            v => vec![runtime::pyrepr::to_str(v)],
        };
        for n in names.iter_mut() {
            *n = self.class.resolve(n);
            // murano's `NamespaceResolver.resolve_name` refuses
            // what is not a type name.
            if !crate::version::valid_full_name(n) {
                return Err(Error::new(
                    ErrorKind::ValueError,
                    format!("Invalid exception name \"{n}\""),
                ));
            }
        }
        let message = match &t.message {
            Some(m) => runtime::pyrepr::to_str(&self.eval_operand(code, m)?),
            None => String::new(),
        };
        let extra = match &t.extra {
            Some(x) => self.eval_operand(code, x)?,
            None => Value::dict(Dict::default()),
        };
        let cause = match &t.cause {
            Some(c) => Some(self.eval_operand(code, c)?),
            None => None,
        };
        Ok(self.ex.throw(names, message, extra, cause))
    }
}

/// `Rethrow`: the error Try `try_` caught.
#[cold]
fn rethrow(st: &Run, try_: u32) -> Error {
    match st.caught[try_ as usize].clone() {
        Some(e) => e,
        None => {
            let op = InvalidOp::Rethrow;
            Error::new(ErrorKind::from_name(op.kind()), op.message())
        }
    }
}

/// `Invalid`: the error of an operation the compiler refused.
#[cold]
fn invalid(what: u32) -> Error {
    let (kind, message) = InvalidOp::from_code(what)
        .map_or(("DslInvalidOperationError", "invalid operation"), |op| {
            (op.kind(), op.message())
        });
    Error::new(ErrorKind::from_name(kind), message)
}

/// What an instruction does next.
enum Step2 {
    Next,
    Goto(u32),
    Return(Value),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::package::Package;

    /// Calls static method `m` of class `T` defined by `src` (file `T.yaml`).
    fn call(src: &str) -> Result<Value> {
        let pkg = Package::new("tests", "0.0.0", "1.4", &[("T.yaml".into(), src.into())]).unwrap();
        let ex = Executor::new(vec![pkg]);
        let class = ex.class("T").unwrap();
        ex.call(
            &Value::Type(class.type_ref.clone()),
            "m",
            vec![],
            vec![],
            true,
        )
        .map(|v| v.unwrap_or(Value::Null))
    }

    const HEAD: &str = "Name: T\nMethods:\n  m:\n    Usage: Static\n    Scope: Public\n    Body:\n";

    /// An error leaving statements gets each one's position in its trace
    /// and the innermost one's as its location.
    #[test]
    fn errors_leaving_statements_carry_their_positions() {
        let src = format!(
            "{HEAD}      - If: true\n        Then:\n          - Throw: boom\n            Message: bad\n"
        );
        let e = call(&src).unwrap_err();
        assert_eq!(e.message(), "bad");
        assert_eq!(e.location().unwrap().to_string(), "T.yaml:9:13");
        assert_eq!(&e.trace()[..2], ["T.yaml:9:13", "T::m"]);

        // Through a call: the callee's statement is the location; the
        // caller's statement follows in the trace.
        let src = format!(
            "{HEAD}      - $x: 1\n      - :T.inner()\n  inner:\n    Usage: Static\n    Body:\n      - Return: 1 / 0\n"
        );
        let e = call(&src).unwrap_err();
        assert_eq!(e.location().unwrap().to_string(), "T.yaml:12:9");
        let trace = e.trace().join(" < ");
        assert!(
            trace.starts_with("T.yaml:12:9 < T::inner < T.yaml:8:9 < T::m"),
            "{trace}"
        );
    }

    /// A body runs the code the compiler emits from the IR: loops,
    /// destinations, Try/Catch/Finally.
    #[test]
    fn bodies_run_the_emitted_code() {
        let src = format!(
            "{HEAD}      - $d: {{}}\n      - For: i\n        In: [1, 2, 3]\n        Do:\n          - If: $i = 3\n            Then: [{{Break: }}]\n          - $d[str($i)].n: $i\n      - Try:\n          - Throw: e\n            Message: oops\n        Catch:\n          - As: ex\n            Do:\n              - $d.caught: $ex.message\n        Finally:\n          - $d.fin: true\n      - Return: $d\n"
        );
        let v = call(&src).unwrap();
        assert_eq!(
            format!("{v:?}"),
            r#"{"1": {"n": 1}, "2": {"n": 2}, "caught": "oops", "fin": true}"#
        );
    }

    /// The statement loop's speed (run with `--release --ignored
    /// --nocapture`): a `While` loop with an assignment, a counted `Repeat`
    /// and a `For`, run a few hundred thousand statements.
    #[test]
    #[ignore]
    fn statement_loop_timing() {
        let src = format!(
            "{HEAD}      - $i: 0\n      - $s: 0\n      - While: $i < 100000\n        Do:\n          - $i: $i + 1\n          - $s: $s + $i\n      - Repeat: 50000\n        Do:\n          - $s: $s - 1\n      - For: x\n        In: range(50000)\n        Do:\n          - If: $x > 10\n            Then: [{{$s: $s + 1}}]\n      - Return: $s\n"
        );
        call(&src).unwrap();
        let mut best = std::time::Duration::MAX;
        for _ in 0..10 {
            let t = std::time::Instant::now();
            call(&src).unwrap();
            best = best.min(t.elapsed());
        }
        eprintln!("statement loop: {best:?} (best of 10)");
    }
}
