//! The function registry: typed overloads with type-directed resolution.
//!
//! Every YAQL function (operators included, named `#operator_+` etc. as in
//! the reference) is a set of overloads. An overload declares its form
//! (function, method or extension), its parameters with types, nullability,
//! defaults and laziness, and a native Rust function. The compiler asks the
//! registry which arguments of a call must be compiled lazily (as closures);
//! the VM asks it to resolve and run a call.

use crate::error::ErrorKind;
use std::sync::Arc;

use smallvec::SmallVec;

use crate::ctx::Frame;
use crate::error::{Error, Result};
use crate::value::{Closure, Value};
use crate::Env;

/// How an overload may be called.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `name(args)` only.
    Function,
    /// `receiver.name(args)` only; the receiver is the first parameter.
    Method,
    /// Both forms.
    Extension,
}

/// The form of a call site.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// `name(args)`.
    Function,
    /// `receiver.name(args)`.
    Method,
}

/// Parameter types, as the reference's `yaqltypes` check them.
#[derive(Clone, Debug)]
pub enum Ty {
    /// Any non-null value.
    Any,
    /// Only null (use with `nullable`).
    Null,
    /// Python `int`: integers and booleans.
    Int,
    /// Integers only (no booleans).
    IntStrict,
    /// Numbers: int or float, not bool.
    Number,
    /// Numbers or booleans.
    NumberOrBool,
    /// Strings.
    Str,
    /// Booleans.
    Bool,
    /// Lists, sets and lazy sequences (not strings, not dicts).
    Iterable,
    /// Lists (Python list/tuple).
    Sequence,
    /// Dictionaries.
    Mapping,
    /// Sets.
    Set,
    /// Lists, sets, lazy sequences and dicts.
    Collection,
    /// Datetimes.
    DateTime,
    /// Timespans.
    TimeSpan,
    /// Callables (lambda values).
    Callable,
    /// Context objects (`let`, `with`).
    Context,
    /// Mapping rules `k => v`.
    Pair,
    /// One of several types.
    OneOf(&'static [Ty]),
    /// A custom check.
    Check(fn(&Value) -> bool),
}

impl Ty {
    /// True when `v` (not null) is of this type.
    pub fn accepts(&self, v: &Value) -> bool {
        match self {
            Ty::Any => !v.is_null(),
            Ty::Null => v.is_null(),
            Ty::Int => matches!(v, Value::Int(_) | Value::BigInt(_) | Value::Bool(_)),
            Ty::IntStrict => matches!(v, Value::Int(_) | Value::BigInt(_)),
            Ty::Number => v.is_number(),
            Ty::NumberOrBool => v.is_number() || matches!(v, Value::Bool(_)),
            Ty::Str => matches!(v, Value::Str(_)),
            Ty::Bool => matches!(v, Value::Bool(_)),
            Ty::Iterable => v.is_iterable(),
            Ty::Sequence => matches!(v, Value::List(_)),
            Ty::Mapping => matches!(v, Value::Dict(_)),
            Ty::Set => matches!(v, Value::Set(_)),
            Ty::Collection => v.is_iterable() || matches!(v, Value::Dict(_)),
            Ty::DateTime => matches!(v, Value::DateTime(_)),
            Ty::TimeSpan => matches!(v, Value::TimeSpan(_)),
            Ty::Callable => matches!(v, Value::Lambda(_)),
            Ty::Context => matches!(v, Value::Context(_)),
            Ty::Pair => matches!(v, Value::Pair(_)),
            Ty::OneOf(ts) => ts.iter().any(|t| t.accepts(v)),
            Ty::Check(f) => f(v),
        }
    }
}

/// How a parameter binds arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// One positional or keyword argument.
    Normal,
    /// `*args`: the remaining positional arguments.
    Var,
    /// `**kwargs`: the remaining keyword arguments.
    Kw,
}

