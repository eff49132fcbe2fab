//! Contracts: property and argument templates compiled once per class into
//! checkers that coerce as the reference does (`int()`, `string()`,
//! `bool()`, `notNull()`, `check()`, `class()`, `template()`, `owned()`,
//! `notOwned()`, list and dict forms).

use runtime::ErrorKind;
use std::sync::Arc;

use compiler::jit::{self, Native};
use compiler::murano::ir::{self, ContractKind, LinkKind, Yaql};
use compiler::murano::{LoadOptions, Template};
use compiler::yaql::ast::{ExprKind, Lit};
use compiler::{CompileOptions, Program};
use runtime::ctx::Frame;
use runtime::registry::{lazy, p, Args, Cx, Registry, Ty};
use runtime::value::ObjRef;
use runtime::{Dict, Env, Error, Result, Value};

use crate::executor::{Executor, ExecutorOf, Scope};

/// A compiled contract: the checker built from the contract's IR
/// ([`compiler::murano::ir::lower_contract`]).
#[derive(Clone)]
pub struct Contract {
    check: Check,
    /// The IR's decision: the value stays an object definition.
    template: bool,
    /// What checking a value needs besides the value.
    reach: Reach,
    /// The function and method names its expressions call.
    names: Arc<[Arc<str>]>,
}

/// What a contract needs besides the value it checks, decided from its IR.
/// Streaming validation ([`crate::stream`]) checks objects apart from the
/// model they belong to, so it takes only contracts that need no more than
/// the value and the classes of the objects it names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Reach {
    /// The value alone: coercions, and predicates over `$` that call the
    /// YAQL library only.
    Value,
    /// The value and the classes of the objects it names: `class()` first,
    /// then only `notNull()`.
    Classes,
    /// Anything else (`$this`, engine functions, `template()`, `owned()`,
    /// other methods).
    Execution,
}

/// A checker node.
#[derive(Clone)]
enum Check {
    /// `$` or no contract: anything.
    Any,
    /// A contract expression other than a plain chain, evaluated whole
    /// with `$` the value; with its position.
    Expr(Arc<Program>, Arc<str>),
    /// A chain of the plain coercions (`$.int().notNull().check($ > 0)`),
    /// run step by step without YAQL dispatch; `whole` is the chain as one
    /// program, for values a MuranoPL method could intercept (objects,
    /// extension methods of those names).
    Chain {
        /// The coercions, from `$` outwards.
        steps: Vec<Step>,
        /// The whole chain.
        whole: Arc<Program>,
        /// Its position.
        pos: Arc<str>,
        /// Its machine code, once compiled.
        tier: Arc<Tier>,
    },
    /// A constant: the value itself is used.
    Const(Value),
    /// `[c]`, `[c, min]`, `[c, min, max]`, `[c0, c1, ...]`: item `i`
    /// checked by contract `i`, or the last one past the end.
    List(Vec<Check>, i64, Option<i64>),
    /// `{key: c, $.keyContract(): c}`.
    Dict(Vec<(DictKey, Check)>),
}

/// One step of a [`Check::Chain`].
#[derive(Clone)]
enum Step {
    Int,
    String,
    Bool,
    NotNull,
    /// `check(predicate)`: the predicate compiled alone, `$` the value.
    Check(Arc<Program>),
    /// `class(Name)`: the name as written, and as resolved in the
    /// namespaces of the class the contract belongs to (the same for every
    /// check, so resolved once).
    Class(Value, std::sync::OnceLock<String>),
}

impl Step {
    /// The step as the JIT takes it (`class()` it does not).
    fn jit(&self) -> Option<jit::Step<'_>> {
        Some(match self {
            Step::Int => jit::Step::Int,
            Step::String => jit::Step::String,
            Step::Bool => jit::Step::Bool,
            Step::NotNull => jit::Step::NotNull,
            Step::Check(p) => jit::Step::Check(p.ir()),
            Step::Class(..) => return None,
        })
    }

    /// The contract method the step stands for.
    fn method(&self) -> &'static str {
        match self {
            Step::Int => "int",
            Step::String => "string",
            Step::Bool => "bool",
            Step::NotNull => "notNull",
            Step::Check(_) => "check",
            Step::Class(..) => "class",
        }
    }
}

/// The Cranelift tier of a chain ([`compiler::jit`]): compiled as the
/// class is ([`jit::Mode::Always`]) or once the chain has been used
/// [`jit::Mode::HOT`] times ([`jit::Mode::Auto`]); none when the chain has
/// a step or predicate the JIT does not compile.
type Tier = jit::Tier<Native>;

/// The machine code of a chain's steps.
fn native_of(steps: &[Step]) -> Option<Native> {
    let steps: Option<Vec<_>> = steps.iter().map(Step::jit).collect();
    Native::compile(&steps?).ok()
}

/// A key of a dict contract.
#[derive(Clone)]
enum DictKey {
    /// A fixed key.
    Const(Value),
    /// A key contract (applies to undeclared keys).
    Expr(Check),
}

fn violation(msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::ContractViolationException, msg)
}

impl Contract {
    /// Compiles a contract template: lowers it to the IR, compiling each
    /// expression as it is made (errors are `DslContractSyntaxError`s), and
    /// builds the checker from the IR's forms. With [`jit::Mode::Always`]
    /// its chains are compiled to machine code now.
    pub fn compile(
        t: &Template,
        reg: &Registry,
        opts: CompileOptions,
        mode: jit::Mode,
    ) -> Result<Contract> {
        let mut programs = Vec::new();
        let lopts = LoadOptions {
            legacy: opts.legacy,
        };
        let c = ir::lower_contract_with(t, lopts, &mut |y: &Yaql| {
            programs.push(Arc::new(y.compile(reg, opts)?));
            Ok(())
        })?;
        let compile_part = |y: &Yaql, part: &compiler::yaql::ast::Expr| {
            compiler::compile_parsed(&y.src, part, reg, opts)
                .ok()
                .map(Arc::new)
        };
        let mut names = Vec::new();
        let check = Check::of(&c, &programs, &compile_part);
        if mode == jit::Mode::Always {
            check.compile_chains();
        }
        Ok(Contract {
            check,
            template: c.is_template(),
            reach: reach(&c, reg, &mut names),
            names: names.into(),
        })
    }

    /// What checking a value needs besides the value.
    pub fn reach(&self) -> Reach {
        self.reach
    }

    /// The function and method names the contract's expressions call
    /// (extension methods of these names could intercept them).
    pub fn names(&self) -> &[Arc<str>] {
        &self.names
    }

