//! Method bodies: the engine as host of the statement interpreter.
//!
//! The compiler turns a `Body` node into statement bytecode along one path
//! ([`compiler::murano::emit::compile_body`]: YAML -> IR -> [`Code`]);
//! [`vm::stmt::run`] runs it, owning control flow (jumps, loops, the
//! handler table of `Try`/`Catch`/`Else`/`Finally`, the position an error
//! leaving a statement gets). An activation is its [`vm::stmt::Host`]: it
//! holds the method's variables and the YAQL frame its expressions see,
//! evaluates template operands, assigns through compiled destinations,
//! decides which `Catch` clause catches an error, makes the exception a
//! `Throw` raises, and runs `Parallel` branches as green threads
//! (`vm::coro`).

use runtime::ErrorKind;
use std::sync::{Arc, OnceLock};

use compiler::murano::emit::Code;
use compiler::murano::ir::InvalidOp;
use compiler::Program;
use runtime::ctx::Frame;
use runtime::{Dict, Env, Error, Result, Value};
use vm::stmt::{Clause, ExprId, Operand, Target, TargetRoot, TargetStep, Throw};

use crate::class::{Class, Method};
use crate::code::eval_operand;
pub use crate::code::{Body, CTemplate};
use crate::executor::Executor;
pub use crate::executor::{Scope, MURANO_EXCEPTION};
use crate::trace::{TraceEvent, TraceKind};

// ---- execution -----------------------------------------------------------

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
                let mut items = l.to_vec();
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
    let Some(tracer) = ex.tracer() else {
        return match vm::stmt::run(&mut act, method.body.code()) {
            Ok(v) => Ok(v.unwrap_or(Value::Null)),
            Err(e) => Err(e.leave_method(class.name.clone(), method.name.clone())),
        };
    };
    let pos = &method.decl.pos;
    let at = runtime::Location {
        file: pos.file.clone(),
        line: pos.line,
        col: pos.col,
    };
    let args = match &act.vars {
        Vars::Own(vars) => {
            let d: Dict = (vars.iter())
                .map(|(k, v)| (Value::str(&**k), v.clone()))
                .collect();
            Value::Dict(Arc::new(d))
        }
        _ => Value::Null,
    };
    let event = |kind, value: Option<&Value>, error: Option<&Error>| {
        tracer.event(&TraceEvent {
            kind,
            at: Some(&at),
            thread: vm::coro::current_id(),
            clock: ex.scheduler().now(),
            class: &class.name,
            method: &method.name,
            text: None,
            value,
            error,
            frame: None,
        })
    };
    event(TraceKind::Enter, Some(&args), None);
    match vm::stmt::run(&mut act, method.body.code()) {
        Ok(v) => {
            let v = v.unwrap_or(Value::Null);
            event(TraceKind::Exit, Some(&v), None);
            Ok(v)
        }
        Err(e) => {
            event(TraceKind::Raise, None, Some(&e));
            Err(e.leave_method(class.name.clone(), method.name.clone()))
        }
    }
}

// ---- the statement interpreter's host ----------------------------------