/// A declared parameter.
#[derive(Clone, Debug)]
pub struct Param {
    /// Name (camelCase, as keyword arguments spell it).
    pub name: Arc<str>,
    /// Type.
    pub ty: Ty,
    /// Whether null is accepted.
    pub nullable: bool,
    /// Default value; a parameter with a default is optional.
    pub default: Option<Value>,
    /// Lazy: receives its argument as a lambda (`yaqltypes.Lambda`/`Lazy`).
    pub lazy: bool,
    /// Binding mode.
    pub mode: Mode,
}

/// Makes a parameter of type `ty`.
pub fn p(name: &str, ty: Ty) -> Param {
    Param {
        name: name.into(),
        ty,
        nullable: false,
        default: None,
        lazy: false,
        mode: Mode::Normal,
    }
}

/// Makes a lazy parameter (a lambda).
pub fn lazy(name: &str) -> Param {
    Param {
        name: name.into(),
        ty: Ty::Any,
        nullable: true,
        default: None,
        lazy: true,
        mode: Mode::Normal,
    }
}

/// Makes a `*args` parameter.
pub fn var(name: &str, ty: Ty) -> Param {
    Param {
        mode: Mode::Var,
        ..p(name, ty)
    }
}

/// Makes a `**kwargs` parameter.
pub fn kw(name: &str, ty: Ty) -> Param {
    Param {
        mode: Mode::Kw,
        ..p(name, ty)
    }
}

impl Param {
    /// Accepts null too.
    pub fn nullable(mut self) -> Param {
        self.nullable = true;
        self
    }
    /// Gives a default (makes the parameter optional).
    pub fn default(mut self, v: impl Into<Value>) -> Param {
        self.default = Some(v.into());
        self
    }
    /// Optional with default null (and nullable).
    pub fn opt(mut self) -> Param {
        self.default = Some(Value::Null);
        self.nullable = true;
        self
    }
    /// Marks the parameter lazy.
    pub fn lazy(mut self) -> Param {
        self.lazy = true;
        self
    }
    fn check(&self, v: &Value, legacy: bool) -> bool {
        if v.is_null() {
            self.nullable || matches!(self.ty, Ty::Null)
        } else if legacy && matches!(self.ty, Ty::Iterable) && matches!(v, Value::Dict(_)) {
            // yaql 0.2: dictionaries are iterable (over their keys).
            true
        } else {
            self.ty.accepts(v)
        }
    }
}

/// What a native receives.
pub struct Cx<'a> {
    /// The environment (registry, options).
    pub env: &'a Env,
    /// The YAQL context of the call site.
    pub ctx: &'a Arc<Frame>,
    /// The data the called overload was registered with
    /// ([`Reg::data`]), if any.
    pub data: Option<&'a NativeData>,
}

impl<'a> Cx<'a> {
    /// The context of a call at `ctx`, with no overload data.
    pub fn new(env: &'a Env, ctx: &'a Arc<Frame>) -> Cx<'a> {
        Cx {
            env,
            ctx,
            data: None,
        }
    }
    /// This context as overload `ov` receives it (with its data).
    pub fn for_overload<'b>(&self, ov: &'b Overload) -> Cx<'b>
    where
        'a: 'b,
    {
        Cx {
            env: self.env,
            ctx: self.ctx,
            data: ov.data.as_ref(),
        }
    }
}

impl Cx<'_> {
    /// Calls a lambda value with positional arguments.
    pub fn call(&self, f: &Value, args: &[Value]) -> Result<Value> {
        match f {
            Value::Lambda(c) => c.call(self.env, args),
            other => Ok(other.clone()),
        }
    }
    /// Iterates a collection with the iterator limit.
    pub fn iter(&self, v: &Value) -> Result<crate::seq::SeqIter> {
        crate::seq::iterate(self.env, v)
    }
    /// Collects a collection into a vector with the iterator limit.
    pub fn to_vec(&self, v: &Value) -> Result<Vec<Value>> {
        crate::seq::to_vec(self.env, v)
    }
}

