//! The Cranelift tier: contracts, conditions and arithmetic compiled to
//! machine code.
//!
//! Three kinds of code, all guarded the same way:
//! - a contract chain (`$.notNull().int().check(isInteger($) and $ > 0)`,
//!   [`Native`]) becomes a loop over values passed as [`Scalar`]s (a tag
//!   and the value's bits, or a string's pointer and length) that returns
//!   the index of the first value it cannot show to pass;
//! - a condition ([`Predicate`]: a whole expression, or a lambda such as
//!   `where($.age > 30)`) answers true, false or "ask the interpreter";
//! - arithmetic ([`Number`]: `select($.price * $.qty)`) answers an int, a
//!   float or "ask the interpreter".
//!
//! Every step and operation guards on the tags of its operands: a value of
//! a kind the code was not compiled for (a float where a contract compares
//! integers, a list, an object, a missing field, an integer overflow, a
//! coercion that would change the value), or a value that fails a contract,
//! leaves the code ("deopt"), and the interpreter takes that value over —
//! coercing it, raising the reference's error or reporting the violation in
//! its own words. The machine code never gives a wrong answer and never an
//! error message of its own. [`Tier`] decides when code is made ([`Mode`]).
//!
//! What compiles (anything else is [`Unsupported`] and stays interpreted):
//! `$`, its fields (`$.a.b`, read through a helper), variables (`$x`, in a
//! statement's condition: the engine reads them, [`Predicate::eval_with`]),
//! scalar constants, `+ - *` on numbers, `and`, `or`, `not`, comparisons,
//! `in` a list of constants, and the type tests `isInteger`, `isNumber`,
//! `isString`, `isBoolean`; the contract steps `notNull()`, `int()`,
//! `string()`, `bool()`, `check(p)` with `p` built from those, and
//! `class()`, `owned()` and `notOwned()`, which call the engine back
//! through a [`Host`] passed to each call (per-run state stays the
//! engine's: the code is frozen and shared). Conditions also compile
//! `matches()` and `=~` of a constant pattern (the library's own test,
//! prepared once: [`runtime::registry::StrTest`]), `startsWith()` and
//! `endsWith()`, `containsKey()`, `bool()`, and `in` and `len()` over a dict's
//! `keys()` and `values()` (`codegen/calls.rs`).

mod abi;
mod borrowed;
mod codegen;
mod strings;
use abi::{tag, Scalar};
pub use abi::{Step, Unsupported};
pub use borrowed::Borrowed;

use std::sync::Arc;

use cranelift_codegen::ir::{Function, UserFuncName};
use cranelift_codegen::isa::{CallConv, TargetFrontendConfig};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::FunctionBuilderContext;
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, Linkage, Module};
use runtime::Value;
use target_lexicon::PointerWidth;

use crate::ir::Expr;

pub use runtime::JitMode as Mode;

/// Machine code made when a [`Mode`] wants it: the uses so far and the
/// code once compiled (`None` inside when the JIT does not compile it).
/// Shared by compiled contracts, expressions and lambdas; the one place
/// that decides when code tiers up ([`Tier::at_load`], [`Tier::get`]).
pub struct Tier<T> {
    uses: std::sync::atomic::AtomicU32,
    code: std::sync::OnceLock<Option<T>>,
}

impl<T> Default for Tier<T> {
    fn default() -> Tier<T> {
        Tier {
            uses: Default::default(),
            code: Default::default(),
        }
    }
}

impl<T> Tier<T> {
    /// The code, if `mode` wants it by now (this use counts);
    /// `compile` makes it the first time.
    pub fn get(&self, mode: Mode, compile: impl FnOnce() -> Option<T>) -> Option<&T> {
        if mode == Mode::Off {
            return None;
        }
        if let Some(c) = self.code.get() {
            return c.as_ref();
        }
        let uses = self.uses.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if !mode.compiles_at(uses) {
            return None;
        }
        self.now(compile)
    }

    /// At load (a class or contract being compiled): the code, compiled
    /// now when `mode` compiles everything ahead of use.
    pub fn at_load(&self, mode: Mode, compile: impl FnOnce() -> Option<T>) {
        if mode == Mode::Always {
            self.now(compile);
        }
    }

    /// The code, compiled now if it is not yet.
    pub fn now(&self, compile: impl FnOnce() -> Option<T>) -> Option<&T> {
        self.code.get_or_init(compile).as_ref()
    }
}