    /// True for a `template()` contract (its value stays an object
    /// definition, not an object), as the IR decides it
    /// ([`ir::Contract::is_template`]).
    pub fn is_template(&self) -> bool {
        self.template
    }

    /// True when the contract's machine code alone shows that `v` meets it
    /// (false: check it with [`Contract::check`] to know).
    pub fn holds(&self, ex: &Executor, v: &Value) -> bool {
        self.check.holds(ex, v)
    }

    /// Checks and coerces `v`. `owner` is the object the value belongs to
    /// (for `class()`, `owned()`); `name` names the property or argument.
    pub fn check(
        &self,
        ex: &Executor,
        env: &Env,
        ctx: &Arc<Frame>,
        v: Value,
        owner: Option<&Arc<ObjRef>>,
        name: &str,
    ) -> Result<Value> {
        self.check
            .check_at(ex, env, ctx, v, owner, At::Top)
            .map_err(|e| {
                if *e.error_kind() == ErrorKind::ContractViolationException
                    && !e.message().starts_with('[')
                {
                    Error::new(
                        ErrorKind::ContractViolationException,
                        format!("[{name}] {}", e.message()),
                    )
                } else {
                    e
                }
            })
    }
}

impl Check {
    /// The checker of an IR contract whose expression `ExprId(i)` compiled
    /// to `programs[i]`; `compile_part` compiles a part of an expression
    /// (a `check()` predicate) on its own.
    fn of(c: &ir::Contract, programs: &[Arc<Program>], compile_part: &CompilePart) -> Check {
        let pos = || -> Arc<str> { c.pos.to_string().into() };
        match &c.kind {
            ContractKind::Any => Check::Any,
            ContractKind::Const(v) => Check::Const(v.clone()),
            ContractKind::Chain { expr, links } => {
                let whole = programs[expr.id.index()].clone();
                match Check::steps(expr, links, compile_part) {
                    Some(steps) => Check::Chain {
                        steps,
                        whole,
                        pos: pos(),
                        tier: Default::default(),
                    },
                    None => Check::Expr(whole, pos()),
                }
            }
            ContractKind::Expr(expr) => Check::Expr(programs[expr.id.index()].clone(), pos()),
            ContractKind::List { items, min, max } => Check::List(
                items
                    .iter()
                    .map(|c| Check::of(c, programs, compile_part))
                    .collect(),
                *min,
                *max,
            ),
            ContractKind::Dict(items) => Check::Dict(
                items
                    .iter()
                    .map(|(k, v)| {
                        let k = match k {
                            ir::DictKey::Const(Value::Str(k)) => {
                                DictKey::Const(Value::Str(runtime::value::intern(k)))
                            }
                            ir::DictKey::Const(k) => DictKey::Const(k.clone()),
                            ir::DictKey::Contract(k) => {
                                DictKey::Expr(Check::of(k, programs, compile_part))
                            }
                        };
                        (k, Check::of(v, programs, compile_part))
                    })
                    .collect(),
            ),
        }
    }

    /// The steps of a chain of plain coercions (`check()` without a
    /// message); `None` when a link is anything else.
    fn steps(expr: &Yaql, links: &[ir::Link], compile_part: &CompilePart) -> Option<Vec<Step>> {
        links
            .iter()
            .map(|l| match &l.kind {
                LinkKind::Int => Some(Step::Int),
                LinkKind::String => Some(Step::String),
                LinkKind::Bool => Some(Step::Bool),
                LinkKind::NotNull => Some(Step::NotNull),
                LinkKind::Class {
                    name,
                    default: None,
                } => match &name.kind {
                    ExprKind::Keyword(k) | ExprKind::Lit(Lit::Str(k)) => {
                        Some(Step::Class(Value::str(k), Default::default()))
                    }
                    _ => None,
                },
                LinkKind::Check {
                    predicate,
                    message: None,
                } => compile_part(expr, predicate).map(Step::Check),
                _ => None,
            })
            .collect()
    }

    fn check_at(
        &self,
        ex: &Executor,
        env: &Env,
        ctx: &Arc<Frame>,
        v: Value,
        owner: Option<&Arc<ObjRef>>,
        path: At<'_>,
    ) -> Result<Value> {
        match self {
            Check::Any => Ok(v),
            Check::Const(c) => {
                let _ = ex;
                if v.is_null() || v == *c {
                    Ok(c.clone())
                } else {
                    Err(violation(format!(
                        "{}{} is not equal to {}",
                        path.render(),
                        runtime::pyrepr::repr(&v),
                        runtime::pyrepr::repr(c)
                    )))
                }
            }
            Check::Expr(p, pos) => {
                let r = p.eval_in(env, &value_frame(ctx, v, owner));
                at_contract(r.and_then(|r| stdlib::finalize(env, r)), path, pos)
            }
            Check::Chain {
                steps,
                whole,
                pos,
                tier,
            } => {
                let intercepted = intercepted(ex, steps, &v);
                if !intercepted
                    && tier
                        .get(ex.catalog().jit(), || native_of(steps))
                        .is_some_and(|n| n.passes(&v))
                {
                    return Ok(v);
                }
                let r = if intercepted {
                    whole.eval_in(env, &value_frame(ctx, v, owner))
                } else {
                    run_steps(steps, env, ctx, v, owner)
                };
                at_contract(r.and_then(|r| stdlib::finalize(env, r)), path, pos)
            }
            Check::List(cs, min, max) => {
                if let (Value::List(l), Some(q)) = (&v, quick_list(cs, ex)) {
                    if length_error(l.len(), *min, *max).is_none() {
                        return cs[0].check_items(ex, env, ctx, l, q, owner, path);
                    }
                }
                let owned: Vec<Value>;
                let items: &[Value] = match &v {
                    Value::Null => &[],
                    Value::List(l) => l,
                    Value::Set(s) => {
                        owned = s.iter().cloned().collect();
                        &owned
                    }
                    Value::Iter(_) => {
                        owned = runtime::seq::iterate_unlimited(&v)?.collect::<Result<_>>()?;
                        &owned
                    }
                    Value::Dict(_) => {
                        return Err(violation(format!(
                            "{}: value {} is not a list",
                            path.render(),
                            runtime::pyrepr::repr(&v)
                        )))
                    }
                    other => std::slice::from_ref(other),
                };
                if let Some(e) = length_error(items.len(), *min, *max) {
                    return Err(violation(match path {
                        At::Top => e,
                        p => format!("{}: {e}", p.render()),
                    }));
                }
                let mut out = Vec::with_capacity(items.len());
                for (i, it) in items.iter().enumerate() {
                    let c = item_contract(cs, i);
                    out.push(c.check_at(ex, env, ctx, it.clone(), owner, At::Index(&path, i))?);
                }
                Ok(Value::list(out))
            }
            Check::Dict(items) => {
                // murano's `Contract._map_dict` (murano/dsl/contracts/
                // contracts.py): null is an empty dict; the constant keys
                // in order, then the one expression key over the other
                // keys of the value; a second expression key is a syntax
                // error of the contract.
                let d = match v {
                    Value::Null => Dict::default(),
                    Value::Dict(ref d) if items.is_empty() => return Ok(Value::Dict(d.clone())),
                    Value::Dict(ref d) => (**d).clone(),
                    other => {
                        let at = match path {
                            At::Top => String::new(),
                            p => format!("{}: ", p.render()),
                        };
                        return Err(violation(format!(
                            "{at}Value {} is not of a dictionary type",
                            fmt_scalar(&other)
                        )));
                    }
                };
                if items.is_empty() {
                    return Ok(Value::dict(d));
                }
                let mut out = Dict::default();
                let mut expr_key = None;
                for (k, c) in items {
                    match k {
                        DictKey::Const(key) => {
                            let x = d.get(key).cloned().unwrap_or(Value::Null);
                            let p = At::Key(&path, key);
                            out.insert(key.clone(), c.check_at(ex, env, ctx, x, owner, p)?);
                        }
                        DictKey::Expr(_) if expr_key.is_some() => {
                            return Err(Error::new(
                                ErrorKind::DslContractSyntaxError,
                                "Dictionary contract cannot have more than one expression key",
                            ));
                        }
                        DictKey::Expr(kc) => expr_key = Some((kc, c)),
                    }
                }
                if let Some((kc, c)) = expr_key {
                    for (rk, rv) in d.iter() {
                        if out.contains_key(rk) {
                            continue;
                        }
                        let p = At::Key(&path, rk);
                        let nk = kc.check_at(ex, env, ctx, rk.clone(), owner, p)?;
                        let nv = c.check_at(ex, env, ctx, rv.clone(), owner, p)?;
                        out.insert(nk, nv);
                    }
                }
                Ok(Value::dict(out))
            }
        }
    }
}