/// Arguments bound to an overload's parameters.
pub struct Args {
    /// One value per `Normal` parameter, in declaration order (defaults
    /// filled in; lazy parameters hold lambdas).
    pub vals: SmallVec<[Value; 6]>,
    /// `*args`.
    pub rest: Vec<Value>,
    /// `**kwargs`.
    pub kw: Vec<(Arc<str>, Value)>,
}

impl Args {
    /// Parameter `i`.
    pub fn get(&self, i: usize) -> &Value {
        &self.vals[i]
    }
    /// Takes parameter `i` out.
    pub fn take(&mut self, i: usize) -> Value {
        std::mem::replace(&mut self.vals[i], Value::Null)
    }
    /// Parameter `i` as a string (empty when not one).
    pub fn str(&self, i: usize) -> &str {
        self.vals[i].as_str().unwrap_or("")
    }
    /// Parameter `i` as an i64 (0 when not one).
    pub fn int(&self, i: usize) -> Result<i64> {
        match &self.vals[i] {
            Value::Int(n) => Ok(*n),
            Value::Bool(b) => Ok(*b as i64),
            Value::BigInt(_) => Err(Error::new(
                ErrorKind::OverflowError,
                "Python int too large to convert to C ssize_t",
            )),
            _ => Ok(0),
        }
    }
    /// Parameter `i` as a bool (Python truthiness).
    pub fn bool(&self, i: usize) -> bool {
        self.vals[i].truthy()
    }
}

/// A native implementation.
pub type NativeFn = fn(&Cx, Args) -> Result<Value>;

/// Data an overload carries to its native ([`Cx::data`]): what makes one
/// native function serve many closures (a host's functions, each
/// registered with its own closure as data).
pub type NativeData = Arc<dyn std::any::Any + Send + Sync>;

/// A test of a string prepared once from an overload's other, constant
/// argument (a regex pattern compiled once): what machine code calls
/// instead of the overload on each value ([`Reg::str_test`]).
pub trait StrTest: Send + Sync {
    /// The overload's answer on `s` (`Some(bool)`), exactly as its
    /// native would give it; `None` when the native must be asked (an
    /// error included: the native raises it in its own words).
    fn test(&self, s: &str) -> Option<bool>;
}

/// Prepares a [`StrTest`] from the constant second argument of a
/// `(string, constant) -> bool` overload; `None` when it cannot (the call
/// then stays interpreted: a bad pattern's error is the native's).
pub type PrepareStrTest = fn(&Value) -> Option<Box<dyn StrTest>>;

/// One overload.
#[derive(Clone)]
pub struct Overload {
    /// Stable id, `group.name#n`.
    pub id: String,
    /// The function name.
    pub name: Arc<str>,
    /// Form.
    pub kind: Kind,
    /// Parameters (`Var`/`Kw` ones last).
    pub params: Vec<Param>,
    /// The implementation.
    pub f: NativeFn,
    /// Constant-foldable: no context use, no side effects.
    pub pure_: bool,
    /// Takes no keyword arguments: `name => v` becomes a positional
    /// mapping rule (`#map`, `dict`, legacy functions).
    pub no_kw: bool,
    /// Every parameter eager and ordinary (see [`Overload::is_plain`]).
    plain: bool,
    /// What the native receives as [`Cx::data`].
    pub data: Option<NativeData>,
    /// For a `(string, constant) -> bool` overload: its test on strings,
    /// prepared from the constant ([`Reg::str_test`]).
    pub str_test: Option<PrepareStrTest>,
}

impl Overload {
    /// Whether [`Overload::bind_plain`] decides this overload exactly:
    /// every parameter eager and ordinary, or a last `*args` (no lazy or
    /// `**kwargs` parameter, no mapping-rule pair).
    pub fn is_plain(&self) -> bool {
        self.plain
    }