/// The fast tier of a lambda whose body is node `body` of `e`, when there
/// is one: a field read (`$.name`), a string built from `$`
/// ([`strings::Build`]), or a condition or arithmetic the JIT compiles.
pub fn lambda_tier(e: &Arc<Expr>, body: crate::ir::NodeId) -> Option<Arc<dyn vm::bc::Fast>> {
    use crate::ir::Node;
    match &e[body] {
        Node::Attr(recv, name, _, _) if matches!(e[*recv], Node::Arg(1)) => {
            Some(Arc::new(FieldRead(Value::Str(name.clone()))))
        }
        _ if let Some(b) = strings::Build::compile(e, body) => Some(b),
        _ if is_condition(e, body) && bools_only(e, body) => Some(Arc::new(Lambda {
            ir: e.clone(),
            body,
            tier: Tier::<Predicate>::default(),
        })),
        Node::Bin(
            crate::ir::BinOp::Add
            | crate::ir::BinOp::Sub
            | crate::ir::BinOp::Mul
            | crate::ir::BinOp::Div
            | crate::ir::BinOp::Mod,
            ..,
        ) => Some(Arc::new(Lambda {
            ir: e.clone(),
            body,
            tier: Tier::<Number>::default(),
        })),
        _ => None,
    }
}

/// `$.name` of a dict, read directly (a missing key, or `$` that is no
/// dict, takes the interpreter's way: a `KeyError`, an object's property).
struct FieldRead(Value);

impl vm::bc::Fast for FieldRead {
    fn call(&self, env: &runtime::Env, arg: &Value) -> Option<Value> {
        let o = env.options();
        if o.jit == Mode::Off || o.legacy {
            return None;
        }
        match arg {
            Value::Dict(d) => runtime::value::get_interned(d, &self.0).cloned(),
            _ => None,
        }
    }
}

/// Code the JIT makes of an expression, run on one value.
trait Jitted: Sized + Send + Sync {
    fn compile(e: &Expr) -> Option<Self>;
    fn eval(&self, v: &Value) -> Option<Value>;
}

impl Jitted for Predicate {
    /// A lambda has no variables to give: one reading them stays
    /// interpreted.
    fn compile(e: &Expr) -> Option<Self> {
        Predicate::compile(e).ok().filter(|p| p.vars().is_empty())
    }
    fn eval(&self, v: &Value) -> Option<Value> {
        Predicate::eval(self, v).map(Value::Bool)
    }
}

impl Jitted for Number {
    fn compile(e: &Expr) -> Option<Self> {
        Number::compile(e).ok().filter(|n| n.0.vars.is_empty())
    }
    fn eval(&self, v: &Value) -> Option<Value> {
        Number::eval(self, v)
    }
}

/// A lambda (`where($.age > 30)`, `select($.price * $.qty)`) as machine
/// code once hot.
struct Lambda<T> {
    /// The expression the lambda is part of, and its body's node.
    ir: Arc<Expr>,
    body: crate::ir::NodeId,
    tier: Tier<T>,
}

impl<T: Jitted> vm::bc::Fast for Lambda<T> {
    fn call(&self, env: &runtime::Env, arg: &Value) -> Option<Value> {
        let o = env.options();
        if o.legacy {
            return None;
        }
        let compile = || {
            let mut ir = (*self.ir).clone();
            ir.root = self.body;
            T::compile(&ir)
        };
        self.tier.get(o.jit, compile)?.eval(arg)
    }
}

/// The signature of a compiled chain: `(items, n, call, class helper) ->
/// index of the first item not shown to pass, or n`. `call` is the
/// [`Call`] of this run, which the helper reads the engine's state from.
type Loop = unsafe extern "C" fn(*const Scalar, usize, *const Call<'_>, ClassFn) -> usize;

/// What compiled chains ask of the engine running them: the per-run state
/// (the object store, the model being validated) stays the engine's, and
/// is reached only through this, passed to each call by reference.
pub trait Host {
    /// What link `step` of the chain (a `class()` link, or an `owned()`
    /// or `notOwned()` link given the object a `class()` link made) does
    /// with `v`, exactly as the checker would, or [`Verdict::Ask`] when
    /// the interpreter must say (an error or violation included: the
    /// interpreter raises it in its own words).
    fn class(&self, step: usize, v: &Value) -> Verdict;
}

/// A [`Host`]'s answer on one value.
pub enum Verdict {
    /// The value passes as it is.
    Same,
    /// The value passes and becomes this one (an object id its object).
    Becomes(Value),
    /// The interpreter decides.
    Ask,
}

/// A host that knows nothing: every question goes to the interpreter.
struct NoHost;

impl Host for NoHost {
    fn class(&self, _: usize, _: &Value) -> Verdict {
        Verdict::Ask
    }
}

/// One call of a chain's machine code: the host, and the values items
/// became (by index in the batch), written by [`class_step`].
struct Call<'a> {
    host: &'a dyn Host,
    became: std::cell::RefCell<Vec<(usize, Value)>>,
}