/// The contract of item `i` of a list: by position, the last one past the
/// end (murano's `Contract._map_list`, murano/dsl/contracts/contracts.py).
fn item_contract(cs: &[Check], i: usize) -> &Check {
    &cs[i.min(cs.len() - 1)]
}

/// The quick way to pass the items of a list with item contracts `cs`:
/// only one contract for every item has one.
fn quick_list<'a>(cs: &'a [Check], ex: &'a Executor) -> Option<Quick<'a>> {
    match cs {
        [c] => c.quick_items(ex),
        _ => None,
    }
}

/// The violation a list of `len` items is for bounds `min..=max`, in
/// murano's words (`Contract._map_list`): a negative bound bounds nothing.
fn length_error(len: usize, min: i64, max: Option<i64>) -> Option<String> {
    let len_i = i64::try_from(len).unwrap_or(i64::MAX);
    match max {
        Some(m) if m >= 0 && !(min <= len_i && len_i <= m) => Some(format!(
            "Array length {len} is not within [{min}..{m}] range"
        )),
        _ if len_i < min => Some(format!("Array length {len} must not be less than {min}")),
        _ => None,
    }
}

/// A quick way to pass a list's items (see [`Check::quick_items`]).
#[derive(Clone, Copy)]
enum Quick<'a> {
    /// The item chain's machine code.
    Native(&'a Native),
    /// A chain of `class()` and `notNull()` over ids of a streamed model:
    /// an id passes when the index knows it and its class is the one the
    /// contract wants (once the interpreter has resolved that name).
    Ids(&'a [Step], &'a crate::executor::Index),
}

impl Quick<'_> {
    /// The index of the first item not shown to pass unchanged.
    fn first_failing(self, items: &[Value]) -> usize {
        match self {
            Quick::Native(n) => n.first_failing(items),
            Quick::Ids(steps, index) => items
                .iter()
                .position(|x| !id_passes(steps, index, x))
                .unwrap_or(items.len()),
        }
    }
}

/// True when `v` is the id of an object of the streamed model whose class
/// every `class()` step wants.
fn id_passes(steps: &[Step], index: &crate::executor::Index, v: &Value) -> bool {
    let Value::Str(id) = v else {
        return false;
    };
    let Some(class) = index.class_of(id) else {
        return false;
    };
    steps.iter().all(|s| match s {
        Step::NotNull => true,
        Step::Class(_, resolved) => resolved.get().is_some_and(|want| class.is_a(want)),
        _ => false,
    })
}

/// True when the value or an extension method could intercept a chain's
/// methods: the whole chain then runs as YAQL.
fn intercepted(ex: &Executor, steps: &[Step], v: &Value) -> bool {
    matches!(v, Value::Object(_) | Value::Type(_))
        || steps
            .iter()
            .any(|s| ex.catalog().declares_extension(s.method()))
}

impl Check {
    /// What passes a list's items quickly, when this is an item contract
    /// with machine code by now, or a `class()` chain over the ids of a
    /// streamed model (and no extension method intercepts it).
    fn quick_items<'a>(&'a self, ex: &'a Executor) -> Option<Quick<'a>> {
        let Check::Chain { steps, tier, .. } = self else {
            return None;
        };
        if intercepted(ex, steps, &Value::Null) {
            return None;
        }
        if let Some(n) = tier.get(ex.catalog().jit(), || native_of(steps)) {
            return Some(Quick::Native(n));
        }
        let classes_only = steps
            .iter()
            .all(|s| matches!(s, Step::Class(..) | Step::NotNull));
        match ex.foreign() {
            Some(index) if classes_only => Some(Quick::Ids(steps, index)),
            _ => None,
        }
    }

    /// Checks the items of `l` with `quick`: the items it passes stay as
    /// they are; from the first it cannot pass, the interpreter checks
    /// that one item (coercing it or reporting the violation) and `quick`
    /// goes on after it. The list itself is returned when nothing changed.
    fn check_items(
        &self,
        ex: &Executor,
        env: &Env,
        ctx: &Arc<Frame>,
        l: &Arc<Vec<Value>>,
        quick: Quick<'_>,
        owner: Option<&Arc<ObjRef>>,
        path: At<'_>,
    ) -> Result<Value> {
        let mut out: Option<Vec<Value>> = None;
        let mut i = 0;
        while i < l.len() {
            let stop = i + quick.first_failing(&l[i..]);
            if let Some(o) = &mut out {
                o.extend_from_slice(&l[i..stop]);
            }
            if stop == l.len() {
                break;
            }
            let got =
                self.check_at(ex, env, ctx, l[stop].clone(), owner, At::Index(&path, stop))?;
            out.get_or_insert_with(|| l[..stop].to_vec()).push(got);
            i = stop + 1;
        }
        Ok(out.map_or_else(|| Value::List(l.clone()), Value::list))
    }

