//! The MuranoPL test framework's engine side (murano-test-runner): method
//! mocks set up with `inject`, `withOriginal` and `originalMethod` inside
//! mock expressions, and the native part of `io.murano.test.TestFixture`
//! (`load`, `startEnv`, `finishEnv`).
//!
//! * `inject(Type|$obj, methodName, $mockObj, mockMethodName)`: calls of
//!   `methodName` on objects of `Type` (or on `$obj` only) run
//!   `$mockObj.mockMethodName(...)` with the original arguments instead.
//! * `inject(Type|$obj, methodName, expr)`: such calls evaluate `expr` in
//!   the context `inject` was called in (per call). Inside it,
//!   `withOriginal(name => expr, ...)` evaluates expressions in the
//!   intercepted call's context (its arguments by name, `$this` the
//!   receiver) and gives a context with them bound as `$name` (use with
//!   `->`), and `originalMethod()` runs the real method.
//!
//! Mocks belong to one executor: the first `inject` installs a [`Mocks`]
//! as its call hook ([`Executor::set_call_hook`]), which sees every method
//! call before its body runs. They stay until [`clear_mocks`] or the end of
//! the execution (the test runner makes a fresh executor per test).

use runtime::ErrorKind;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use runtime::ctx::Frame;
use runtime::registry::{force_val, kw, lazy, p, Args, Cx, Registry, Ty};
use runtime::value::ObjRef;
use runtime::{Error, Result, Value};

use compiler::murano::ArgUsage;

use crate::class::{Class, Given, Method};
use crate::exec;
use crate::executor::{Call, CallHook, Scope};
use crate::executor::{Executor, ExecutorOf};
use crate::model;

/// What a mocked call does instead.
#[derive(Clone)]
enum Action {
    /// Call a method of another object (the test fixture).
    Method { obj: Value, name: String },
    /// Evaluate an expression (a lazily compiled argument).
    Expr {
        expr: Value,
        legacy: bool,
        caller: Option<Arc<str>>,
    },
}

/// What a mock applies to.
#[derive(Clone)]
enum Target {
    /// Objects of a class (or derived classes), and its static methods.
    Class(String),
    /// One object (slot, store).
    Object(u32, u64),
}

#[derive(Clone)]
struct Mock {
    target: Target,
    method: String,
    action: Action,
}

/// What a mock expression's frame knows of the call it stands in for.
#[derive(Clone)]
pub struct MockScope {
    /// The intercepted call's context (`withOriginal`).
    original: Arc<Frame>,
    /// The pending call's id (`originalMethod()`).
    call: i64,
    /// The class of the intercepted method.
    class: Arc<str>,
}

/// The mock scope of a frame scope (see [`Scope::hook`]).
fn mock_scope(s: &Scope) -> Option<MockScope> {
    s.hook.as_ref()?.downcast_ref::<MockScope>().cloned()
}

/// An intercepted call, for `originalMethod()`.
struct Pending {
    this: Value,
    class: Arc<Class>,
    method: Arc<Method>,
    vars: Vec<(Arc<str>, Value)>,
}

/// The test framework's state of one execution: its mocks, the call
/// sites of the running method calls (per green thread) and the
/// intercepted calls `originalMethod()` may still run.
#[derive(Default)]
pub struct Mocks {
    /// True once a mock exists: until then calls skip every other field.
    active: AtomicBool,
    inner: Mutex<MocksInner>,
}

#[derive(Default)]
struct MocksInner {
    mocks: Vec<Mock>,
    sites: HashMap<u64, Vec<Arc<Frame>>>,
    pending: Vec<(i64, Arc<Pending>)>,
    next_id: i64,
}

impl Mocks {
    fn lock(&self) -> std::sync::MutexGuard<'_, MocksInner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn active(&self) -> bool {
        self.active.load(Ordering::Relaxed)
    }

    fn site(&self) -> Option<Arc<Frame>> {
        let me = vm::coro::current_id();
        self.lock().sites.get(&me).and_then(|s| s.last().cloned())
    }
}

/// The mocks of `ex`, if any were injected.
fn mocks(ex: &Executor) -> Option<&Mocks> {
    ex.call_hook()?.as_any().downcast_ref::<Mocks>()
}

/// The mocks of `ex`, installed as its call hook if need be.
fn mocks_installed(ex: &Executor) -> Result<&Mocks> {
    if ex.call_hook().is_none() {
        ex.set_call_hook(Arc::new(Mocks::default()));
    }
    mocks(ex).ok_or_else(|| {
        Error::new(
            ErrorKind::RuntimeError,
            "another call hook than the test framework's is installed",
        )
    })
}

impl CallHook for Mocks {
    /// Remembers the caller's context of a method call while mocks are
    /// active (the "original context" of `withOriginal`).
    fn enter_site(&self, ctx: &Arc<Frame>) -> bool {
        if !self.active() {
            return false;
        }
        let me = vm::coro::current_id();
        self.lock().sites.entry(me).or_default().push(ctx.clone());
        true
    }

