//! The checker: what the engine keeps per node of a contract's IR to run
//! it (compiled programs, machine code, resolved class names), and the
//! hot path that checks and coerces values with it.

use runtime::ErrorKind;
use std::sync::{Arc, OnceLock};

use compiler::jit::{self, Native};
use compiler::murano::ir::{self, ContractKind, LinkKind, OperandForm, Yaql};
use compiler::Program;
use runtime::ctx::Frame;
use runtime::registry::{ArgIn, Cx, Form};
use runtime::value::ObjRef;
use runtime::{Dict, Env, Error, Result, Value};

use super::methods::{
    check_result, class_check, class_check_id, coerce_bool, coerce_int, coerce_string, fmt_scalar,
    not_null, owned_value, violation,
};
use crate::executor::Scope;
use crate::executor::{Executor, ExecutorOf};

/// What the compiled tier does with one part of a contract
/// ([`super::Contract::tier_coverage`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TierCoverage {
    /// Where the part is (`file:line:col`).
    pub at: Arc<str>,
    /// Its source.
    pub source: String,
    /// Compiled to machine code, or why it is interpreted.
    pub compiled: std::result::Result<(), String>,
}

/// A checker node: an IR contract node with what running it needs.
#[derive(Clone)]
pub(super) enum Check {
    /// `$` or no contract: anything.
    Any,
    /// A contract expression other than a plain chain, evaluated whole
    /// with `$` the value; with its position.
    Expr(Arc<Program>, Arc<str>),
    /// A chain of the plain coercions (`$.int().notNull().check($ > 0)`),
    /// run step by step without YAQL dispatch; `whole` is the chain as one
    /// program, for values a MuranoPL method could intercept (objects,
    /// extension methods of those names) and for a chain with
    /// `template()` (whose machine code passes null only).
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

/// One link of a [`Check::Chain`]: the IR's link (which says what it
/// checks: `int()`, `string()`, `bool()`, `notNull()`, `check(p)`,
/// `class(Name)`, `owned()` or `notOwned()`) with what running it needs.
#[derive(Clone)]
pub(super) struct Step {
    /// The link.
    pub(super) kind: LinkKind,
    /// Of `check(p)`: the predicate compiled alone, `$` the value.
    predicate: Option<Arc<Program>>,
    /// Of `class(Name[, DefaultName])`.
    class: Option<ClassStep>,
}

/// What a `class()` step needs: the names as written, and as resolved in
/// the namespaces of the class the contract belongs to (the same for every
/// check, so resolved once).
#[derive(Clone)]
struct ClassStep {
    name: ClassName,
    resolved: OnceLock<String>,
    /// `defaultName`, and its value once evaluated.
    default: Option<(ClassName, OnceLock<Value>)>,
}

impl ClassStep {
    fn new(name: ClassName, default: Option<ClassName>) -> ClassStep {
        ClassStep {
            name,
            resolved: OnceLock::new(),
            default: default.map(|d| (d, OnceLock::new())),
        }
    }

    /// The class wanted and the default's value, resolved as `$.class()`
    /// evaluates its arguments (the name, the default) and then resolves
    /// the name; once known, kept.
    fn names(&self, cx: &Cx, ex: &Executor) -> Result<(&str, Value)> {
        let default = || -> Result<Value> {
            match &self.default {
                None => Ok(Value::Null),
                Some((d, v)) => match v.get() {
                    Some(x) => Ok(x.clone()),
                    None => {
                        let x = d.value(cx)?;
                        Ok(v.get_or_init(|| x).clone())
                    }
                },
            }
        };
        if let Some(w) = self.resolved.get() {
            return Ok((w, default()?));
        }
        let n = self.name.value(cx)?;
        let d = default()?;
        let w = crate::executor::resolve_class_name(cx, ex, &n)?;
        Ok((self.resolved.get_or_init(|| w), d))
    }