    /// True when the compiled code alone shows that `v` meets the
    /// contract (what validation needs: no violation, whatever the
    /// coerced value); false means "ask [`Check::check_at`]", not
    /// "violates".
    fn holds(&self, ex: &Executor, v: &Value) -> bool {
        match self {
            Check::Any => true,
            Check::Const(c) => v.is_null() || v == c,
            Check::Expr(..) => false,
            Check::Chain { steps, tier, .. } => {
                !intercepted(ex, steps, v)
                    && tier
                        .get(ex.catalog().jit(), || native_of(steps))
                        .is_some_and(|n| n.passes(v))
            }
            Check::List(cs, min, max) => {
                let items: &[Value] = match v {
                    Value::Null => &[],
                    Value::List(l) => l,
                    _ => return false,
                };
                if length_error(items.len(), *min, *max).is_some() {
                    return false;
                }
                match quick_list(cs, ex) {
                    Some(q) => q.first_failing(items) == items.len(),
                    None => items
                        .iter()
                        .enumerate()
                        .all(|(i, x)| item_contract(cs, i).holds(ex, x)),
                }
            }
            Check::Dict(items) => {
                let empty;
                let d = match v {
                    Value::Null => {
                        empty = Dict::default();
                        &empty
                    }
                    Value::Dict(d) => d,
                    _ => return false,
                };
                // Two expression keys are an error only checking reports.
                let exprs = items.iter().filter(|(k, _)| matches!(k, DictKey::Expr(_)));
                if exprs.count() > 1 {
                    return false;
                }
                items.iter().all(|(k, c)| match k {
                    DictKey::Const(key) => c.holds(
                        ex,
                        runtime::value::get_interned(d, key).unwrap_or(&runtime::value::NULL),
                    ),
                    DictKey::Expr(kc) => d.iter().all(|(rk, rv)| {
                        items
                            .iter()
                            .any(|(dk, _)| matches!(dk, DictKey::Const(c) if c == rk))
                            || (kc.holds(ex, rk) && c.holds(ex, rv))
                    }),
                })
            }
        }
    }

    /// Compiles every chain of the contract to machine code now.
    fn compile_chains(&self) {
        match self {
            Check::Chain { steps, tier, .. } => {
                tier.now(|| native_of(steps));
            }
            Check::List(cs, ..) => cs.iter().for_each(Check::compile_chains),
            Check::Dict(items) => {
                for (k, c) in items {
                    if let DictKey::Expr(kc) = k {
                        kc.compile_chains();
                    }
                    c.compile_chains();
                }
            }
            Check::Any | Check::Const(_) | Check::Expr(..) => {}
        }
    }
}

/// The reach of an IR contract; collects the names its expressions call.
fn reach(c: &ir::Contract, reg: &Registry, names: &mut Vec<Arc<str>>) -> Reach {
    match &c.kind {
        ContractKind::Any | ContractKind::Const(_) => Reach::Value,
        ContractKind::List { items, .. } => items
            .iter()
            .map(|c| reach(c, reg, names))
            .max()
            .unwrap_or(Reach::Value),
        ContractKind::Dict(items) => items
            .iter()
            .map(|(k, v)| {
                let k = match k {
                    ir::DictKey::Const(_) => Reach::Value,
                    ir::DictKey::Contract(k) => reach(k, reg, names),
                };
                k.max(reach(v, reg, names))
            })
            .max()
            .unwrap_or(Reach::Value),
        ContractKind::Chain { links, .. } => chain_reach(links, reg, names),
        ContractKind::Expr(y) => {
            if value_only(&y.ast, reg, names) {
                Reach::Value
            } else {
                Reach::Execution
            }
        }
    }
}

fn chain_reach(links: &[ir::Link], reg: &Registry, names: &mut Vec<Arc<str>>) -> Reach {
    for l in links {
        names.push(l.kind.method().into());
    }
    let local =
        |e: &compiler::yaql::ast::Expr, names: &mut Vec<Arc<str>>| value_only(e, reg, names);
    if let Some((first, rest)) = links.split_first() {
        if let LinkKind::Class { name, default } = &first.kind {
            let plain = local(name, names)
                && default.as_ref().is_none_or(|d| local(d, names))
                && rest.iter().all(|l| l.kind == LinkKind::NotNull);
            return if plain {
                Reach::Classes
            } else {
                Reach::Execution
            };
        }
    }
    let value = links.iter().all(|l| match &l.kind {
        LinkKind::Int | LinkKind::String | LinkKind::Bool | LinkKind::NotNull => true,
        LinkKind::Check { predicate, message } => {
            local(predicate, names) && message.as_ref().is_none_or(|m| local(m, names))
        }
        _ => false,
    });
    if value {
        Reach::Value
    } else {
        Reach::Execution
    }
}

/// True when `e` reads only `$` and calls only the YAQL library (no engine
/// or contract function); collects the names it calls.
fn value_only(e: &compiler::yaql::ast::Expr, reg: &Registry, names: &mut Vec<Arc<str>>) -> bool {
    use compiler::yaql::ast::{Arg, ExprKind as K};
    let call = |name: &str, names: &mut Vec<Arc<str>>| {
        names.push(name.into());
        reg.get(name).is_none_or(|set| {
            set.overloads
                .iter()
                .all(|o| !o.id.starts_with("murano.") && !o.id.starts_with("contracts."))
        })
    };
    let args = |a: &[Arg], names: &mut Vec<Arc<str>>| {
        a.iter().all(|a| match a {
            Arg::Pos(x) | Arg::Named(_, x) => value_only(x, reg, names),
            Arg::Mapping(k, x) => value_only(k, reg, names) && value_only(x, reg, names),
            Arg::Skip => true,
        })
    };
    match &e.kind {
        K::Lit(_) | K::Keyword(_) | K::NsName(..) => true,
        K::Var(v) => v.is_empty(),
        K::Call(name, a) => call(name, names) && args(a, names),
        K::Method(recv, name, a) => {
            call(name, names) && value_only(recv, reg, names) && args(a, names)
        }
        K::Op(name, xs) => call(name, names) && xs.iter().all(|x| value_only(x, reg, names)),
        K::Attr(recv, _) => value_only(recv, reg, names),
        K::Dot(a, b) | K::SafeDot(a, b) => value_only(a, reg, names) && value_only(b, reg, names),
        K::Index(recv, a) => value_only(recv, reg, names) && args(a, names),
        K::List(a) | K::Map(a) => args(a, names),
        K::Delegate(..) => false,
    }
}