/// The helper a compiled `class()` link calls.
type ClassFn = unsafe extern "C" fn(*const Call<'_>, u64, u64, *const Value) -> u8;

/// Link `step` on item `i` of the batch, whose value is `v` (null: the
/// value an earlier link made item `i` become, recorded in `call`): 0 ask
/// the interpreter, 1 the value passes as it is, 2 it passes and became
/// another (recorded in `call`).
///
/// # Safety
/// `call` points to the live [`Call`] the code was called with and `v`
/// to a live value (or is null), for the duration of the call.
unsafe extern "C" fn class_step(call: *const Call<'_>, step: u64, i: u64, v: *const Value) -> u8 {
    // SAFETY: the compiled code passes on the `Call` pointer it was given
    // (a reference alive for the whole native call) and the `val` of a
    // scalar made from a live value, or null.
    let (call, v) = unsafe { (&*call, v.as_ref()) };
    let held;
    let v = match v {
        Some(v) => v,
        None => {
            let became = call.became.borrow();
            match became.iter().rev().find(|(j, _)| *j as u64 == i) {
                Some((_, x)) => {
                    held = x.clone();
                    &held
                }
                None => return 0,
            }
        }
    };
    // A panic must not unwind into machine code: it becomes "ask".
    let verdict = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        call.host.class(step as usize, v)
    }));
    match verdict {
        Ok(Verdict::Same) => 1,
        Ok(Verdict::Becomes(x)) => {
            call.became.borrow_mut().push((i as usize, x));
            2
        }
        Ok(Verdict::Ask) | Err(_) => 0,
    }
}

/// What machine code points to besides its arguments: the string tests
/// it calls ([`str_test`]), each boxed so that a thin pointer reaches it.
type Kept = Vec<Arc<Box<dyn runtime::registry::StrTest>>>;

/// The helper compiled code runs a prepared string test with.
type StrTestFn =
    unsafe extern "C" fn(*const Box<dyn runtime::registry::StrTest>, *const u8, usize) -> u8;

/// Runs the prepared test at `test` on the string of `len` bytes at `ptr`:
/// 0 false, 1 true, 2 when the interpreter must answer (the test cannot,
/// or panicked).
///
/// # Safety
/// `test` points to a test the code's [`Code`] keeps alive, and `ptr` to
/// `len` bytes of a live `str` (valid UTF-8), for the duration of the call.
unsafe extern "C" fn str_test(
    test: *const Box<dyn runtime::registry::StrTest>,
    ptr: *const u8,
    len: usize,
) -> u8 {
    // SAFETY: the code passes the address of a boxed test that its `Code`
    // keeps (`Kept`) and a string scalar's `ptr`/`len`, read from a live
    // `Value::Str` (so valid UTF-8) borrowed for the whole native call.
    let (test, s) = unsafe {
        (
            &*test,
            std::str::from_utf8_unchecked(std::slice::from_raw_parts(ptr, len)),
        )
    };
    // A panic must not unwind into machine code: it deopts.
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| test.test(s))) {
        Ok(Some(b)) => b as u8,
        Ok(None) | Err(_) => 2,
    }
}

/// The machine code of a compiled chain, freed when the last [`Native`]
/// using it goes, with what the code points to.
struct Code {
    module: Option<JITModule>,
    _kept: Kept,
}

// SAFETY: after `finalize_definitions` the module is only kept to own the
// code's memory until `Drop` frees it; nothing mutates it, and the code
// reads only the arguments it is called with, so it may run on any thread.
unsafe impl Send for Code {}
// SAFETY: as for `Send`: shared references never touch the module.
unsafe impl Sync for Code {}

impl Drop for Code {
    fn drop(&mut self) {
        if let Some(m) = self.module.take() {
            // SAFETY: the only pointer into this memory is the `Loop` of the
            // `Native` that owned the last `Arc<Code>`, which is gone.
            unsafe { m.free_memory() };
        }
    }
}

/// A compiled contract chain. Cheap to clone; `Send + Sync`.
#[derive(Clone)]
pub struct Native {
    run: Loop,
    /// The code reads strings' bytes or lengths.
    strings: bool,
    _code: Arc<Code>,
}