    /// What the compiled code may know without a context: the class
    /// wanted, once resolved (and the default evaluated, whose error the
    /// interpreter must raise).
    fn known(&self) -> Option<&str> {
        if let Some((_, d)) = &self.default {
            d.get()?;
        }
        self.resolved.get().map(String::as_str)
    }
}

/// The name a `class()` step wants, as written.
#[derive(Clone)]
enum ClassName {
    /// A bare word or string: `class(Server)`, `class('a.B')`.
    Literal(Value),
    /// `ns:Name` or `:Name` (the prefix, null for none, and the name):
    /// resolved as the expression `ns:Name` is (`#operator_:`), so that an
    /// unknown prefix or class is the same error.
    Ns(Value, Value),
}

impl ClassName {
    /// Of an operand of `class()`: a bare word or string, or `ns:Name`.
    fn of(form: &OperandForm) -> Option<ClassName> {
        match form {
            OperandForm::Literal(n @ Value::Str(_)) => Some(ClassName::Literal(n.clone())),
            OperandForm::NsName(n) => {
                let (ns, name) = n.split_once(':').unwrap_or(("", n));
                let ns = if ns.is_empty() {
                    Value::Null
                } else {
                    Value::str(ns)
                };
                Some(ClassName::Ns(ns, Value::str(name)))
            }
            _ => None,
        }
    }

    /// The value the argument has in the context `cx`, as YAQL evaluates
    /// it.
    fn value(&self, cx: &Cx) -> Result<Value> {
        match self {
            ClassName::Literal(n) => Ok(n.clone()),
            ClassName::Ns(ns, n) => {
                let args = [ArgIn::Val(ns.clone()), ArgIn::Val(n.clone())];
                (cx.env.registry()).call(cx, "#operator_:", None, Form::Function, &args, &[])
            }
        }
    }
}

impl Step {
    /// The step of IR link `kind` when it is one the checker runs by
    /// itself (`check()` with its predicate compiled, `class()` of a name
    /// written as such); `None` for any other link.
    fn of(kind: &LinkKind, expr: &Yaql, compile_part: &CompilePart) -> Option<Step> {
        let (mut predicate, mut class) = (None, None);
        match kind {
            LinkKind::Int
            | LinkKind::String
            | LinkKind::Bool
            | LinkKind::NotNull
            | LinkKind::Owned
            | LinkKind::NotOwned => {}
            LinkKind::Class {
                name,
                default,
                version: None,
            } => {
                let default = match default {
                    Some(d) => Some(ClassName::of(&d.form)?),
                    None => None,
                };
                class = Some(ClassStep::new(ClassName::of(&name.form)?, default));
            }
            LinkKind::Check {
                predicate: p,
                message: None,
                ..
            } => predicate = Some(compile_part(expr, p)?),
            // Whole chains with it are the interpreter's ([`Check::check_at`]);
            // the machine code passes null once the names are known to
            // evaluate (their errors are the interpreter's).
            LinkKind::Template {
                name,
                exclude,
                default_type,
                version: None,
            } if exclude.as_ref().is_none_or(constant_list) => {
                let default = match default_type {
                    Some(d) => Some(ClassName::of(&d.form)?),
                    None => None,
                };
                class = Some(ClassStep::new(ClassName::of(&name.form)?, default));
            }
            _ => return None,
        }
        Some(Step {
            kind: kind.clone(),
            predicate,
            class,
        })
    }

    /// The step as the JIT takes it (a `class()` link calls the engine
    /// through [`Classes`]).
    fn jit(&self) -> jit::Step<'_> {
        jit::Step {
            link: &self.kind,
            predicate: self.predicate.as_deref().map(Program::ir),
        }
    }
}

/// True for an operand that is a literal or a list of literals and bare
/// words (`excludeProperties => [name]`): its evaluation cannot fail.
fn constant_list(o: &ir::Operand) -> bool {
    use compiler::yaql::ast::{Arg, ExprKind};
    let literal = |k: &ExprKind| matches!(k, ExprKind::Lit(_) | ExprKind::Keyword(_));
    matches!(o.form, OperandForm::Literal(_))
        || matches!(&o.expr.kind, ExprKind::List(items)
            if items.iter().all(|a| matches!(a, Arg::Pos(e) if literal(&e.kind))))
}