/// A closure compiling part of a contract expression on its own.
type CompilePart<'a> = dyn Fn(&Yaql, &compiler::yaql::ast::Expr) -> Option<Arc<Program>> + 'a;

/// The frame a contract expression runs in: `$` the value, the owner in
/// its scope.
fn value_frame(ctx: &Arc<Frame>, v: Value, owner: Option<&Arc<ObjRef>>) -> Arc<Frame> {
    let mut f = Frame::child(ctx, &[v]);
    if let Some(o) = owner {
        f.scope = Some(
            Scope {
                owner: Some(o.clone()),
                ..Scope::default()
            }
            .into_frame_scope(),
        );
    }
    Arc::new(f)
}

/// A place inside a checked value, spelled out only for a violation.
#[derive(Clone, Copy)]
enum At<'a> {
    /// The value itself.
    Top,
    /// An item of a list at a place.
    Index(&'a At<'a>, usize),
    /// A dict entry at a place.
    Key(&'a At<'a>, &'a Value),
}

impl At<'_> {
    /// `[0].name`: empty for the value itself.
    fn render(&self) -> String {
        match self {
            At::Top => String::new(),
            At::Index(p, i) => format!("{}[{i}]", p.render()),
            At::Key(p, k) => format!("{}.{}", p.render(), runtime::pyrepr::to_str(k)),
        }
    }
}

/// A violation names the path inside the value and the contract's place.
fn at_contract(r: Result<Value>, path: At<'_>, pos: &str) -> Result<Value> {
    r.map_err(|e| {
        if *e.error_kind() != ErrorKind::ContractViolationException {
            return e;
        }
        let at = match path {
            At::Top => String::new(),
            p => format!("{}: ", p.render()),
        };
        violation(format!("{at}{} (contract at {pos})", e.message()))
    })
}

/// Runs a chain's steps on `v` as the contract methods would.
fn run_steps(
    steps: &[Step],
    env: &Env,
    ctx: &Arc<Frame>,
    mut v: Value,
    owner: Option<&Arc<ObjRef>>,
) -> Result<Value> {
    for s in steps {
        v = match s {
            Step::Int => coerce_int(&v)?,
            Step::String => coerce_string(&v)?,
            Step::Bool => coerce_bool(&v)?,
            Step::NotNull => not_null(v)?,
            Step::Check(p) => {
                // The predicate's machine code decides most values
                // (a violation included) without a context.
                let native = p.native(env.options().jit).and_then(|n| n.eval(&v));
                let ok = match native {
                    Some(ok) => ok,
                    None => p
                        .eval_in(env, &value_frame(ctx, v.clone(), owner))?
                        .truthy(),
                };
                check_result(v, ok, &Value::Null)?
            }
            // A definition becomes an object owned as the whole chain's
            // context would say.
            Step::Class(name, resolved) => {
                let ex = Cx { env, ctx }.executor()?;
                let want = match resolved.get() {
                    Some(w) => w,
                    None => {
                        let w = crate::executor::resolve_class_name(&Cx { env, ctx }, &ex, name)?;
                        resolved.get_or_init(|| w)
                    }
                };
                let f;
                let ctx = if matches!(v, Value::Dict(_)) {
                    f = value_frame(ctx, v.clone(), owner);
                    &f
                } else {
                    ctx
                };
                class_check(&Cx { env, ctx }, &ex, v, want, &Value::Null)?
            }
        };
    }
    Ok(v)
}

/// The owner an object that a `class()` contract creates from a definition
/// gets: the object whose property is checked; none for a method argument
/// (`Executor::invoke` marks argument checks with [`Scope::args`]).
fn new_object_owner(ctx: &Arc<Frame>) -> Option<Arc<ObjRef>> {
    if Scope::find(ctx, |s| s.args).unwrap_or(false) {
        return None;
    }
    Scope::find(ctx, |s| s.owner.clone())
}

/// A value in a violation, as murano's `helpers.format_scalar` prints it
/// (a string quoted, anything else as Python's `str()`: `None`, `True`).
fn fmt_scalar(v: &Value) -> String {
    match v {
        Value::Str(s) => format!("'{s}'"),
        other => runtime::pyrepr::repr(other),
    }
}

/// `$.int()`.
fn c_int(_: &Cx, a: Args) -> Result<Value> {
    coerce_int(a.get(0))
}

fn coerce_int(v: &Value) -> Result<Value> {
    match v {
        Value::Null => Ok(Value::Null),
        Value::Int(_) | Value::BigInt(_) => Ok(v.clone()),
        Value::Bool(b) => Ok(Value::Int(*b as i64)),
        Value::Float(f) if f.is_finite() => Ok(Value::Int(f.trunc() as i64)),
        Value::Str(s) => s
            .trim()
            .parse::<i64>()
            .map(Value::Int)
            .map_err(|_| violation(format!("Value {} violates int() contract", fmt_scalar(v)))),
        _ => Err(violation(format!(
            "Value {} violates int() contract",
            fmt_scalar(v)
        ))),
    }
}

/// `$.string()`.
fn c_string(_: &Cx, a: Args) -> Result<Value> {
    coerce_string(a.get(0))
}

/// As murano's `String.transform` (murano/dsl/contracts/basic.py):
/// strings stay, integers (booleans are integers to Python) are printed,
/// an object becomes its id; anything else (a float included) violates.
fn coerce_string(v: &Value) -> Result<Value> {
    match v {
        Value::Null => Ok(Value::Null),
        Value::Str(_) => Ok(v.clone()),
        Value::Bool(b) => Ok(Value::str(if *b { "True" } else { "False" })),
        Value::Int(_) | Value::BigInt(_) => Ok(Value::str(runtime::pyrepr::to_str(v))),
        Value::Object(o) => Ok(Value::str(&*o.id)),
        _ => Err(violation(format!(
            "Value {} violates string() contract",
            runtime::pyrepr::repr(v)
        ))),
    }
}

/// `$.bool()`.
fn c_bool(_: &Cx, a: Args) -> Result<Value> {
    coerce_bool(a.get(0))
}

/// As murano's `Bool.transform` (murano/dsl/contracts/basic.py): null
/// stays, anything else is its Python truth (`"false"` is true).
fn coerce_bool(v: &Value) -> Result<Value> {
    match v {
        Value::Null => Ok(Value::Null),
        other => Ok(Value::Bool(other.truthy())),
    }
}

/// `$.notNull()`.
fn c_not_null(_: &Cx, a: Args) -> Result<Value> {
    not_null(a.get(0).clone())
}