impl std::fmt::Debug for Native {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Native")
    }
}

/// How many scalars one native call takes (a stack buffer).
const BATCH: usize = 16;

impl Native {
    /// Compiles a chain to machine code for this machine.
    pub fn compile(steps: &[Step<'_>]) -> Result<Native, Unsupported> {
        let mut module = module()?;
        let mut ctx = module.make_context();
        let (func, strings, kept) = function(steps, module.target_config())?;
        ctx.func = func;
        let code = finish(&mut module, &mut ctx, "contract")?;
        // SAFETY: `code` is the entry of the function just defined with
        // `codegen::signature` in the platform's calling convention: four
        // 64-bit integers in, one out, which is `Loop` on a 64-bit target.
        let run = unsafe { std::mem::transmute::<*const u8, Loop>(code) };
        Ok(Native {
            run,
            strings,
            _code: Arc::new(Code {
                module: Some(module),
                _kept: kept,
            }),
        })
    }

    /// The index of the first of `items` the compiled code cannot show to
    /// pass unchanged (`items.len()` when all do). A `class()` link asks
    /// the interpreter about every value: use [`Native::first_failing_in`].
    pub fn first_failing(&self, items: &[Value]) -> usize {
        self.first_failing_in(&NoHost, items, &mut Vec::new())
    }

    /// The index of the first of `items` the compiled code cannot show to
    /// pass (`items.len()` when all do), `host` answering its `class()`
    /// links; the items before it that pass as another value (an id as
    /// its object) are pushed to `became` with their index.
    pub fn first_failing_in(
        &self,
        host: &dyn Host,
        items: &[Value],
        became: &mut Vec<(usize, Value)>,
    ) -> usize {
        let mut buf = [Scalar::EMPTY; BATCH];
        let call = Call {
            host,
            became: Default::default(),
        };
        for (k, chunk) in items.chunks(BATCH).enumerate() {
            for (s, v) in buf.iter_mut().zip(chunk) {
                *s = Scalar::of(v, self.strings);
            }
            // SAFETY: `buf` holds `chunk.len()` initialised scalars whose
            // pointers borrow from `chunk`, alive for the call; the code
            // reads `chunk.len()` records and, for a string, at most `len`
            // bytes from `ptr`; `call` outlives the call and `class_step`
            // has the signature the code calls it with.
            let i = unsafe { (self.run)(buf.as_ptr(), chunk.len(), &call, class_step) };
            // Values of items from the one that failed on are not theirs.
            let mut b = call.became.borrow_mut();
            became.extend(
                b.drain(..)
                    .filter(|(j, _)| *j < i)
                    .map(|(j, x)| (k * BATCH + j, x)),
            );
            if i < chunk.len() {
                return k * BATCH + i;
            }
        }
        items.len()
    }

    /// True when the compiled code shows that `v` passes unchanged.
    pub fn passes(&self, v: &Value) -> bool {
        matches!(self.check_in(&NoHost, v), Some(None))
    }

    /// When the compiled code shows that `v` passes, `host` answering its
    /// `class()` links: `Some(None)` as it is, `Some(Some(x))` as `x`.
    pub fn check_in(&self, host: &dyn Host, v: &Value) -> Option<Option<Value>> {
        // One scalar, not a batch's buffer: validation asks this once per
        // property of every object.
        let s = Scalar::of(v, self.strings);
        let call = Call {
            host,
            became: Default::default(),
        };
        // SAFETY: `s` is one initialised scalar borrowing from `v`, alive
        // for the call; the code reads one record and, for a string, at
        // most `len` bytes from `ptr`; `call` outlives the call and
        // `class_step` has the signature the code calls it with.
        let i = unsafe { (self.run)(&s, 1, &call, class_step) };
        (i == 1).then(|| call.became.into_inner().pop().map(|(_, x)| x))
    }
}

/// Compiled chains run on values read in place ([`Borrowed`]).
impl Native {
    /// The index of the first of `items` the compiled code cannot show to
    /// pass unchanged (`items.len()` when all do), as
    /// [`Native::first_failing`] answers for the engine's values of them.
    pub fn first_failing_borrowed(&self, items: &[Borrowed<'_>]) -> usize {
        let mut buf = [Scalar::EMPTY; BATCH];
        let call = Call {
            host: &NoHost,
            became: Default::default(),
        };
        for (k, chunk) in items.chunks(BATCH).enumerate() {
            for (s, v) in buf.iter_mut().zip(chunk) {
                *s = v.scalar();
            }
            // SAFETY: `buf` holds `chunk.len()` initialised scalars; a
            // string's `ptr`/`len` borrow its `&str` from `chunk`, alive
            // for the call, and the code reads at most `len` bytes there;
            // every `val` is null, which the field, element and class
            // helpers refuse (the code deopts); `call` outlives the call
            // and `class_step` has the signature the code calls it with.
            let i = unsafe { (self.run)(buf.as_ptr(), chunk.len(), &call, class_step) };
            if i < chunk.len() {
                return k * BATCH + i;
            }
        }
        items.len()
    }

    /// True when the compiled code shows that `v` passes unchanged.
    pub fn passes_borrowed(&self, v: Borrowed<'_>) -> bool {
        let one = [v.scalar()];
        let call = Call {
            host: &NoHost,
            became: Default::default(),
        };
        // SAFETY: as in `first_failing_borrowed`, for one scalar that
        // borrows from `v`, alive for the call.
        let i = unsafe { (self.run)(one.as_ptr(), 1, &call, class_step) };
        i == 1
    }
}

/// The signature of a compiled expression: `(item, keys, field helper,
/// out, element helper, variables, probe) -> status` (see
/// [`codegen::Output`]).
type ExprFn = unsafe extern "C" fn(
    *const Scalar,
    *const Value,
    FieldFn,
    *mut Scalar,
    ElementFn,
    *const Scalar,
    *const Probe<'_>,
) -> u64;

/// What compiled conditions ask of the engine about objects (a method's
/// `$`, `$this` and the objects their properties hold): the per-run state
/// stays the engine's, reached through this, passed to each call.
pub trait Objects {
    /// `obj.name` as the interpreter reads it (`obj` is a MuranoPL object,
    /// or anything else the engine may refuse), or `None` when the
    /// interpreter must (an error included: it raises it in its own
    /// words).
    fn property(&self, obj: &Value, name: &str) -> Option<Value>;
    /// `obj.getAttr(name)` as the interpreter reads it: `Some(Some(v))`
    /// when set, `Some(None)` when unset (the call's default applies),
    /// `None` when the interpreter must decide.
    fn attr(&self, obj: &Value, name: &str) -> Option<Option<Value>>;
}

/// What one call of an expression's code reads objects with, and the
/// values it read from them, kept (boxed: their addresses stay put) until
/// the call ends, since the scalars the code holds borrow from them.
struct Probe<'a> {
    objects: Option<&'a dyn Objects>,
    // Boxed on purpose: the scalars given to the code point into each
    // value, which must stay put when the vector grows.
    #[allow(clippy::vec_box)]
    kept: std::cell::RefCell<Vec<Box<Value>>>,
}

/// What the field helper reads ([`field`]'s `kind`).
mod read {
    /// `value.key`: a dict's entry or an object's property.
    pub const FIELD: u64 = 0;
    /// `value.getAttr(key)`: an object's attribute.
    pub const ATTR: u64 = 1;
    /// `value.get(key)`: a dict's entry only.
    pub const GET: u64 = 2;
}

/// What the element helper reads ([`element`]'s `kind`).
mod elements {
    /// A list's items.
    pub const LIST: u64 = 0;
    /// A dict's keys (`keys()`).
    pub const KEYS: u64 = 1;
    /// A dict's values (`values()`).
    pub const VALUES: u64 = 2;
}

/// The helper compiled code reads a list's items (a dict's keys or
/// values) with.
type ElementFn = unsafe extern "C" fn(*const Value, u64, *mut Scalar, u64) -> u8;

/// Reads item `i` of list `list` (of `kind`, one of [`elements`]: key or
/// value `i` of a dict) into `out`; 0 when `list` is no such container or
/// `i` is past its end, for the code to deopt.
///
/// # Safety
/// As for [`field`].
unsafe extern "C" fn element(list: *const Value, i: u64, out: *mut Scalar, kind: u64) -> u8 {
    // SAFETY: the compiled code passes the `val` of a scalar made from a
    // live value (or null, refused here) and a stack slot of a scalar's
    // size.
    let (list, out) = unsafe {
        match list.as_ref() {
            Some(v) => (v, &mut *out),
            None => return 0,
        }
    };
    let item = match (list, kind) {
        (Value::List(l), elements::LIST) => l.get(i as usize),
        (Value::Dict(d), elements::KEYS) => d.get_index(i as usize).map(|(k, _)| k),
        (Value::Dict(d), elements::VALUES) => d.get_index(i as usize).map(|(_, v)| v),
        _ => None,
    };
    match item {
        Some(v) => {
            *out = Scalar::of(v, true);
            1
        }
        None => 0,
    }
}

/// The helper compiled predicates read `value.key` with.
type FieldFn =
    unsafe extern "C" fn(*const Probe<'_>, *const Value, *const Value, u64, *mut Scalar) -> u8;

/// Reads `key` of `value` into `out` (`kind`, one of [`read`]: a field
/// or an attribute): 1; 2 when the dict has no such key or the object no
/// such attribute (the code deopts or takes the call's default); 0 when
/// the code must deopt (`value` is neither a dict nor an object the
/// probe's [`Objects`] reads).
///
/// # Safety
/// `probe` points to the live [`Probe`] of this call, `value` and `key`
/// to live values and `out` to a writable `Scalar`, for the duration of
/// the call; the scalar written borrows from `value` or from a value the
/// probe keeps until the call ends.
unsafe extern "C" fn field(
    probe: *const Probe<'_>,
    value: *const Value,
    key: *const Value,
    kind: u64,
    out: *mut Scalar,
) -> u8 {
    // SAFETY: the compiled code passes on the probe it was called with,
    // the `val` of a scalar made from a live value (or null, refused
    // here), a key the `Predicate` owns, and a stack slot of a scalar's
    // size.
    let (probe, value, key, out) = unsafe {
        match value.as_ref() {
            Some(v) => (&*probe, v, &*key, &mut *out),
            None => return 0,
        }
    };
    match (value, kind) {
        (Value::Dict(d), read::FIELD | read::GET) => match runtime::value::get_interned(d, key) {
            Some(v) => {
                *out = Scalar::of(v, true);
                1
            }
            None => 2,
        },
        (Value::Object(_), read::FIELD | read::ATTR) => {
            let (Some(objects), Some(name)) = (probe.objects, key.as_str()) else {
                return 0;
            };
            // A panic must not unwind into machine code: it deopts.
            let got = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match kind {
                read::FIELD => objects.property(value, name).map(Some),
                _ => objects.attr(value, name),
            }));
            match got {
                Ok(Some(Some(v))) => {
                    let mut kept = probe.kept.borrow_mut();
                    kept.push(Box::new(v));
                    *out = Scalar::of(kept.last().expect("just pushed"), true);
                    1
                }
                Ok(Some(None)) => 2,
                Ok(None) | Err(_) => 0,
            }
        }
        _ => 0,
    }
}