/// True when the chain has a `template()` link: evaluated whole (but for
/// what the machine code passes).
fn has_template(steps: &[Step]) -> bool {
    steps
        .iter()
        .any(|s| matches!(s.kind, LinkKind::Template { .. }))
}

/// What the machine code of a chain asks the engine (its `class()`,
/// `owned()` and `notOwned()` links): the executor of this run, the
/// chain's steps, and where the value is checked (none: every `owned()`
/// question is the interpreter's).
pub(super) struct Classes<'a> {
    pub(super) ex: &'a Executor,
    pub(super) steps: &'a [Step],
    pub(super) place: Option<Place<'a>>,
}

/// Where a contract checks a value: what [`run_steps`] is given besides
/// the value.
#[derive(Clone, Copy)]
pub(super) struct Place<'a> {
    pub(super) env: &'a Env,
    pub(super) ctx: &'a Arc<Frame>,
    pub(super) owner: Option<&'a Arc<ObjRef>>,
}

impl jit::Host for Classes<'_> {
    /// As [`run_steps`] does with null or an object id, once the names are
    /// resolved, and with the object an id became for `owned()` and
    /// `notOwned()`; anything else (a definition to instantiate, an error,
    /// a violation) is the interpreter's.
    fn class(&self, step: usize, v: &Value) -> jit::Verdict {
        let Some(s) = self.steps.get(step) else {
            return jit::Verdict::Ask;
        };
        if let LinkKind::Template { .. } = s.kind {
            // `template()` of null is null once its arguments are known
            // to evaluate.
            let known = s.class.as_ref().and_then(ClassStep::known).is_some();
            return match v {
                Value::Null if known => jit::Verdict::Same,
                _ => jit::Verdict::Ask,
            };
        }
        if let LinkKind::Owned | LinkKind::NotOwned = s.kind {
            let Some(p) = self.place else {
                return jit::Verdict::Ask;
            };
            let f = value_frame(p.ctx, v.clone(), p.owner);
            let want = s.kind == LinkKind::Owned;
            return match owned_value(&Cx::new(p.env, &f), v.clone(), want) {
                Ok(_) => jit::Verdict::Same,
                Err(_) => jit::Verdict::Ask,
            };
        }
        let Some(want) = s.class.as_ref().and_then(ClassStep::known) else {
            return jit::Verdict::Ask;
        };
        match class_check_id(self.ex, v, want) {
            Some(Ok(o @ Value::Object(_))) => jit::Verdict::Becomes(o),
            Some(Ok(_)) => jit::Verdict::Same,
            _ => jit::Verdict::Ask,
        }
    }
}

/// The Cranelift tier of a chain ([`compiler::jit`]): compiled as the
/// class is ([`jit::Mode::Always`]) or once the chain has been used
/// [`jit::Mode::HOT`] times ([`jit::Mode::Auto`]); none when the chain has
/// a step or predicate the JIT does not compile.
type Tier = jit::Tier<Native>;

/// The machine code of a chain's steps.
pub(super) fn native_of(steps: &[Step]) -> Option<Native> {
    let steps: Vec<_> = steps.iter().map(Step::jit).collect();
    Native::compile(&steps).ok()
}

/// A key of a dict contract.
#[derive(Clone)]
pub(super) enum DictKey {
    /// A fixed key.
    Const(Value),
    /// A key contract (applies to undeclared keys).
    Expr(Check),
}