fn not_null(v: Value) -> Result<Value> {
    if v.is_null() {
        return Err(violation("null value violates notNull() contract"));
    }
    Ok(v)
}

/// `$.check(predicate[, message])`.
fn c_check(cx: &Cx, a: Args) -> Result<Value> {
    let v = a.get(0).clone();
    let ok = cx.call(a.get(1), std::slice::from_ref(&v))?;
    check_result(v, ok.truthy(), a.get(2))
}

/// `check()`'s verdict on `v`: the value, or a violation with `message`
/// (null: the default message, murano's `Check.validate` in
/// murano/dsl/contracts/check.py, which asks the predicate about null too).
fn check_result(v: Value, ok: bool, message: &Value) -> Result<Value> {
    if ok {
        return Ok(v);
    }
    let msg = match message {
        Value::Null => format!("Value {} doesn't match predicate", fmt_scalar(&v)),
        m => runtime::pyrepr::to_str(m),
    };
    Err(violation(msg))
}

/// `$.class(Name[, DefaultName])`.
fn c_class(cx: &Cx, a: Args) -> Result<Value> {
    class_contract(cx, a.get(0).clone(), a.get(1), a.get(2))
}

/// `class()` of `v`: `name` as written, resolved in the namespaces of the
/// context's class; `default` the class of a definition without a type.
fn class_contract(cx: &Cx, v: Value, name: &Value, default: &Value) -> Result<Value> {
    let ex = cx.executor()?;
    let want = crate::executor::resolve_class_name(cx, &ex, name)?;
    class_check(cx, &ex, v, &want, default)
}

/// [`class_contract`] with the class name resolved.
fn class_check(cx: &Cx, ex: &Executor, v: Value, want: &str, default: &Value) -> Result<Value> {
    match &v {
        Value::Null => Ok(Value::Null),
        Value::Object(o) => {
            let c = ex.class_of(o)?;
            if c.is_a(want) {
                Ok(v)
            } else {
                Err(incompatible(&c, want))
            }
        }
        // An object of a model being streamed, which this execution does
        // not hold: its class is all a `class()` contract of streamed
        // classes looks at.
        Value::Str(id) if ex.foreign().is_some() => {
            match ex.foreign().and_then(|f| f.class_of(id)) {
                Some(c) if c.is_a(want) => Ok(v),
                Some(c) => Err(incompatible(c, want)),
                None => Err(not_found(id)),
            }
        }
        Value::Str(id) => match ex.find_object(id) {
            Some(o) => {
                let c = ex.class_of(&o)?;
                if c.is_a(want) {
                    Ok(Value::Object(o))
                } else {
                    Err(incompatible(&c, want))
                }
            }
            None => Err(not_found(id)),
        },
        // Instantiating a definition needs the whole model: streaming
        // validation gives the model to the ordinary load instead.
        Value::Dict(_) if ex.foreign().is_some() => Err(crate::executor::not_streamable(
            "a class() contract instantiates a definition",
        )),
        Value::Dict(_) => {
            let default = match default {
                Value::Null => Some(want.to_string()),
                t => Some(crate::executor::resolve_class_name(cx, ex, t)?),
            };
            let owner = new_object_owner(cx.ctx);
            let o = ex.instantiate(cx, &v, owner, default.as_deref())?;
            let c = ex.class_of(&o)?;
            if !c.is_a(want) {
                return Err(incompatible(&c, want));
            }
            Ok(Value::Object(o))
        }
        other => Err(violation(format!(
            "Value {} violates class() contract",
            runtime::pyrepr::repr(other)
        ))),
    }
}

fn incompatible(c: &crate::class::Class, want: &str) -> Error {
    violation(format!(
        "Object of type {} is not compatible with requested type {want}",
        c.name
    ))
}

fn not_found(id: &str) -> Error {
    Error::new(
        ErrorKind::NoObjectFoundError,
        format!("Object \"{id}\" is not found in object store"),
    )
}

/// `$.template(Type, excludeProperties => [...], defaultType => ...)`, as
/// murano's `Template` contract (murano/dsl/contracts/instances.py): the
/// value is an object definition (or an object) of `Type` or a subclass;
/// the result is the definition as the object would serialize: a `?`
/// header with a fresh id, each declared property coerced by its contract
/// or given its default, undeclared keys and `excludeProperties` dropped.
fn c_template(cx: &Cx, a: Args) -> Result<Value> {
    let ex = cx.executor()?;
    let mut v = a.get(0).clone();
    if v.is_null() {
        return Ok(v);
    }
    if let Value::Str(id) = &v {
        if let Some(o) = ex.find_object(id) {
            v = Value::Object(o);
        }
    }
    if let Value::Object(o) = &v {
        v = crate::serialize::dump_object(&ex, o, crate::serialize::DumpType::Serializable, true)?;
    }
    if !matches!(v, Value::Dict(_)) {
        return Err(violation(format!(
            "Value {} cannot be represented as class {}",
            fmt_scalar(&v),
            runtime::pyrepr::to_str(a.get(1))
        )));
    }
    let want = crate::executor::resolve_class_name(cx, &ex, a.get(1))?;
    let default = match a.get(2) {
        Value::Null => want.clone(),
        t => crate::executor::resolve_class_name(cx, &ex, t)?,
    };
    let caller = ex.ctx_class(cx.ctx);
    let def = crate::defs::parse_def(&ex, caller.as_deref(), &v, Some(&default))
        .ok_or_else(|| violation("Value is not an object"))?;
    let class = ex.class(&def.class)?;
    if !class.is_a(&want) {
        return Err(violation(format!(
            "Object of type {} is not compatible with requested type {want}",
            class.name
        )));
    }
    let excluded: Vec<Value> = match a.get(4) {
        Value::List(l) => (**l).clone(),
        _ => Vec::new(),
    };
    let props = ex.template_props(&class, &def.props, &excluded)?;
    let mut header = runtime::Dict::default();
    header.insert(Value::str("type"), Value::Type(class.type_ref.clone()));
    header.insert(Value::str("id"), Value::str(ex.new_id()));
    header.insert(Value::str("name"), def.name.clone());
    header.insert(Value::str("metadata"), Value::Null);
    let mut out = runtime::Dict::default();
    out.insert(Value::str("?"), Value::dict(header));
    out.extend(props);
    Ok(Value::dict(out))
}

/// `$.owned()`.
fn c_owned(cx: &Cx, a: Args) -> Result<Value> {
    owned_check(cx, a, true)
}

/// `$.notOwned()`.
fn c_not_owned(cx: &Cx, a: Args) -> Result<Value> {
    owned_check(cx, a, false)
}