/// An expression compiled to machine code, with the keys of the fields it
/// reads.
#[derive(Clone)]
struct Compiled {
    run: ExprFn,
    keys: Arc<[Value]>,
    /// The variables it reads (`$name`), in the order it takes them.
    vars: Arc<[Arc<String>]>,
    _code: Arc<Code>,
}

impl Compiled {
    fn new(e: &Expr, output: codegen::Output) -> Result<Compiled, Unsupported> {
        let mut module = module()?;
        let mut ctx = module.make_context();
        let target = module.target_config();
        ctx.func = Function::with_name_signature(
            UserFuncName::user(0, 0),
            codegen::expr_signature(target.default_call_conv),
        );
        let mut fctx = FunctionBuilderContext::new();
        let names = codegen::build_expr(&mut ctx.func, &mut fctx, target, e, output)?;
        let code = finish(&mut module, &mut ctx, "expression")?;
        // SAFETY: `code` is the entry of the function just defined with
        // `codegen::expr_signature` in the platform's calling convention:
        // six 64-bit integers in, one out, which is `ExprFn` on a 64-bit
        // target.
        let run = unsafe { std::mem::transmute::<*const u8, ExprFn>(code) };
        Ok(Compiled {
            run,
            // Interned, so that lookups on this thread compare pointers
            // (`$.get(name)` keys are string constants, not interned yet).
            keys: (names.fields.iter())
                .map(|n| Value::Str(runtime::value::intern(n)))
                .collect(),
            vars: names.vars.into(),
            _code: Arc::new(Code {
                module: Some(module),
                _kept: names.kept,
            }),
        })
    }