    /// Binds evaluated positional values to a plain overload (see
    /// [`Overload::is_plain`]): one value per ordinary parameter (missing
    /// trailing ones optional), the rest to `*args`, each value of its
    /// parameter's type. For plain overloads and such arguments this is
    /// exactly what the general binder decides; `None` (no match) leaves
    /// `vals` as it was.
    pub fn bind_plain(&self, vals: &mut SmallVec<[Value; 6]>, legacy: bool) -> Option<Args> {
        let (normal, var) = match self.params.split_last() {
            Some((last, init)) if last.mode == Mode::Var => (init, Some(last)),
            _ => (&self.params[..], None),
        };
        if vals.len() > normal.len() && var.is_none() {
            return None;
        }
        for (i, prm) in normal.iter().enumerate() {
            match vals.get(i) {
                Some(v) => {
                    if !prm.check(v, legacy) {
                        return None;
                    }
                }
                None => {
                    prm.default.as_ref()?;
                }
            }
        }
        if let Some(vp) = var {
            if !vals.iter().skip(normal.len()).all(|v| vp.check(v, legacy)) {
                return None;
            }
        }
        let given = vals.len().min(normal.len());
        let rest: Vec<Value> = if vals.len() > normal.len() {
            vals.drain(normal.len()..).collect()
        } else {
            Vec::new()
        };
        // The values move over as they are (no copy per value).
        let mut out = std::mem::take(vals);
        for prm in &normal[given..] {
            out.push(prm.default.clone().unwrap_or(Value::Null));
        }
        Some(Args {
            vals: out,
            rest,
            kw: Vec::new(),
        })
    }

    /// Whether a call of this form may use this overload (without the
    /// registry's yaql 0.2 any-form switch).
    pub fn accepts_form(&self, form: Form) -> bool {
        !matches!(
            (self.kind, form),
            (Kind::Function, Form::Method) | (Kind::Method, Form::Function)
        )
    }
}

/// All overloads of one name.
#[derive(Clone, Default)]
pub struct OverloadSet {
    /// The overloads, tried in registration order.
    pub overloads: Vec<Arc<Overload>>,
}

/// An argument at a call site.
#[derive(Clone)]
pub enum ArgIn {
    /// An evaluated value.
    Val(Value),
    /// An argument compiled lazily (a closure over the call-site context).
    Thunk(Arc<Closure>),
    /// A skipped positional slot (`f(a,,c)`).
    Skip,
}

/// The registry of all functions.
#[derive(Default, Clone)]
pub struct Registry {
    sets: rustc_hash::FxHashMap<Arc<str>, Arc<OverloadSet>>,
    /// yaql 0.2 mode: every function can also be called as a method and
    /// every method as a function.
    any_form: bool,
    group: String,
    counter: usize,
}

/// Handle returned by registration to adjust the new overload.
pub struct Reg<'a> {
    ov: &'a mut Overload,
}