fn owned_check(cx: &Cx, a: Args, want_owned: bool) -> Result<Value> {
    let ex = cx.executor()?;
    let v = a.get(0).clone();
    let Value::Object(o) = &v else {
        return Ok(v);
    };
    let this = match Scope::find(cx.ctx, |s| s.owner.clone()) {
        Some(t) => Some(t),
        None => match cx.ctx.var("this") {
            Value::Object(ref t) => Some(t.clone()),
            _ => None,
        },
    };
    let mut owned = false;
    if let Some(t) = this {
        let mut cur = ex.owner(o);
        while let Some(c) = cur {
            if c.slot == t.slot {
                owned = true;
                break;
            }
            cur = ex.owner(&c);
        }
    }
    if owned != want_owned {
        return Err(violation(format!(
            "Object {} violates {}() contract",
            o.id,
            if want_owned { "owned" } else { "notOwned" }
        )));
    }
    Ok(v)
}

/// Registers the contract methods (tried before the standard library in
/// contract expressions).
pub fn register(r: &mut Registry) {
    let anyv = || p("value", Ty::Any).nullable();
    r.method("int", vec![anyv()], c_int);
    r.method("string", vec![anyv()], c_string);
    r.method("bool", vec![anyv()], c_bool);
    r.method("notNull", vec![anyv()], c_not_null);
    r.method(
        "check",
        vec![anyv(), lazy("predicate"), p("msg", Ty::Any).opt()],
        c_check,
    );
    r.method(
        "class",
        vec![
            anyv(),
            p(
                "name",
                Ty::OneOf(&[Ty::Str, Ty::Check(|v| matches!(v, Value::Type(_)))]),
            ),
            p("defaultName", Ty::Any).opt(),
        ],
        c_class,
    );
    r.method(
        "template",
        vec![
            anyv(),
            p(
                "type",
                Ty::OneOf(&[Ty::Str, Ty::Check(|v| matches!(v, Value::Type(_)))]),
            ),
            // murano's order: `type_, default_type, version_spec,
            // exclude_properties`.
            p("defaultType", Ty::Any).opt(),
            p("versionSpec", Ty::Any).opt(),
            p("excludeProperties", Ty::Any).opt(),
        ],
        c_template,
    );
    r.method("owned", vec![anyv()], c_owned);
    r.method("notOwned", vec![anyv()], c_not_owned);
}

#[cfg(test)]
mod tests {
    use super::*;
    use compiler::murano::load_classes;

    fn contract(c: &str) -> Result<Contract> {
        contract_with(c, jit::Mode::Off)
    }

    fn contract_with(c: &str, mode: jit::Mode) -> Result<Contract> {
        let src = format!("Name: T\nProperties:\n  p:\n    Contract: {c}\n");
        let classes = load_classes(&src, "T.yaml", LoadOptions::default()).unwrap();
        let opts = CompileOptions {
            legacy: false,
            murano: true,
        };
        Contract::compile(
            &classes[0].properties[0].contract,
            &crate::contract_registry(false),
            opts,
            mode,
        )
    }

    /// What a contract needs besides its value is read from the IR.
    #[test]
    fn reach_is_read_from_the_ir() {
        for (src, want) in [
            ("$.int().notNull().check($ > 0 and $ < 65536)", Reach::Value),
            ("[$.string()]", Reach::Value),
            ("{a: $.int(), $.string(): $.bool()}", Reach::Value),
            ("$.string().check($.len() < 5, \"too long\")", Reach::Value),
            ("$.class(Server).notNull()", Reach::Classes),
            ("[$.class(Server), 1]", Reach::Classes),
            ("$.class(Server).check($.x > 1)", Reach::Execution),
            ("$.check($this.x > 1)", Reach::Execution),
            ("$.check(new(X) != null)", Reach::Execution),
            ("$.template(X)", Reach::Execution),
            ("$.owned()", Reach::Execution),
        ] {
            assert_eq!(contract(src).unwrap().reach(), want, "{src}");
        }
    }

    /// The template decision is the IR's, made on the syntax tree.
    #[test]
    fn template_contracts_are_decided_by_the_ir() {
        for (src, want) in [
            ("$.template(X)", true),
            ("[$.string().template(X)]", true),
            ("$.int()", false),
            ("[$.int(), $.template(X)]", false),
            ("$.check($ != '.template(')", false),
        ] {
            assert_eq!(contract(src).unwrap().is_template(), want, "{src}");
        }
    }

    /// The checker's forms are the IR's.
    #[test]
    fn checkers_follow_the_ir_forms() {
        let c = contract("[$.int(), 1, 2]").unwrap();
        let Check::List(items, 1, Some(2)) = &c.check else {
            panic!("not a list of 1..2")
        };
        assert!(
            matches!(items[..], [Check::Chain { ref steps, ref whole, ref pos, .. }]
            if matches!(steps[..], [Step::Int])
                && whole.source() == "$.int()" && &**pos == "T.yaml:4:16")
        );
        let c = contract("{a: 1, $.string(): $}").unwrap();
        let Check::Dict(items) = &c.check else {
            panic!("not a dict")
        };
        assert!(matches!(&items[..], [
            (DictKey::Const(k), Check::Const(Value::Int(1))),
            (DictKey::Expr(Check::Chain { .. }), Check::Any),
        ] if k.as_str() == Some("a")));
        let e = contract("$.int(").err();
        assert!(
            e.is_none(),
            "`$.int(` is a string constant, not an expression"
        );
        assert!(matches!(contract("$").unwrap().check, Check::Any));
        // Chains with anything but the plain coercions stay whole.
        for src in [
            "$.int().check($ > 0, 'positive')",
            "$.class(X, Y)",
            "$.int() + 1",
        ] {
            assert!(
                matches!(contract(src).unwrap().check, Check::Expr(..)),
                "{src}"
            );
        }
    }