impl vm::stmt::Host for Activation<'_> {
    type Program = Program;

    #[inline]
    fn tick(&mut self) -> Result<()> {
        if !self.ex.spend_step() {
            return Err(Error::new(
                ErrorKind::ExecutionLimitExceeded,
                "the execution ran out of its statement budget",
            ));
        }
        // A statement is a unit of work of the enclosing time budget (a
        // `runtime::budget` scope the caller opened, if any).
        runtime::budget::tick()
    }

    #[inline]
    fn tracing(&self) -> bool {
        self.ex.tracer().is_some()
    }

    fn statement(&mut self, code: &Code, pc: u32) {
        if let Some(t) = self.ex.tracer() {
            let pc = pc as usize;
            let ctx = t.wants_frame().then(|| self.ctx());
            t.event(&TraceEvent {
                kind: TraceKind::Statement,
                at: code.pos.get(pc),
                thread: vm::coro::current_id(),
                clock: self.ex.scheduler().now(),
                class: &self.class.name,
                method: &self.method,
                text: code.texts.get(pc).map(|t| &**t),
                value: None,
                error: None,
                frame: ctx.as_ref().map(|f| (f, self.env)),
            });
        }
    }

    #[inline]
    fn eval(&mut self, code: &Code, o: &Operand) -> Result<Value> {
        self.eval_operand(code, o)
    }

    /// A condition's machine code, when its tier has made it
    /// ([`compiler::jit::Tier`] through [`compiler::Program::native`]),
    /// decides with `$` and the variables it reads; anything it cannot
    /// decide (an object, a missing key, a kind it has no code for) goes
    /// to the interpreter.
    fn cond(&mut self, code: &Code, o: &Operand) -> Result<bool> {
        if let Operand::Expr(id) = o {
            let opts = self.env.options();
            if !opts.legacy {
                if let Some(p) = code.program(*id).truth(opts.jit) {
                    let ctx = self.ctx();
                    let objects = CondObjects {
                        ex: self.ex,
                        ctx: &ctx,
                    };
                    let var = &mut |n: &str| Some(ctx.var(n));
                    if let Some(b) = p.eval_in(Some(&objects), &ctx.arg(1), var) {
                        return Ok(b);
                    }
                }
            }
        }
        Ok(self.eval_operand(code, o)?.truthy())
    }

    fn assign(&mut self, code: &Code, t: &Target, v: Value) -> Result<()> {
        Activation::assign(self, code, t, v)
    }

    #[inline]
    fn bind(&mut self, name: &Arc<str>, v: Value) {
        self.set_local(name, v);
    }

    /// `Parallel`: the branches as green threads sharing the method's
    /// variables.
    #[inline(never)]
    fn parallel(&mut self, branches: &[Arc<Code>], limit: usize) -> Result<()> {
        let mut tasks: Vec<Box<dyn FnOnce() -> Result<Option<Value>>>> = Vec::new();
        let (shared, own) = self.vars.share();
        self.frame = None;
        for sub in branches {
            let sub = sub.clone();
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
                let r = vm::stmt::run(&mut act, &sub);
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

    /// `Catch`: the clause that catches `e` (its `With` names resolved in
    /// the class's namespaces), with `As` bound to the exception object.
    #[inline(never)]
    fn catch(&mut self, e: &Error, clauses: &[Clause]) -> Result<Option<u32>> {
        let names = self.error_names(e);
        // The clause that catches it, with the first of its names that
        // clause names (`None` for a clause that catches all).
        let hit = clauses.iter().find_map(|c| {
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
            return Ok(None);
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
        Ok(Some(c.target))
    }

    /// `Throw`: the error carrying a new `io.murano.Exception`.
    #[inline(never)]
    fn throw(&mut self, code: &Code, t: &Throw) -> Error {
        match self.exception(code, t) {
            Ok(e) | Err(e) => e,
        }
    }

    /// `Invalid`: the error of an operation the compiler refused.
    #[cold]
    fn invalid(&self, what: u32) -> Error {
        let (kind, message) = InvalidOp::from_code(what)
            .map_or(("DslInvalidOperationError", "invalid operation"), |op| {
                (op.kind(), op.message())
            });
        Error::new(ErrorKind::from_name(kind), message)
    }
}

impl Activation<'_> {
    fn exception(&mut self, code: &Code, t: &Throw) -> Result<Error> {
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

/// What a method's compiled conditions read objects through: the
/// executor and the frame the condition runs in, read exactly as the
/// interpreter reads `obj.name` and `obj.getAttr(name)` there.
struct CondObjects<'a> {
    ex: &'a Executor,
    ctx: &'a Arc<Frame>,
}

impl compiler::jit::Objects for CondObjects<'_> {
    fn property(&self, obj: &Value, name: &str) -> Option<Value> {
        let Value::Object(o) = obj else { return None };
        let inside = crate::funcs::reads_inside(self.ctx, o, || Some(self.ex.arc()));
        self.ex.get_property(o, name, inside).ok()
    }

    fn attr(&self, obj: &Value, name: &str) -> Option<Option<Value>> {
        let Value::Object(o) = obj else { return None };
        // A class's own `getAttr` method is the interpreter's to call.
        if self.ex.class_of(o).ok()?.find_method("getAttr").is_some() {
            return None;
        }
        let owner = crate::funcs::caller_name(self.ex, self.ctx);
        let key = crate::executor::attr_slot(&owner, &Value::str(name));
        crate::funcs::stored_attr(self.ex, o, &key).ok()
    }
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