impl Check {
    /// The checker of an IR contract whose expression `ExprId(i)` compiled
    /// to `programs[i]`; `compile_part` compiles a part of an expression
    /// (a `check()` predicate) on its own.
    pub(super) fn of(
        c: &ir::Contract,
        programs: &[Arc<Program>],
        compile_part: &CompilePart,
    ) -> Check {
        let pos = || -> Arc<str> { c.pos.to_string().into() };
        match &c.kind {
            ContractKind::Any | ContractKind::Null => Check::Any,
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
            ContractKind::Expr(expr) | ContractKind::Static(expr) => {
                Check::Expr(programs[expr.id.index()].clone(), pos())
            }
            ContractKind::List { items, min, max } => {
                let mut items: Vec<Check> = items
                    .iter()
                    .map(|c| Check::of(c, programs, compile_part))
                    .collect();
                if items.is_empty() {
                    // No item contracts: any item.
                    items.push(Check::Any);
                }
                Check::List(items, *min, *max)
            }
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
            .map(|l| Step::of(&l.kind, expr, compile_part))
            .collect()
    }

    pub(super) fn check_at(
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
                if !intercepted {
                    let place = Some(Place { env, ctx, owner });
                    let host = Classes { ex, steps, place };
                    let native = tier.get(ex.catalog().jit(), || native_of(steps));
                    if let Some(r) = native.and_then(|n| n.check_in(&host, &v)) {
                        return Ok(r.unwrap_or(v));
                    }
                }
                let r = if intercepted || has_template(steps) {
                    learn_names(steps, env, ctx);
                    whole.eval_in(env, &value_frame(ctx, v, owner))
                } else {
                    run_steps(steps, env, ctx, v, owner)
                };
                at_contract(r.and_then(|r| stdlib::finalize(env, r)), path, pos)
            }
            Check::List(cs, min, max) => check_list(cs, *min, *max, ex, env, ctx, v, owner, path),
            Check::Dict(items) => check_dict(items, ex, env, ctx, v, owner, path),
        }
    }
}