impl Reg<'_> {
    /// Marks the overload pure (constant-foldable).
    pub fn pure_(self) -> Self {
        self.ov.pure_ = true;
        self
    }
    /// Keyword arguments become positional mapping rules.
    pub fn no_kw(self) -> Self {
        self.ov.no_kw = true;
        self
    }
    /// Gives the native `data` on every call ([`Cx::data`]).
    pub fn data(self, data: NativeData) -> Self {
        self.ov.data = Some(data);
        self
    }
    /// Gives a `(string, constant) -> bool` overload the test that
    /// compiled code runs in its place, given the constant
    /// ([`Overload::str_test`]).
    pub fn str_test(self, prepare: PrepareStrTest) -> Self {
        self.ov.str_test = Some(prepare);
        self
    }
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Registry {
        Registry::default()
    }
    /// Lets functions be called as methods and methods as functions
    /// (yaql 0.2 legacy mode).
    pub fn set_any_form(&mut self, on: bool) {
        self.any_form = on;
    }
    fn form_ok(&self, ov: &Overload, form: Form) -> bool {
        self.any_form || ov.accepts_form(form)
    }

    /// Sets the group name used in overload ids.
    pub fn group(&mut self, g: &str) {
        self.group = g.into();
    }

    fn add(&mut self, name: &str, kind: Kind, params: Vec<Param>, f: NativeFn) -> Reg<'_> {
        self.counter += 1;
        let n = params.len();
        let plain = params.iter().enumerate().all(|(i, p)| {
            !p.lazy
                && !matches!(p.ty, Ty::Pair)
                && (p.mode == Mode::Normal || (p.mode == Mode::Var && i + 1 == n))
        });
        let ov = Overload {
            id: format!("{}.{}#{}", self.group, name, self.counter),
            name: name.into(),
            kind,
            plain,
            params,
            f,
            pure_: false,
            no_kw: false,
            data: None,
            str_test: None,
        };
        let set = self.sets.entry(name.into()).or_default();
        let set = Arc::make_mut(set);
        set.overloads.push(Arc::new(ov));
        let last = set.overloads.last_mut().unwrap();
        Reg {
            ov: Arc::get_mut(last).unwrap(),
        }
    }
    /// Registers `name(params)`.
    pub fn function(&mut self, name: &str, params: Vec<Param>, f: NativeFn) -> Reg<'_> {
        self.add(name, Kind::Function, params, f)
    }
    /// Registers `receiver.name(params[1..])`.
    pub fn method(&mut self, name: &str, params: Vec<Param>, f: NativeFn) -> Reg<'_> {
        self.add(name, Kind::Method, params, f)
    }
    /// Registers both forms.
    pub fn extension(&mut self, name: &str, params: Vec<Param>, f: NativeFn) -> Reg<'_> {
        self.add(name, Kind::Extension, params, f)
    }

    /// Appends every overload of `other` after this registry's own (so
    /// this registry's overloads are tried first).
    pub fn merge_from(&mut self, other: &Registry) {
        for (name, set) in &other.sets {
            let mine = Arc::make_mut(self.sets.entry(name.clone()).or_default());
            mine.overloads.extend(set.overloads.iter().cloned());
        }
    }

    /// The overloads of `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<OverloadSet>> {
        self.sets.get(name)
    }
    /// Every registered name.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.sets.keys().map(|k| &**k)
    }

    /// True when some overload of `name` can be called in `form`.
    pub fn has_form(&self, name: &str, form: Form) -> bool {
        self.get(name)
            .is_some_and(|set| set.overloads.iter().any(|o| self.form_ok(o, form)))
    }

    /// True when every overload of `name` callable in `form` takes no
    /// keyword arguments (then `k => v` arguments are positional mapping
    /// rules, in source order).
    pub fn all_no_kw(&self, name: &str, form: Form) -> bool {
        self.get(name).is_some_and(|set| {
            let mut any = false;
            for ov in set.overloads.iter().filter(|o| self.form_ok(o, form)) {
                if !ov.no_kw {
                    return false;
                }
                any = true;
            }
            any
        })
    }

    /// Which arguments of a call must be compiled lazily: for each
    /// positional slot (receiver first for methods) and each named
    /// argument, true when any overload of `name` takes it lazily.
    pub fn lazy_slots(
        &self,
        name: &str,
        form: Form,
        npos: usize,
        named: &[&str],
    ) -> (Vec<bool>, Vec<bool>) {
        let mut pos = vec![false; npos];
        let mut nam = vec![false; named.len()];
        if let Some(set) = self.get(name) {
            for ov in set.overloads.iter().filter(|o| self.form_ok(o, form)) {
                let normals: Vec<&Param> = ov
                    .params
                    .iter()
                    .filter(|p| p.mode == Mode::Normal)
                    .collect();
                let var = ov.params.iter().find(|p| p.mode == Mode::Var);
                let kwp = ov.params.iter().find(|p| p.mode == Mode::Kw);
                for (i, slot) in pos.iter_mut().enumerate() {
                    let lz = match normals.get(i) {
                        Some(p) => p.lazy,
                        None => var.is_some_and(|p| p.lazy),
                    };
                    *slot |= lz;
                }
                for (j, n) in named.iter().enumerate() {
                    if ov.no_kw {
                        nam[j] |= var.is_some_and(|p| p.lazy);
                        continue;
                    }
                    let lz = match normals.iter().find(|p| &*p.name == *n) {
                        Some(p) => p.lazy,
                        None => kwp.is_some_and(|p| p.lazy),
                    };
                    nam[j] |= lz;
                }
            }
        }
        (pos, nam)
    }

    /// Resolves and runs a call.
    pub fn call(
        &self,
        cx: &Cx,
        name: &str,
        set: Option<&OverloadSet>,
        form: Form,
        pos: &[ArgIn],
        named: &[(Arc<str>, ArgIn)],
    ) -> Result<Value> {
        let (ov, args) = self.resolve(cx, name, set, form, pos, named)?;
        (ov.f)(&cx.for_overload(ov), args)
    }

    /// The overload [`Registry::call`] runs and its arguments, bound (the
    /// values cloned from `pos` and `named`). A caller that owns the
    /// argument list can drop it before the call, so that the callee holds
    /// the only reference to each value (see `queries::fused`).
    pub fn resolve<'s>(
        &'s self,
        cx: &Cx,
        name: &str,
        set: Option<&'s OverloadSet>,
        form: Form,
        pos: &[ArgIn],
        named: &[(Arc<str>, ArgIn)],
    ) -> Result<(&'s Overload, Args)> {
        let Some(set) = set.or_else(|| self.get(name).map(|s| &**s)) else {
            return Err(not_registered(name, form));
        };
        let mut forced_pos: SmallVec<[Option<Value>; 4]> = SmallVec::from_elem(None, pos.len());
        let mut forced_named: SmallVec<[Option<Value>; 2]> = SmallVec::from_elem(None, named.len());
        let mut any_form = false;
        for ov in &set.overloads {
            if !self.form_ok(ov, form) {
                continue;
            }
            any_form = true;
            if ov.no_kw && !named.is_empty() {
                let mut all: Vec<ArgIn> = pos.to_vec();
                for (n, a) in named {
                    let v = match a {
                        ArgIn::Val(v) => v.clone(),
                        ArgIn::Thunk(c) => Value::Lambda(c.clone()),
                        ArgIn::Skip => Value::Null,
                    };
                    all.push(ArgIn::Val(Value::Pair(Arc::new((Value::str(&**n), v)))));
                }
                let mut fp: Vec<Option<Value>> = vec![None; all.len()];
                if let Some(args) = bind(cx, ov, &all, &[], &mut fp, &mut [])? {
                    return Ok((ov, args));
                }
                continue;
            }
            if let Some(args) = bind(cx, ov, pos, named, &mut forced_pos, &mut forced_named)? {
                return Ok((ov, args));
            }
        }
        if !any_form {
            return Err(not_registered(name, form));
        }
        Err(no_matching(name, form))
    }
}