    /// A chain run step by step gives what the whole chain gives, value
    /// for value and error for error.
    #[test]
    fn chains_run_by_steps_agree_with_the_whole_expression() {
        let ex = Executor::new(Vec::new());
        let env = ex.env(false).clone();
        let ctx = Frame::root(Value::Null);
        let values: Vec<Value> = [
            "null",
            "0",
            "7",
            "-3",
            "70000",
            "2.9",
            "true",
            "false",
            "\"12\"",
            "\" 5 \"",
            "\"x\"",
            "\"False\"",
            "\"TRUE\"",
            "\"\"",
            "[1, 2]",
            "[]",
            "{\"a\": 1}",
            "123456789012345678901234567890",
        ]
        .iter()
        .map(|j| runtime::json::from_tagged_str(j).unwrap())
        .collect();
        for src in [
            "$.int()",
            "$.string()",
            "$.bool()",
            "$.notNull()",
            "$.int().notNull()",
            "$.int().notNull().check($ > 0 and $ < 65536)",
            "$.string().notNull().check($.len() > 1)",
            "$.bool().notNull()",
            "$.check($ != 7).int()",
            "$.string().int()",
            "$.class(X)",
            "$.class('X').notNull()",
        ] {
            let c = contract(src).unwrap();
            let Check::Chain {
                steps, whole, pos, ..
            } = &c.check
            else {
                panic!("{src} is not a chain")
            };
            for v in &values {
                let by_steps = at_contract(
                    run_steps(steps, &env, &ctx, v.clone(), None)
                        .and_then(|r| stdlib::finalize(&env, r)),
                    At::Top,
                    pos,
                );
                let at_once = at_contract(
                    whole
                        .eval_in(&env, &value_frame(&ctx, v.clone(), None))
                        .and_then(|r| stdlib::finalize(&env, r)),
                    At::Top,
                    pos,
                );
                let show = |r: &Result<Value>| match r {
                    Ok(v) => format!("ok {}", runtime::pyrepr::repr(v)),
                    Err(e) => format!("{}: {}", e.kind(), e.message()),
                };
                assert_eq!(show(&by_steps), show(&at_once), "{src} on {v:?}");
            }
        }
    }

    /// Whatever the machine code passes, the interpreter passes unchanged:
    /// every predicate form the JIT compiles, on values of every kind.
    #[test]
    fn what_the_jit_passes_the_interpreter_passes_unchanged() {
        let ex = Executor::new(Vec::new());
        ex.catalog().set_jit(jit::Mode::Always);
        let env = ex.env(false).clone();
        let ctx = Frame::root(Value::Null);
        let mut values: Vec<Value> = [
            "null",
            "0",
            "1",
            "7",
            "-3",
            "65535",
            "65536",
            "2.9",
            "0.0",
            "-0.5",
            "1.0",
            "true",
            "false",
            "\"TCP\"",
            "\"tcp\"",
            "\"\"",
            "\"12\"",
            "\"a-much-longer-string\"",
            "[1]",
            "{\"a\": 1}",
            "123456789012345678901234567890",
        ]
        .iter()
        .map(|j| runtime::json::from_tagged_str(j).unwrap())
        .collect();
        values.extend([
            Value::Float(f64::NAN),
            Value::Float(f64::INFINITY),
            Value::Float(9007199254740993.0),
        ]);
        let mut passed = 0;
        for src in [
            "$.notNull().check(isInteger($) and $ > 0 and $ < 65536)",
            "$.int().check($ >= 0)",
            "$.string().notNull().check($ in list(TCP, UDP, ''))",
            "$.check($ in [1, 2.9, true, null, 'a-much-longer-string'])",
            "$.check($ = 1 or $ = 0.0 or $ = false or $ = null)",
            "$.check($ != 1 and not ($ = 'TCP'))",
            "$.check(isNumber($) or isBoolean($) or isString($))",
            "$.check($)",
            "$.check(not $)",
            "$.check(1 < $ and 2.5 >= $)",
            "$.check($ > 9007199254740992)",
            "$.bool().check($ = true)",
        ] {
            let c = contract_with(src, jit::Mode::Always).unwrap();
            let Check::Chain { steps, tier, .. } = &c.check else {
                panic!("{src} is not a chain")
            };
            let n = tier
                .get(jit::Mode::Always, || native_of(steps))
                .unwrap_or_else(|| panic!("{src} did not compile"));
            for v in &values {
                if !n.passes(v) {
                    continue;
                }
                passed += 1;
                let r = run_steps(steps, &env, &ctx, v.clone(), None)
                    .and_then(|r| stdlib::finalize(&env, r));
                let show = |v: &Value| format!("{v:?}");
                match r {
                    Ok(got) => assert_eq!(show(&got), show(v), "{src} on {v:?}"),
                    Err(e) => panic!("{src} on {v:?}: the JIT passed, the interpreter says {e}"),
                }
            }
        }
        assert!(passed > 60, "only {passed} values passed natively");
    }

    /// A list whose items the machine code checks hands the items it cannot
    /// pass to the interpreter mid-loop; the result is the interpreter's.
    #[test]
    fn a_list_check_resumes_after_the_item_the_interpreter_took() {
        let env_of = |mode| {
            let ex = Executor::new(Vec::new());
            ex.catalog().set_jit(mode);
            ex
        };
        for items in [
            "[1, 2, 3]",
            "[1, \"2\", 3, \" 4 \", 5]",
            "[1, 2.7, 3]",
            "[1, 2, 0, 3]",
            "[1, \"x\", 3]",
            "[1, null, 3]",
        ] {
            let v = runtime::json::from_tagged_str(items).unwrap();
            let mut seen = Vec::new();
            for mode in [jit::Mode::Off, jit::Mode::Always] {
                let ex = env_of(mode);
                let env = ex.env(false).clone();
                let ctx = Frame::root(Value::Null);
                let c = contract_with("[$.int().check($ > 0), 1]", mode).unwrap();
                let r = c.check(&ex, &env, &ctx, v.clone(), None, "p");
                seen.push(match r {
                    Ok(v) => format!("ok {}", runtime::pyrepr::repr(&v)),
                    Err(e) => format!("{}: {}", e.kind(), e.message()),
                });
            }
            assert_eq!(seen[0], seen[1], "{items}");
        }
        // The answers themselves, with the machine code on.
        let ex = env_of(jit::Mode::Always);
        let env = ex.env(false).clone();
        let ctx = Frame::root(Value::Null);
        let c = contract_with("[$.int().check($ > 0), 1]", jit::Mode::Always).unwrap();
        let check = |j: &str| {
            c.check(
                &ex,
                &env,
                &ctx,
                runtime::json::from_tagged_str(j).unwrap(),
                None,
                "p",
            )
        };
        assert_eq!(
            runtime::pyrepr::repr(&check("[1, \" 2\", 3.5]").unwrap()),
            "(1, 2, 3)"
        );
        let e = check("[1, 2, 0, 3]").unwrap_err();
        assert!(
            e.message()
                .starts_with("[2]: Value 0 doesn't match predicate (contract at T.yaml:4:16)"),
            "{}",
            e.message()
        );
        assert!(c.holds(&ex, &runtime::json::from_tagged_str("[1, 2]").unwrap()));
        assert!(!c.holds(&ex, &runtime::json::from_tagged_str("[1, \"2\"]").unwrap()));
        assert!(!c.holds(&ex, &runtime::json::from_tagged_str("[]").unwrap()));
    }
}