    /// Runs the code for `$` = `v` and the variables' values `vars` (in
    /// [`Compiled::vars`] order); its status and what it wrote to `out`.
    /// Code reading variables deopts when `vars` does not give them all.
    /// Objects are read through `objects` (without, reading one deopts).
    /// The scalar returned is only a number's (it borrows nothing).
    fn run(&self, v: &Value, vars: &[Value], objects: Option<&dyn Objects>) -> (u64, Scalar) {
        if vars.len() != self.vars.len() {
            return (2, Scalar::EMPTY);
        }
        let s = Scalar::of(v, true);
        let scalars: Vec<Scalar> = vars.iter().map(|x| Scalar::of(x, true)).collect();
        let mut out = Scalar::EMPTY;
        let probe = Probe {
            objects,
            kept: Default::default(),
        };
        // SAFETY: `s` borrows from `v` and `scalars` from `vars`, alive for
        // the call, and `scalars` holds one scalar per variable the code
        // reads; `keys` lives as long as `self`; `field` and `element`
        // have the signatures the code calls them with; `out` is a
        // writable scalar; `probe` (and the values it keeps) outlives the
        // call.
        let status = unsafe {
            (self.run)(
                &s,
                self.keys.as_ptr(),
                field,
                &mut out,
                element,
                scalars.as_ptr(),
                &probe,
            )
        };
        (status, out)
    }
}