/// `NoFunctionRegisteredException` / `NoMethodRegisteredException`.
pub fn not_registered(name: &str, form: Form) -> Error {
    match form {
        Form::Function => Error::new(
            ErrorKind::NoFunctionRegisteredException,
            format!("Unknown function \"{}\"", name),
        ),
        Form::Method => Error::new(
            ErrorKind::NoMethodRegisteredException,
            format!("Unknown method \"{}\"", name),
        ),
    }
}

/// `NoMatchingFunctionException` / `NoMatchingMethodException`.
pub fn no_matching(name: &str, form: Form) -> Error {
    match form {
        Form::Function => Error::new(
            ErrorKind::NoMatchingFunctionException,
            format!("No function \"{}\" matches supplied arguments", name),
        ),
        Form::Method => Error::new(
            ErrorKind::NoMatchingMethodException,
            format!("No method \"{}\" matches supplied arguments", name),
        ),
    }
}

fn const_thunk(v: Value) -> Value {
    struct K(Value);
    impl crate::value::Invoke for K {
        fn invoke(
            &self,
            _: &Env,
            _: &Arc<Frame>,
            _: &[Value],
            _: &[(Arc<str>, Value)],
        ) -> Result<Value> {
            Ok(self.0.clone())
        }
    }
    if let Value::Lambda(_) = v {
        return v;
    }
    Value::Lambda(Arc::new(Closure {
        code: Arc::new(K(v)),
        ctx: Frame::root(Value::Null),
    }))
}