/// Checks `v` against a list contract: item contracts `cs`, length
/// `min..=max`.
fn check_list(
    cs: &[Check],
    min: i64,
    max: Option<i64>,
    ex: &Executor,
    env: &Env,
    ctx: &Arc<Frame>,
    v: Value,
    owner: Option<&Arc<ObjRef>>,
    path: At<'_>,
) -> Result<Value> {
    if let (Value::List(l), Some(q)) = (&v, quick_list(cs, ex)) {
        if length_error(l.len(), min, max).is_none() {
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
    if let Some(e) = length_error(items.len(), min, max) {
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

/// Checks `v` against a dict contract.
fn check_dict(
    items: &[(DictKey, Check)],
    ex: &Executor,
    env: &Env,
    ctx: &Arc<Frame>,
    v: Value,
    owner: Option<&Arc<ObjRef>>,
    path: At<'_>,
) -> Result<Value> {
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

/// The contract of item `i` of a list: by position, the last one past the
/// end (murano's `Contract._map_list`, murano/dsl/contracts/contracts.py).
pub(super) fn item_contract(cs: &[Check], i: usize) -> &Check {
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
pub(super) fn length_error(len: usize, min: i64, max: Option<i64>) -> Option<String> {
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
    /// The item chain's machine code, and its steps.
    Native(&'a Native, &'a [Step], &'a Executor),
    /// A chain of `class()` and `notNull()` over ids of a streamed model:
    /// an id passes when the index knows it and its class is the one the
    /// contract wants (once the interpreter has resolved that name).
    Ids(&'a [Step], &'a crate::executor::Index),
}

impl Quick<'_> {
    /// The index of the first item not shown to pass; those before it
    /// that pass as another value are pushed to `became` with their index.
    fn first_failing(
        self,
        items: &[Value],
        became: &mut Vec<(usize, Value)>,
        place: Option<Place<'_>>,
    ) -> usize {
        match self {
            Quick::Native(n, steps, ex) => {
                n.first_failing_in(&Classes { ex, steps, place }, items, became)
            }
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
    steps.iter().all(|s| match (&s.kind, &s.class) {
        (LinkKind::NotNull, _) => true,
        (LinkKind::Class { .. }, Some(c)) => c.known().is_some_and(|want| class.is_a(want)),
        _ => false,
    })
}

impl Check {
    /// Whether an object of `class` meets this contract, when it is a
    /// chain of `class()` and `notNull()` steps (names resolved in `env`
    /// and `ctx`, once, as [`run_steps`] resolves them); `None` when the
    /// class alone cannot tell.
    pub(super) fn takes_object(
        &self,
        env: &Env,
        ctx: &Arc<Frame>,
        class: &crate::class::Class,
    ) -> Option<bool> {
        let Check::Chain { steps, .. } = self else {
            return None;
        };
        let mut takes = true;
        for s in steps {
            match (&s.kind, &s.class) {
                (LinkKind::NotNull, _) => {}
                (LinkKind::Class { .. }, Some(c)) => match c.resolved.get() {
                    Some(want) => takes &= class.is_a(want),
                    None => {
                        let cx = Cx::new(env, ctx);
                        let ex = cx.executor().ok()?;
                        takes &= class.is_a(c.names(&cx, &ex).ok()?.0);
                    }
                },
                _ => return None,
            }
        }
        Some(takes)
    }
}

/// True when the value or an extension method could intercept a chain's
/// methods: the whole chain then runs as YAQL.
pub(super) fn intercepted(ex: &Executor, steps: &[Step], v: &Value) -> bool {
    matches!(v, Value::Object(_) | Value::Type(_))
        || steps
            .iter()
            .any(|s| ex.catalog().declares_extension(s.kind.method()))
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
            return Some(Quick::Native(n, steps, ex));
        }
        let classes_only = steps
            .iter()
            .all(|s| matches!(s.kind, LinkKind::Class { .. } | LinkKind::NotNull));
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
        l: &Arc<runtime::ListData>,
        quick: Quick<'_>,
        owner: Option<&Arc<ObjRef>>,
        path: At<'_>,
    ) -> Result<Value> {
        let mut out: Option<Vec<Value>> = None;
        let mut i = 0;
        let mut became = Vec::new();
        while i < l.len() {
            let place = Some(Place { env, ctx, owner });
            let stop = i + quick.first_failing(&l[i..], &mut became, place);
            if became.is_empty() {
                if let Some(o) = &mut out {
                    o.extend_from_slice(&l[i..stop]);
                }
            } else {
                // Items that passed as another value (an id as its object).
                let o = out.get_or_insert_with(|| l[..i].to_vec());
                let mut next = i;
                for (j, x) in became.drain(..) {
                    o.extend_from_slice(&l[next..i + j]);
                    o.push(x);
                    next = i + j + 1;
                }
                o.extend_from_slice(&l[next..stop]);
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
    pub(super) fn holds(&self, ex: &Executor, v: &Value) -> bool {
        match self {
            Check::Any => true,
            Check::Const(c) => v.is_null() || v == c,
            Check::Expr(..) => false,
            Check::Chain { steps, tier, .. } => {
                !intercepted(ex, steps, v)
                    && tier
                        .get(ex.catalog().jit(), || native_of(steps))
                        .is_some_and(|n| {
                            let host = Classes {
                                ex,
                                steps,
                                place: None,
                            };
                            n.check_in(&host, v).is_some()
                        })
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
                    Some(q) => q.first_failing(items, &mut Vec::new(), None) == items.len(),
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

    /// What the compiled tier does with each part of the contract that
    /// runs code: a chain is compiled to machine code or stays interpreted
    /// (why), an expression contract is interpreted.
    pub(super) fn tier_coverage(&self, out: &mut Vec<TierCoverage>) {
        match self {
            Check::Chain {
                steps, whole, pos, ..
            } => {
                // The code generator's verdict, without making machine code.
                let steps: Vec<_> = steps.iter().map(Step::jit).collect();
                let compiled = jit::clif(&steps).map(drop).map_err(|e| e.0);
                out.push(TierCoverage {
                    at: pos.clone(),
                    source: whole.source().to_string(),
                    compiled,
                });
            }
            Check::Expr(p, pos) => out.push(TierCoverage {
                at: pos.clone(),
                source: p.source().to_string(),
                compiled: Err(
                    "not a chain of notNull/int/string/bool/check/class/owned/notOwned: \
                               evaluated whole by the interpreter"
                        .to_string(),
                ),
            }),
            Check::List(cs, ..) => cs.iter().for_each(|c| c.tier_coverage(out)),
            Check::Dict(items) => {
                for (k, c) in items {
                    if let DictKey::Expr(kc) = k {
                        kc.tier_coverage(out);
                    }
                    c.tier_coverage(out);
                }
            }
            Check::Any | Check::Const(_) => {}
        }
    }

    /// Gives every chain of the contract its tier's say at load
    /// ([`jit::Tier::at_load`]).
    pub(super) fn chains_at_load(&self, mode: jit::Mode) {
        match self {
            Check::Chain { steps, tier, .. } => tier.at_load(mode, || native_of(steps)),
            Check::List(cs, ..) => cs.iter().for_each(|c| c.chains_at_load(mode)),
            Check::Dict(items) => {
                for (k, c) in items {
                    if let DictKey::Expr(kc) = k {
                        kc.chains_at_load(mode);
                    }
                    c.chains_at_load(mode);
                }
            }
            Check::Any | Check::Const(_) | Check::Expr(..) => {}
        }
    }
}

/// A closure compiling part of a contract expression on its own.
pub(super) type CompilePart<'a> =
    dyn Fn(&Yaql, &compiler::yaql::ast::Expr) -> Option<Arc<Program>> + 'a;

/// The frame a contract expression runs in: `$` the value, the owner in
/// its scope.
pub(super) fn value_frame(ctx: &Arc<Frame>, v: Value, owner: Option<&Arc<ObjRef>>) -> Arc<Frame> {
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
pub(super) enum At<'a> {
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
pub(super) fn at_contract(r: Result<Value>, path: At<'_>, pos: &str) -> Result<Value> {
    r.map_err(|e| {
        if *e.error_kind() != ErrorKind::ContractViolationException {
            return e;
        }
        e.reworded(|m| {
            if !matches!(path, At::Top) {
                m.insert_str(0, &format!("{}: ", path.render()));
            }
            m.push_str(" (contract at ");
            m.push_str(pos);
            m.push(')');
        })
    })
}

/// Resolves the names of the chain's `template()` links (once: what lets
/// its machine code pass null, [`Classes`]), as its `class()` links
/// resolve theirs; an error leaves them unknown (the interpreter raises
/// it where the chain's evaluation does).
fn learn_names(steps: &[Step], env: &Env, ctx: &Arc<Frame>) {
    for s in steps {
        if let (LinkKind::Template { .. }, Some(c)) = (&s.kind, &s.class) {
            if c.known().is_none() {
                let cx = Cx::new(env, ctx);
                if let Ok(ex) = cx.executor() {
                    let _ = c.names(&cx, &ex);
                }
            }
        }
    }
}

/// Runs a chain's steps on `v` as the contract methods would.
pub(super) fn run_steps(
    steps: &[Step],
    env: &Env,
    ctx: &Arc<Frame>,
    mut v: Value,
    owner: Option<&Arc<ObjRef>>,
) -> Result<Value> {
    for s in steps {
        v = match (&s.kind, &s.predicate, &s.class) {
            (LinkKind::Int, ..) => coerce_int(&v)?,
            (LinkKind::String, ..) => coerce_string(&v)?,
            (LinkKind::Bool, ..) => coerce_bool(&v)?,
            (LinkKind::NotNull, ..) => not_null(v)?,
            (LinkKind::Check { .. }, Some(p), _) => {
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
            (LinkKind::Class { .. }, _, Some(c)) => {
                let ex = Cx::new(env, ctx).executor()?;
                let (want, default) = c.names(&Cx::new(env, ctx), &ex)?;
                let f;
                let ctx = if matches!(v, Value::Dict(_)) {
                    f = value_frame(ctx, v.clone(), owner);
                    &f
                } else {
                    ctx
                };
                class_check(&Cx::new(env, ctx), &ex, v, want, &default)?
            }
            (kind @ (LinkKind::Owned | LinkKind::NotOwned), ..) => {
                let f = value_frame(ctx, v.clone(), owner);
                owned_value(&Cx::new(env, &f), v, *kind == LinkKind::Owned)?
            }
            // `check_at` evaluates a chain with `template()` whole.
            (other, ..) => unreachable!("run_steps runs no {}() step", other.method()),
        };
    }
    Ok(v)
}