/// A YAQL condition compiled to machine code: `$`, its fields (`$.x`),
/// constants, integer arithmetic, comparisons, `in`, `and`/`or`/`not` and
/// the type tests. Cheap to clone; `Send + Sync`.
#[derive(Clone)]
pub struct Predicate(Compiled);

impl std::fmt::Debug for Predicate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Predicate")
    }
}

impl Predicate {
    /// Compiles expression `e` (whose value must be a condition: a
    /// comparison, `in`, `and`/`or`/`not` of those, a type test).
    pub fn compile(e: &Expr) -> Result<Predicate, Unsupported> {
        Predicate::gate(e)?;
        Compiled::new(e, codegen::Output::Condition).map(Predicate)
    }

    /// The condition's value for `$` = `v`; `None` when the compiled code
    /// cannot decide (the interpreter must), or reads variables.
    pub fn eval(&self, v: &Value) -> Option<bool> {
        self.eval_with(v, &mut |_| None)
    }

    /// The variables the condition reads (`$name`), each once.
    pub fn vars(&self) -> &[Arc<String>] {
        &self.0.vars
    }

    /// The condition's value for `$` = `v`, `var` giving each variable's
    /// value as the interpreter reads it (`None`: the interpreter must
    /// decide); `None` when the compiled code cannot decide.
    pub fn eval_with(&self, v: &Value, var: &mut dyn FnMut(&str) -> Option<Value>) -> Option<bool> {
        self.eval_in(None, v, var)
    }

    /// As [`Predicate::eval_with`], reading the properties and attributes
    /// of objects through `objects` (a method's condition on `$.x` or
    /// `$this.getAttr(x)`).
    pub fn eval_in(
        &self,
        objects: Option<&dyn Objects>,
        v: &Value,
        var: &mut dyn FnMut(&str) -> Option<Value>,
    ) -> Option<bool> {
        let vars: Vec<Value> = (self.0.vars.iter())
            .map(|n| var(n))
            .collect::<Option<_>>()?;
        match self.0.run(v, &vars, objects).0 {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }

    /// Compiles the truth of expression `e` (Python's truthiness of its
    /// value: what a statement's condition asks), whatever its value.
    pub fn truth(e: &Expr) -> Result<Predicate, Unsupported> {
        Compiled::new(e, codegen::Output::Condition).map(Predicate)
    }

    /// The code generator's verdict on the truth of `e` ([`Predicate::truth`]),
    /// without making machine code.
    pub fn verdict(e: &Expr) -> Result<(), Unsupported> {
        let target = TargetFrontendConfig {
            default_call_conv: CallConv::SystemV,
            pointer_width: PointerWidth::U64,
            page_size_align_log2: 12,
        };
        let mut func = Function::with_name_signature(
            UserFuncName::user(0, 0),
            codegen::expr_signature(target.default_call_conv),
        );
        let mut fctx = FunctionBuilderContext::new();
        codegen::build_expr(&mut func, &mut fctx, target, e, codegen::Output::Condition).map(drop)
    }

    /// `Err` unless `e` is a condition whose `and`/`or` give booleans.
    fn gate(e: &Expr) -> Result<(), Unsupported> {
        if !is_condition(e, e.root) {
            return Err(Unsupported("the JIT compiles conditions only".into()));
        }
        if !bools_only(e, e.root) {
            return Err(Unsupported(
                "`and`/`or` return an operand that is not a condition".into(),
            ));
        }
        Ok(())
    }
}

/// YAQL arithmetic (`$.price * $.qty`) compiled to machine code: `+`,
/// `-`, `*` of ints and floats read from `$` and its fields, or constant.
#[derive(Clone)]
pub struct Number(Compiled);

impl Number {
    /// Compiles expression `e` (`+`, `-`, `*`, `/` or `mod` at its root).
    pub fn compile(e: &Expr) -> Result<Number, Unsupported> {
        use crate::ir::{BinOp, Node};
        if !matches!(
            e[e.root],
            Node::Bin(
                BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Mod,
                ..
            )
        ) {
            return Err(Unsupported("the JIT compiles arithmetic only".into()));
        }
        Compiled::new(e, codegen::Output::Number).map(Number)
    }