fn force(cx: &Cx, a: &ArgIn, slot: &mut Option<Value>) -> Result<Value> {
    if let Some(v) = slot {
        return Ok(v.clone());
    }
    let v = match a {
        ArgIn::Val(v) => v.clone(),
        ArgIn::Thunk(c) => {
            let v = c.call(cx.env, &[])?;
            *slot = Some(v.clone());
            v
        }
        ArgIn::Skip => Value::Null,
    };
    Ok(v)
}

fn bind_one(cx: &Cx, prm: &Param, a: &ArgIn, slot: &mut Option<Value>) -> Result<Option<Value>> {
    if prm.lazy {
        return Ok(Some(match a {
            ArgIn::Thunk(c) => Value::Lambda(c.clone()),
            ArgIn::Val(v) => {
                // A mapping rule whose sides were compiled lazily stays as is.
                if let Value::Pair(_) = v {
                    v.clone()
                } else {
                    const_thunk(v.clone())
                }
            }
            ArgIn::Skip => return Ok(None),
        }));
    }
    let v = force(cx, a, slot)?;
    // A pair of thunks given to an eager mapping-rule parameter: force both.
    let v = match (&prm.ty, &v) {
        (Ty::Pair, Value::Pair(pr)) => {
            let k = force_val(cx, &pr.0)?;
            let w = force_val(cx, &pr.1)?;
            Value::Pair(Arc::new((k, w)))
        }
        _ => v,
    };
    Ok(if prm.check(&v, cx.env.options().legacy) {
        Some(v)
    } else {
        None
    })
}

/// Evaluates a value that may be a lazily compiled argument part.
pub fn force_val(cx: &Cx, v: &Value) -> Result<Value> {
    match v {
        Value::Lambda(c) if c.code.is_thunk() => c.call(cx.env, &[]),
        other => Ok(other.clone()),
    }
}