    fn leave_site(&self) {
        let me = vm::coro::current_id();
        if let Some(s) = self.lock().sites.get_mut(&me) {
            s.pop();
        }
    }

    fn intercept(&self, ex: &Executor, call: &Call<'_>) -> Option<Result<Value>> {
        intercept(self, ex, call)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Drops every mock of an executor.
pub fn clear_mocks(ex: &Executor) {
    if let Some(mocks) = mocks(ex) {
        mocks.lock().mocks.clear();
        mocks.active.store(false, Ordering::Relaxed);
    }
}

/// The mock hook: called by the executor with a method's arguments bound,
/// before its body runs. `this` is the receiver as called (a `cast` view
/// is not intercepted), `plain` the receiver the body would run with.
/// Returns the mock's result when a mock applies.
fn intercept(mocks: &Mocks, ex: &Executor, call: &Call<'_>) -> Option<Result<Value>> {
    let Call {
        this,
        plain,
        class,
        method,
        vars,
        how,
    } = *call;
    if !mocks.active() || method.name.starts_with('.') {
        return None;
    }
    let candidates: Vec<Mock> = mocks
        .lock()
        .mocks
        .iter()
        .filter(|m| *m.method == *method.name)
        .cloned()
        .collect();
    if candidates.is_empty() {
        return None;
    }
    let (slot, actual) = match this {
        Value::Object(o) => {
            let actual = ex.class_of(o).ok()?;
            if *o.class != *actual.key {
                // A `cast`/`super` view: the real method runs.
                return None;
            }
            (Some((o.slot, o.store)), actual)
        }
        Value::Type(t) => (None, ex.class(&t.name).ok()?),
        _ => return None,
    };
    // Object mocks win over class mocks; the latest injection wins.
    let found = candidates
        .iter()
        .rev()
        .find(|m| matches!(m.target, Target::Object(s, st) if Some((s, st)) == slot))
        .or_else(|| {
            candidates
                .iter()
                .rev()
                .find(|m| matches!(&m.target, Target::Class(c) if actual.is_a(c)))
        })?
        .clone();
    Some(run_mock(
        mocks,
        ex,
        &found.action,
        plain,
        class,
        method,
        vars,
        how,
    ))
}

#[allow(clippy::too_many_arguments)]
fn run_mock(
    mocks: &Mocks,
    ex: &Executor,
    action: &Action,
    plain: &Value,
    class: &Arc<Class>,
    method: &Arc<Method>,
    vars: &[(Arc<str>, Value)],
    how: &[Given],
) -> Result<Value> {
    match action {
        Action::Method { obj, name } => {
            // The mock method gets the arguments as the caller passed them
            // (defaults of the original are not filled in).
            let mut pos = Vec::new();
            let mut named: Vec<(Arc<str>, Value)> = Vec::new();
            let mut how = how.iter();
            for (a, (n, v)) in method.args.iter().zip(vars) {
                match a.usage {
                    ArgUsage::Standard => match how.next() {
                        Some(Given::Positional) => pos.push(v.clone()),
                        Some(Given::Named) => named.push((n.clone(), v.clone())),
                        _ => {}
                    },
                    ArgUsage::VarArgs => {
                        if let Value::List(l) = v {
                            pos.extend(l.iter().cloned());
                        }
                    }
                    ArgUsage::KwArgs => {
                        if let Value::Dict(d) = v {
                            for (k, x) in d.iter() {
                                named.push((runtime::pyrepr::to_str(k).into(), x.clone()));
                            }
                        }
                    }
                }
            }
            match ex.call(obj, name, pos, named, false)? {
                Some(v) => Ok(v),
                None => Err(Error::new(
                    ErrorKind::NoMethodFound,
                    format!("Mock method {name} is not found"),
                )),
            }
        }
        Action::Expr {
            expr,
            legacy,
            caller,
        } => {
            let Value::Lambda(closure) = expr else {
                return Ok(expr.clone());
            };
            let pending = Arc::new(Pending {
                this: plain.clone(),
                class: class.clone(),
                method: method.clone(),
                vars: vars.to_vec(),
            });
            let id = {
                let mut m = mocks.lock();
                m.next_id += 1;
                m.next_id
            };
            // The original context: the caller's (murano's), or, for a
            // call from outside MuranoPL, the method's arguments by name.
            let orig = match mocks.site() {
                Some(site) => site,
                None => {
                    let mut f = Frame::child(&ex.class_ctx(class, plain.clone()), &[]);
                    for (k, v) in vars {
                        f.vars.push((k.clone(), v.clone()));
                    }
                    Arc::new(f)
                }
            };
            let mut f = Frame::child(&closure.ctx, &[]);
            f.scope = Some(
                Scope {
                    hook: Some(Arc::new(MockScope {
                        original: orig,
                        call: id,
                        class: class.name.clone(),
                    })),
                    ..Scope::default()
                }
                .into_frame_scope(),
            );
            mocks.lock().pending.push((id, pending));
            let env = ex.env(*legacy).clone();
            // The expression runs as code of the class that injected it.
            let prev = ex.set_caller(caller.clone());
            let r = closure.call_in(&env, &Arc::new(f), &[]);
            ex.set_caller(prev);
            mocks.lock().pending.retain(|(i, _)| *i != id);
            r
        }
    }
}

fn target_of(ex: &Executor, v: &Value) -> Result<Target> {
    match v {
        Value::Object(o) => Ok(Target::Object(o.slot, o.store)),
        Value::Type(t) => Ok(Target::Class(t.name.to_string())),
        Value::Str(s) => {
            // A class name given as a string.
            let c = ex.class(s)?;
            Ok(Target::Class(c.name.to_string()))
        }
        other => Err(Error::type_(format!(
            "inject: expected a class or an object, got {}",
            other.type_name()
        ))),
    }
}

/// `inject(target, targetMethod, expr)` and
/// `inject(target, targetMethod, mockObject, mockName)`.
fn inject(cx: &Cx, a: Args) -> Result<Value> {
    let ex = cx.executor()?;
    let target = match a.get(0) {
        Value::Str(s) => {
            // Resolve in the calling class's namespaces.
            let full = match ex.ctx_class(cx.ctx) {
                Some(c) => c.resolve(s),
                None => s.to_string(),
            };
            target_of(&ex, &Value::str(full))?
        }
        other => target_of(&ex, other)?,
    };
    let method = a.str(1).to_string();
    let action = match a.get(3) {
        Value::Null => Action::Expr {
            expr: a.get(2).clone(),
            legacy: cx.env.options().legacy,
            caller: ex.ctx_class(cx.ctx).map(|c| c.name.clone()),
        },
        name => {
            let obj = force_val(cx, a.get(2))?;
            if !matches!(obj, Value::Object(_)) {
                return Err(Error::type_("inject: the mock object must be an object"));
            }
            Action::Method {
                obj,
                name: runtime::pyrepr::to_str(name),
            }
        }
    };
    let mocks = mocks_installed(&ex)?;
    mocks.lock().mocks.push(Mock {
        target,
        method,
        action,
    });
    mocks.active.store(true, Ordering::Relaxed);
    Ok(Value::Null)
}

/// `withOriginal(name => expr, ...)`: a context with each expression
/// evaluated in the intercepted call's context, bound as `$name`.
fn with_original(cx: &Cx, a: Args) -> Result<Value> {
    let Some(mock) = Scope::find(cx.ctx, mock_scope) else {
        return Err(Error::new(
            ErrorKind::RuntimeError,
            "withOriginal() is only available inside a mock expression",
        ));
    };
    let ex = cx.executor()?;
    let orig = mock.original;
    let orig_class: Option<Arc<str>> = match ex.ctx_class(&orig) {
        Some(c) => Some(c.name.clone()),
        None => Some(mock.class),
    };
    let mut f = Frame::child(cx.ctx, &[]);
    for (k, v) in a.kw {
        let x = match &v {
            Value::Lambda(c) => {
                // Evaluated as code of the calling method's class.
                let prev = ex.set_caller(orig_class.clone());
                let r = c.call_in(cx.env, &orig, &[]);
                ex.set_caller(prev);
                r?
            }
            other => other.clone(),
        };
        f.vars.push((k, x));
    }
    Ok(Value::Context(Arc::new(f)))
}

/// `originalMethod()`: runs the intercepted method for real.
fn original_method(cx: &Cx, _: Args) -> Result<Value> {
    let ex = cx.executor()?;
    let Some(id) = Scope::find(cx.ctx, |s| mock_scope(s).map(|m| m.call)) else {
        return Err(Error::new(
            ErrorKind::RuntimeError,
            "originalMethod() is only available inside a mock expression",
        ));
    };
    let pending = mocks(&ex)
        .ok_or_else(|| Error::new(ErrorKind::RuntimeError, "the mocked call is over"))?
        .lock()
        .pending
        .iter()
        .find(|(i, _)| *i == id)
        .map(|(_, c)| c.clone());
    let Some(c) = pending else {
        return Err(Error::new(
            ErrorKind::RuntimeError,
            "the mocked call is over",
        ));
    };
    let env = ex.env(c.class.package.legacy).clone();
    exec::run_method(
        &ex,
        &env,
        &c.class,
        &c.method,
        c.this.clone(),
        c.vars.clone(),
    )
}

/// `TestFixture.load(model)`: an object model (`{Objects: ...}`) or one
/// object definition, loaded into live objects; the root object.
fn test_load(cx: &Cx, a: Args) -> Result<Value> {
    let ex = cx.executor()?;
    let v = a.get(0);
    let is_model = matches!(v, Value::Dict(d) if d.get(&Value::str("Objects")).is_some());
    let root: Option<Arc<ObjRef>> = if is_model {
        model::load_model(&ex, v)?
    } else {
        let resolver = ex.ctx_class(cx.ctx);
        model::load(&ex, v, None, resolver.as_deref(), None)?
    };
    Ok(root.map(Value::Object).unwrap_or(Value::Null))
}

/// `TestFixture.startEnv()` / `finishEnv()`: session boundaries (nothing
/// is asynchronous in the simulated cloud).
fn test_env_session(_: &Cx, _: Args) -> Result<Value> {
    Ok(Value::Null)
}

/// `testContains(needle, haystack)`: Python's `in` for the assertions.
fn test_contains(cx: &Cx, a: Args) -> Result<Value> {
    let needle = a.get(0);
    Ok(Value::Bool(match a.get(1) {
        Value::Str(s) => match needle {
            Value::Str(n) => s.contains(&**n),
            _ => false,
        },
        Value::Dict(d) => d.get(needle).is_some(),
        Value::Null => false,
        other => cx.to_vec(other)?.iter().any(|x| x == needle),
    }))
}

/// `name(object)`: the object's `?.name` (murano's C1 `name()`; the
/// applications library and its tests use it).
fn object_name(cx: &Cx, a: Args) -> Result<Value> {
    let ex = cx.executor()?;
    match a.get(0) {
        Value::Object(o) => ex.with_obj(o, |s| s.name.clone()),
        _ => Ok(Value::Null),
    }
}

fn is_object(v: &Value) -> bool {
    matches!(v, Value::Object(_))
}

/// Registers the test-runner functions.
pub fn register(r: &mut Registry) {
    r.function(
        "inject",
        vec![
            p("target", Ty::Any),
            p("targetMethod", Ty::Str),
            lazy("expr"),
            p("mockName", Ty::Any).opt(),
        ],
        inject,
    );
    r.function(
        "withOriginal",
        vec![kw("kwargs", Ty::Any).nullable().lazy()],
        with_original,
    );
    r.function("originalMethod", vec![], original_method);
    if r.get("name").is_none() {
        // murano's `name(object_)`: null for null.
        r.function(
            "name",
            vec![p("object", Ty::Check(is_object)).nullable()],
            object_name,
        );
    }
    r.function(
        "testFixtureLoad",
        vec![p("model", Ty::Any).nullable()],
        test_load,
    );
    r.function("testFixtureSession", vec![], test_env_session);
    r.function(
        "testContains",
        vec![
            p("needle", Ty::Any).nullable(),
            p("haystack", Ty::Any).nullable(),
        ],
        test_contains,
    );
}

/// The base class of MuranoPL test cases.
pub const FIXTURE: &str = "io.murano.test.TestFixture";

/// The tests of class `name` as murano-test-runner finds them: its own
/// methods whose names start with `test`, in declaration order, when the
/// class is a test case (it extends [`FIXTURE`] and is known by that name);
/// `None` for any other class.
pub fn tests_of(ex: &Executor, name: &str) -> Option<Vec<String>> {
    let class = ex.class(name).ok()?;
    if *class.name != *name || !class.is_a(FIXTURE) || &*class.name == FIXTURE {
        return None;
    }
    Some(
        class
            .decl
            .methods
            .iter()
            .map(|m| m.name.to_string())
            .filter(|m| m.starts_with("test"))
            .collect(),
    )
}

/// Runs one test as murano-test-runner does: a fresh object of `class`,
/// `setUp`, the test, then `tearDown` even when the test failed. The
/// test's error wins over `tearDown`'s.
pub fn run_test(ex: &Executor, class: &str, test: &str) -> Result<()> {
    let mut header = runtime::Dict::default();
    header.insert(Value::str("type"), Value::str(class));
    header.insert(Value::str("id"), Value::str(ex.new_id()));
    let mut def = runtime::Dict::default();
    def.insert(Value::str("?"), Value::dict(header));
    let obj = model::load(ex, &Value::dict(def), None, None, None)?
        .ok_or_else(|| Error::new(ErrorKind::NoClassFound, format!("could not create {class}")))?;
    let this = Value::Object(obj);
    ex.call(&this, "setUp", vec![], vec![], false)?;
    let r = ex.call(&this, test, vec![], vec![], false);
    let down = ex.call(&this, "tearDown", vec![], vec![], false);
    if r?.is_none() {
        return Err(Error::new(
            ErrorKind::NoMethodFound,
            format!("method {test} is not found in {class}"),
        ));
    }
    down.map(|_| ())
}