    /// The number for `$` = `v`; `None` when the compiled code cannot
    /// decide (the interpreter must).
    pub fn eval(&self, v: &Value) -> Option<Value> {
        match self.0.run(v, &[], None) {
            (0, s) if s.tag == tag::INT => Some(Value::Int(s.bits as i64)),
            (0, s) if s.tag == tag::FLOAT => Some(Value::Float(f64::from_bits(s.bits))),
            _ => None,
        }
    }
}

/// True when node `id` is a condition: its value is a boolean.
fn is_condition(e: &Expr, id: crate::ir::NodeId) -> bool {
    use crate::ir::Node;
    e.ty(id) == crate::ir::Type::Bool
        || match &e[id] {
            Node::And(..) | Node::Or(..) | Node::Not(_) => true,
            Node::Call(c) => {
                matches!(
                    &*c.name,
                    "all"
                        | "any"
                        | "startsWith"
                        | "endsWith"
                        | "matches"
                        | "#operator_=~"
                        | "containsKey"
                        | "bool"
                ) || codegen::TYPE_TESTS.iter().any(|(n, _)| **n == *c.name)
            }
            _ => false,
        }
}

/// True when every `and`/`or` under `id` combines conditions, so that the
/// operand it returns is a boolean.
fn bools_only(e: &Expr, id: crate::ir::NodeId) -> bool {
    use crate::ir::Node;
    match &e[id] {
        Node::And(l, r) | Node::Or(l, r) => {
            is_condition(e, *l) && is_condition(e, *r) && bools_only(e, *l) && bools_only(e, *r)
        }
        Node::Not(x) => bools_only(e, *x),
        _ => true,
    }
}

/// A module for this machine, to define one function in.
fn module() -> Result<JITModule, Unsupported> {
    if cfg!(not(target_pointer_width = "64")) {
        return Err(Unsupported("the JIT needs a 64-bit target".into()));
    }
    let mut flags = settings::builder();
    flags.set("opt_level", "speed").map_err(|e| failed(&e))?;
    let isa = cranelift_native::builder()
        .map_err(|e| failed(&e))?
        .finish(settings::Flags::new(flags))
        .map_err(|e| failed(&e))?;
    Ok(JITModule::new(JITBuilder::with_isa(
        isa,
        default_libcall_names(),
    )))
}

/// Defines the function in `ctx` as `name` and makes it machine code;
/// its entry address.
fn finish(
    module: &mut JITModule,
    ctx: &mut cranelift_codegen::Context,
    name: &str,
) -> Result<*const u8, Unsupported> {
    let id = module
        .declare_function(name, Linkage::Export, &ctx.func.signature)
        .map_err(|e| failed(&e))?;
    module.define_function(id, ctx).map_err(|e| failed(&e))?;
    module.finalize_definitions().map_err(|e| failed(&e))?;
    Ok(module.get_finalized_function(id))
}

fn failed(e: &dyn std::fmt::Display) -> Unsupported {
    Unsupported(format!("the JIT failed: {e}"))
}

/// The Cranelift IR of a chain, as text (System V calling convention):
/// what the golden tests pin.
pub fn clif(steps: &[Step<'_>]) -> Result<String, Unsupported> {
    let target = TargetFrontendConfig {
        default_call_conv: CallConv::SystemV,
        pointer_width: PointerWidth::U64,
        page_size_align_log2: 12,
    };
    Ok(function(steps, target)?.0.display().to_string())
}

/// The function of a chain, whether it reads strings, and what it points
/// to.
fn function(
    steps: &[Step<'_>],
    target: TargetFrontendConfig,
) -> Result<(Function, bool, Kept), Unsupported> {
    let sig = codegen::signature(target.default_call_conv);
    let mut func = Function::with_name_signature(UserFuncName::user(0, 0), sig);
    let (strings, kept) =
        codegen::build(&mut func, &mut FunctionBuilderContext::new(), target, steps)?;
    Ok((func, strings, kept))
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_calls;