fn bind(
    cx: &Cx,
    ov: &Overload,
    pos: &[ArgIn],
    named: &[(Arc<str>, ArgIn)],
    forced_pos: &mut [Option<Value>],
    forced_named: &mut [Option<Value>],
) -> Result<Option<Args>> {
    let params = &ov.params;
    let n_normal = params.iter().filter(|p| p.mode == Mode::Normal).count();
    let var = params.iter().find(|p| p.mode == Mode::Var);
    let kwp = params.iter().find(|p| p.mode == Mode::Kw);
    if pos.len() > n_normal && var.is_none() {
        return Ok(None);
    }
    // Which normal params are given by name.
    let mut by_name: SmallVec<[Option<usize>; 4]> = SmallVec::from_elem(None, n_normal);
    let mut extra_kw: SmallVec<[usize; 2]> = SmallVec::new();
    for (j, (n, _)) in named.iter().enumerate() {
        match params[..n_normal].iter().position(|p| p.name == *n) {
            Some(i) => {
                if i < pos.len() || by_name[i].is_some() {
                    return Ok(None);
                }
                by_name[i] = Some(j);
            }
            None => {
                if kwp.is_none() {
                    return Ok(None);
                }
                extra_kw.push(j);
            }
        }
    }
    let mut vals: SmallVec<[Value; 6]> = SmallVec::with_capacity(n_normal);
    for (i, prm) in params[..n_normal].iter().enumerate() {
        let got = if i < pos.len() {
            if let ArgIn::Skip = pos[i] {
                None
            } else {
                match bind_one(cx, prm, &pos[i], &mut forced_pos[i])? {
                    Some(v) => Some(v),
                    None => return Ok(None),
                }
            }
        } else if let Some(j) = by_name[i] {
            match bind_one(cx, prm, &named[j].1, &mut forced_named[j])? {
                Some(v) => Some(v),
                None => return Ok(None),
            }
        } else {
            None
        };
        match got {
            Some(v) => vals.push(v),
            None => match &prm.default {
                Some(d) => vals.push(if prm.lazy {
                    const_thunk(d.clone())
                } else {
                    d.clone()
                }),
                None => return Ok(None),
            },
        }
    }
    let mut rest = Vec::new();
    if let Some(vp) = var {
        for (i, a) in pos.iter().enumerate().skip(n_normal) {
            if let ArgIn::Skip = a {
                return Ok(None);
            }
            match bind_one(cx, vp, a, &mut forced_pos[i])? {
                Some(v) => rest.push(v),
                None => return Ok(None),
            }
        }
    }
    let mut kwv = Vec::new();
    if let Some(kp) = kwp {
        for j in extra_kw {
            match bind_one(cx, kp, &named[j].1, &mut forced_named[j])? {
                Some(v) => kwv.push((named[j].0.clone(), v)),
                None => return Ok(None),
            }
        }
    }
    Ok(Some(Args {
        vals,
        rest,
        kw: kwv,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first(_: &Cx, a: Args) -> Result<Value> {
        Ok(a.get(0).clone())
    }

    #[test]
    fn plain_binding_matches_types_fills_defaults_and_leaves_misses_alone() {
        let mut r = Registry::new();
        r.function(
            "f",
            vec![p("a", Ty::Int), p("b", Ty::Str).default("d")],
            first,
        );
        r.function("g", vec![p("a", Ty::Any).lazy()], first);
        r.function("h", vec![p("a", Ty::Int), var("rest", Ty::Str)], first);
        let f = &r.get("f").unwrap().overloads[0];
        let g = &r.get("g").unwrap().overloads[0];
        assert!(f.is_plain());
        assert!(!g.is_plain());
        // A last `*args` takes the values after the ordinary ones.
        let h = &r.get("h").unwrap().overloads[0];
        assert!(h.is_plain());
        let mut vals: SmallVec<[Value; 6]> =
            smallvec::smallvec![Value::Int(1), Value::str("x"), Value::str("y")];
        let args = h.bind_plain(&mut vals, false).unwrap();
        assert_eq!(args.vals.as_slice(), &[Value::Int(1)]);
        assert_eq!(args.rest, vec![Value::str("x"), Value::str("y")]);
        let mut vals: SmallVec<[Value; 6]> = smallvec::smallvec![Value::Int(1), Value::Int(2)];
        assert!(h.bind_plain(&mut vals, false).is_none());
        assert_eq!(vals.len(), 2);
        // Both given.
        let mut vals: SmallVec<[Value; 6]> = smallvec::smallvec![Value::Int(1), Value::str("x")];
        let args = f.bind_plain(&mut vals, false).unwrap();
        assert_eq!(args.vals.as_slice(), &[Value::Int(1), Value::str("x")]);
        assert!(vals.is_empty());
        // The default fills the missing trailing parameter.
        let mut vals: SmallVec<[Value; 6]> = smallvec::smallvec![Value::Int(2)];
        let args = f.bind_plain(&mut vals, false).unwrap();
        assert_eq!(args.vals.as_slice(), &[Value::Int(2), Value::str("d")]);
        // A wrong type, a missing required value or too many values: no
        // match, and the values are still there for the general binder.
        for bad in [
            smallvec::smallvec![Value::str("1")],
            smallvec::smallvec![],
            smallvec::smallvec![Value::Int(1), Value::str("x"), Value::Null],
        ] {
            let mut vals: SmallVec<[Value; 6]> = bad;
            let before = vals.clone();
            assert!(f.bind_plain(&mut vals, false).is_none());
            assert_eq!(vals, before);
        }
    }
}
