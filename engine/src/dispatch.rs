//! An execution's method calls: dispatch, arguments and their contracts,
//! extension methods, static actions.

use std::any::Any;
use std::collections::HashMap;
use std::sync::Arc;

use compiler::murano::{ArgUsage, MethodUsage, Template};
use runtime::ctx::Frame;
use runtime::host::Host;
use runtime::registry::{ArgIn, Cx, Form};
use runtime::{Dict, Env, Error, ErrorKind, Result, Value};

use crate::class::{Class, Given, Method};
use crate::contracts::Contract;
use crate::executor::{destroyed_error, Call, Executor, FrameGuard, Scope, Site};

impl Executor {
    /// Calls `method` on `this` (an object or a type) with evaluated
    /// arguments.
    pub fn invoke(
        &self,
        this: &Value,
        _dispatch: &Arc<Class>,
        method: &Arc<Method>,
        pos: Vec<Value>,
        named: Vec<(Arc<str>, Value)>,
    ) -> Result<Value> {
        let decl_class = self.class(&method.class)?;
        let legacy = decl_class.package.legacy;
        let env = self.env(legacy).clone();
        let this_v = if method.is_static() {
            Value::Type(decl_class.type_ref.clone())
        } else {
            match this {
                Value::Object(o) => Value::Object(self.plain(o)),
                other => other.clone(),
            }
        };
        let ctx0 = self.class_ctx(&decl_class, this_v.clone());
        // Objects that argument contracts create from definitions have no
        // owner.
        let ctx0 = {
            let mut f = Frame::child(&ctx0, &[]);
            f.scope = Some(
                Scope {
                    args: Some(true),
                    ..Default::default()
                }
                .into_frame_scope(),
            );
            Arc::new(f)
        };
        let (vars, how) = self.bind_args(&env, &ctx0, &decl_class, method, &this_v, pos, named)?;
        if let Some(hook) = self.call_hook() {
            let call = Call {
                this,
                plain: &this_v,
                class: &decl_class,
                method,
                vars: &vars,
                how: &how,
            };
            if let Some(r) = hook.intercept(self, &call) {
                return r;
            }
        }
        let keys = self.lock_keys(method, &this_v, &vars);
        for (i, k) in keys.iter().enumerate() {
            if let Err(e) = self.acquire(k) {
                keys[..i].iter().rev().for_each(|k| self.release(k));
                return Err(e);
            }
        }
        let r = self.run_method(&env, &decl_class, method, this_v, vars);
        for k in keys.iter().rev() {
            self.release(k);
        }
        r
    }

    /// Binds a call's arguments to `method`'s parameters, each checked by
    /// its contract (defaults filled in), with how the caller gave each
    /// standard one.
    #[allow(clippy::too_many_arguments)]
    fn bind_args(
        &self,
        env: &Env,
        ctx0: &Arc<Frame>,
        decl_class: &Arc<Class>,
        method: &Arc<Method>,
        this_v: &Value,
        pos: Vec<Value>,
        named: Vec<(Arc<str>, Value)>,
    ) -> Result<(Vec<(Arc<str>, Value)>, Vec<Given>)> {
        let mut vars: Vec<(Arc<str>, Value)> = Vec::new();
        {
            let mut seen: Vec<&str> = Vec::new();
            for (k, _) in &named {
                if seen.contains(&&**k) {
                    return Err(Error::new(
                        ErrorKind::NoMatchingMethodException,
                        format!("duplicate keyword argument {k}"),
                    ));
                }
                seen.push(k);
            }
        }
        let mut pos_it = pos.into_iter();
        let mut named = named;
        let obj_ref = match &this_v {
            Value::Object(o) => Some(o.clone()),
            _ => None,
        };
        let sig_err = || {
            Error::new(
                ErrorKind::NoMatchingMethodException,
                format!(
                    "No method \"{}\" for receiver {} matches supplied arguments",
                    method.name, decl_class.name
                ),
            )
        };
        // How each standard argument was given (for mocks, which get the
        // arguments as the caller passed them).
        let mut how: Vec<Given> = Vec::new();
        for a in &method.args {
            let v = match a.usage {
                ArgUsage::VarArgs => {
                    let rest: Vec<Value> = pos_it.by_ref().collect();
                    let mut out = Vec::new();
                    for x in rest {
                        out.push(Contract::of(&a.contract).check(
                            self,
                            env,
                            ctx0,
                            x,
                            obj_ref.as_ref(),
                            &a.name,
                        )?);
                    }
                    Value::list(out)
                }
                ArgUsage::KwArgs => {
                    let mut d = Dict::default();
                    for (k, x) in std::mem::take(&mut named) {
                        let x = Contract::of(&a.contract).check(
                            self,
                            env,
                            ctx0,
                            x,
                            obj_ref.as_ref(),
                            &a.name,
                        )?;
                        d.insert(Value::str(&*k), x);
                    }
                    Value::dict(d)
                }
                ArgUsage::Standard => {
                    let given = match pos_it.next() {
                        Some(v) => {
                            if named.iter().any(|(k, _)| *k == a.name) {
                                return Err(sig_err());
                            }
                            how.push(Given::Positional);
                            Some(v)
                        }
                        None => {
                            let v = named
                                .iter()
                                .position(|(k, _)| *k == a.name)
                                .map(|i| named.remove(i).1);
                            how.push(if v.is_some() {
                                Given::Named
                            } else {
                                Given::Default
                            });
                            v
                        }
                    };
                    let raw = match given {
                        Some(v) => v,
                        None => match &a.default {
                            Some(d) => d.eval(env, ctx0)?,
                            None => Value::Null,
                        },
                    };
                    Contract::of(&a.contract).check(
                        self,
                        env,
                        ctx0,
                        raw,
                        obj_ref.as_ref(),
                        &a.name,
                    )?
                }
            };
            vars.push((a.name.clone(), v));
        }
        if pos_it.next().is_some() || !named.is_empty() {
            return Err(sig_err());
        }
        Ok((vars, how))
    }

    /// Makes green threads due at the same time run in an order drawn from
    /// `seed` (each `Parallel` and `pselect` draws its own from the
    /// sequence) instead of FIFO order: a way to test many schedules.
    pub fn set_schedule_seed(&self, seed: Option<u64>) {
        self.lock().schedule_seed = seed;
    }

    /// Starts the execution's random generator (`random()`,
    /// `randomName()`) from `seed`, so that the run replays exactly;
    /// `None`: from the clock (the default).
    pub fn set_seed(&self, seed: Option<u64>) {
        self.rng.reseed(seed);
    }

    /// The execution's random generator.
    pub fn rng(&self) -> &runtime::rand::Rng {
        &self.rng
    }

    /// The next value of `randomName()`'s counter (1 to 1295, then round
    /// again, as murano's).
    pub(crate) fn next_name_counter(&self) -> u64 {
        let c = self
            .names
            .fetch_update(
                std::sync::atomic::Ordering::Relaxed,
                std::sync::atomic::Ordering::Relaxed,
                |c| Some((c + 1) % 1296),
            )
            .unwrap_or(1);
        if c == 0 {
            1
        } else {
            c
        }
    }

    /// The execution's green-thread scheduler (its virtual clock).
    pub fn scheduler(&self) -> &vm::coro::Scheduler {
        &self.sched
    }

    /// Runs `tasks` as green threads (at most `limit` at a time, `0`: no
    /// limit) under this execution's schedule; results in task order. A
    /// green thread that cannot be started (no address space left for its
    /// stack) is a `MemoryError`, once the threads already running end.
    pub fn run_green<T: 'static>(
        &self,
        tasks: Vec<Box<dyn FnOnce() -> T>>,
        limit: usize,
    ) -> Result<Vec<T>> {
        let seed = self.lock().schedule_seed.as_mut().map(vm::coro::next_draw);
        self.sched
            .run_seeded(tasks, limit, seed)
            .map_err(|e| Error::new(ErrorKind::MemoryError, e))
    }

    /// Calls extension method `m` of `class` on `receiver`, which becomes
    /// its first argument (`args` gives the others). As murano's extension
    /// stub checks that argument to choose the overload
    /// (`ContractedValue(..., with_check=True)` in
    /// murano/dsl/yaql_integration.py), a receiver its contract refuses
    /// leaves the call to the standard yaql method of that name (`None`),
    /// or, without one, matches nothing: `NoMatchingMethodException`.
    pub(crate) fn extend(
        &self,
        cx: &Cx,
        receiver: &Value,
        class: &Arc<Class>,
        m: &Arc<Method>,
        args: impl FnOnce() -> Result<(Vec<Value>, Vec<(Arc<str>, Value)>)>,
    ) -> Option<Result<Value>> {
        let t = Value::Type(class.type_ref.clone());
        if let Some(first) = m.args.iter().find(|a| a.usage == ArgUsage::Standard) {
            let env = self.env(class.package.legacy);
            let ctx = self.class_ctx(class, t.clone());
            match Contract::of(&first.contract).check(
                self,
                env,
                &ctx,
                receiver.clone(),
                None,
                &first.name,
            ) {
                Err(e) if *e.error_kind() == ErrorKind::ContractViolationException => {
                    if cx
                        .env
                        .registry()
                        .has_form(&m.name, runtime::registry::Form::Method)
                    {
                        return None;
                    }
                    return Some(Err(Error::new(
                        ErrorKind::NoMatchingMethodException,
                        format!(
                            "No method \"{}\" for receiver {} matches supplied arguments",
                            m.name,
                            runtime::pyrepr::to_str(receiver)
                        ),
                    )));
                }
                Err(e) => return Some(Err(e)),
                Ok(_) => {}
            }
        }
        Some(args().and_then(|(mut pos, named)| {
            pos.insert(0, receiver.clone());
            self.invoke(&t, class, m, pos, named)
        }))
    }

    /// The keys a method call locks on (`Synchronize` meta: `onThis`,
    /// default true for instance methods, and `onArgs`).
    pub(crate) fn lock_keys(
        &self,
        method: &Method,
        this: &Value,
        vars: &[(Arc<str>, Value)],
    ) -> Vec<String> {
        let mut on_this = !method.is_static();
        let mut on_args: Vec<String> = Vec::new();
        for m in &method.decl.meta {
            if m.name == "io.murano.metadata.engine.Synchronize" {
                if let Some(d) = template_dict(&m.props) {
                    if let Some(v) = d.get("onThis") {
                        on_this = v.truthy();
                    }
                    match d.get("onArgs") {
                        Some(Value::Str(s)) => on_args.push(s.to_string()),
                        Some(Value::List(l)) => {
                            on_args.extend(l.iter().map(runtime::pyrepr::to_str))
                        }
                        _ => {}
                    }
                }
            }
        }
        // One lock per combination of the receiver (when `onThis`) and the
        // values of the `onArgs` arguments.
        let this_key = match this {
            Value::Object(o) => format!("{}", o.slot),
            other => runtime::pyrepr::repr(other),
        };
        if !on_this && on_args.is_empty() {
            return Vec::new();
        }
        let mut k = format!("{}#", method.name);
        if on_this {
            k.push_str(&this_key);
        }
        {
            for a in &on_args {
                let v = vars.iter().find(|(n, _)| &**n == a).map(|x| &x.1);
                let vk = match v {
                    Some(Value::Object(o)) => format!("obj{}", o.slot),
                    Some(v) => runtime::pyrepr::repr(v),
                    None => "null".into(),
                };
                k.push_str(&format!("|{a}={vk}"));
            }
        }
        vec![k]
    }

    /// Takes the lock `key` for the running green thread (re-entrant, as
    /// murano's `_acquire_method_lock` in murano/dsl/executor.py lets the
    /// thread that holds a method lock call it again); another thread's
    /// lock parks this one until it is released. A deadlock fails with
    /// `DeadlockError` naming the waiting threads.
    pub(crate) fn acquire(&self, key: &str) -> Result<()> {
        let me = vm::coro::current_id();
        loop {
            let holder = {
                let mut st = self.lock();
                let e = st.locks.entry(key.to_string()).or_insert((me, 0));
                if e.1 == 0 || e.0 == me {
                    e.0 = me;
                    e.1 += 1;
                    return Ok(());
                }
                e.0
            };
            self.sched
                .park(format!("waits for {key} held by T{holder}"))
                .map_err(|msg| Error::new(ErrorKind::DeadlockError, msg))?;
        }
    }

    pub(crate) fn release(&self, key: &str) {
        let mut st = self.lock();
        if let Some(e) = st.locks.get_mut(key) {
            e.1 = e.1.saturating_sub(1);
            if e.1 == 0 {
                st.locks.remove(key);
                self.sched.unpark_all();
            }
        }
    }

    /// Finds an extension method `name` visible from `from` (its own
    /// methods and its `Import`s).
    pub fn find_extension(&self, from: &Class, name: &str) -> Option<(Arc<Class>, Arc<Method>)> {
        let mut names: Vec<String> = vec![from.name.to_string()];
        names.extend(from.decl.import.iter().cloned());
        for n in names {
            if let Ok(c) = self.class(&n) {
                if let Some(m) = c.methods.get(name) {
                    if m.usage == MethodUsage::Extension {
                        return Some((c.clone(), m.clone()));
                    }
                }
            }
        }
        None
    }

    /// Resolves and calls `receiver.name(args)`.
    pub fn call(
        &self,
        receiver: &Value,
        name: &str,
        pos: Vec<Value>,
        named: Vec<(Arc<str>, Value)>,
        external: bool,
    ) -> Result<Option<Value>> {
        let class = match receiver {
            Value::Object(o) => self.dispatch_class(o)?,
            Value::Type(t) => self.class(&t.name)?,
            _ => return Ok(None),
        };
        let Some(m) = class.find_method(name) else {
            return Ok(None);
        };
        if external && !m.is_action() {
            return Err(Error::new(
                ErrorKind::MethodNotExposed,
                format!("Method {name} is not exposed to the API"),
            ));
        }
        if let (Value::Type(_), false) = (receiver, m.is_static()) {
            return Err(Error::new(
                ErrorKind::NoMethodFound,
                format!("Method {name} is not static"),
            ));
        }
        self.invoke(receiver, &class, &m, pos, named).map(Some)
    }
}

/// The constant mapping of a meta declaration's properties.
fn template_dict(t: &Template) -> Option<HashMap<String, Value>> {
    use compiler::murano::TemplateKind;
    match &t.kind {
        TemplateKind::Dict(items) => Some(
            items
                .iter()
                .filter_map(|(k, v)| {
                    let key = k.as_str()?.to_string();
                    let val = match &v.kind {
                        TemplateKind::Value(x) => x.clone(),
                        TemplateKind::List(xs) => Value::list(
                            xs.iter()
                                .filter_map(|x| match &x.kind {
                                    TemplateKind::Value(y) => Some(y.clone()),
                                    _ => None,
                                })
                                .collect(),
                        ),
                        _ => return None,
                    };
                    Some((key, val))
                })
                .collect(),
        ),
        _ => None,
    }
}

impl Host for Executor {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_arc(self: Arc<Self>) -> Arc<dyn Any + Send + Sync> {
        self
    }

    /// Objects and types dispatch here; a plain value only when some
    /// loaded class declares an extension method of that name.
    fn may_handle(&self, receiver: &Value, name: &str) -> bool {
        matches!(receiver, Value::Object(_) | Value::Type(_))
            || self.catalog.extension_names.contains(name)
    }

    fn rng(&self) -> Option<&runtime::rand::Rng> {
        Some(&self.rng)
    }

    fn call_method(
        &self,
        cx: &Cx,
        receiver: &Value,
        name: &str,
        pos: &[ArgIn],
        named: &[(Arc<str>, ArgIn)],
    ) -> Option<Result<Value>> {
        let _gc_root = FrameGuard::push(self, cx.ctx); // gc: the caller's locals stay alive
        let _site = Site::enter(self, cx.ctx); // the call hook: the call site (mocks' withOriginal)
        if let Some(e) = destroyed_error(self, receiver) {
            return Some(Err(e));
        }
        // Arguments reach MuranoPL methods evaluated, lazy sequences as lists.
        let force = |a: &ArgIn| -> Result<Value> {
            let v = match a {
                ArgIn::Val(v) => v.clone(),
                ArgIn::Thunk(c) => c.call(cx.env, &[])?,
                ArgIn::Skip => Value::Null,
            };
            stdlib::finalize(cx.env, v)
        };
        let args = || -> Result<(Vec<Value>, Vec<(Arc<str>, Value)>)> {
            let mut p = Vec::new();
            for a in pos {
                p.push(force(a)?);
            }
            let mut n = Vec::new();
            for (k, a) in named {
                n.push((k.clone(), force(a)?));
            }
            Ok((p, n))
        };
        let own = match receiver {
            Value::Object(o) => match self.dispatch_class(o) {
                Ok(c) => Some(c),
                Err(e) => return Some(Err(e)),
            },
            Value::Type(t) => match self.class(&t.name) {
                Ok(c) => Some(c),
                Err(e) => return Some(Err(e)),
            },
            _ => None,
        };
        if let Some(class) = &own {
            if class.ambiguous_method(name) {
                let mut msg = format!("Found more that one method \"{name}\"");
                if let Some(why) = class.conflict_behind(&|c| c.methods.contains_key(name)) {
                    msg = format!("{msg}: {why}");
                }
                return Some(Err(Error::new(ErrorKind::AmbiguousMethodName, msg)));
            }
            if let Some(m) = class.find_method(name) {
                if let (Value::Type(_), false) = (receiver, m.is_static()) {
                    return Some(Err(Error::new(
                        ErrorKind::NoMatchingMethodException,
                        format!("Method {name} of {} is not static", class.name),
                    )));
                }
                // An extension method of the object's own class is still
                // an extension: the object is its first argument (murano's
                // `_create_extension_mpl_stub` in murano/dsl/yaql_integration.py).
                if !(m.usage == MethodUsage::Extension && matches!(receiver, Value::Object(_))) {
                    return Some(args().and_then(|(p, n)| self.invoke(receiver, class, &m, p, n)));
                }
                let eclass = match self.class(&m.class) {
                    Ok(c) => c,
                    Err(e) => return Some(Err(e)),
                };
                return self.extend(cx, receiver, &eclass, &m, args);
            }
        }
        // Extension methods visible from the calling class.
        if !self.catalog.extension_names.contains(name) {
            return None;
        }
        let ext = self
            .ctx_class(cx.ctx)
            .and_then(|caller| self.find_extension(&caller, name));
        let (eclass, m) = ext?;
        self.extend(cx, receiver, &eclass, &m, args)
    }
}

/// Calls a function of the registry by name (used by engine functions).
pub fn call_registry(cx: &Cx, name: &str, form: Form, args: Vec<Value>) -> Result<Value> {
    let pos: Vec<ArgIn> = args.into_iter().map(ArgIn::Val).collect();
    cx.env.registry().call(cx, name, None, form, &pos, &[])
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::executor::CallHook;
    use crate::package::Package;

    /// Answers `m` with 42 and counts the call sites it saw.
    #[derive(Default)]
    struct Answer {
        sites: AtomicUsize,
    }

    impl CallHook for Answer {
        fn enter_site(&self, _: &Arc<Frame>) -> bool {
            self.sites.fetch_add(1, Ordering::Relaxed);
            false
        }
        fn leave_site(&self) {}
        fn intercept(&self, _: &Executor, call: &Call<'_>) -> Option<Result<Value>> {
            (&*call.method.name == "m").then_some(Ok(Value::Int(42)))
        }
        fn as_any(&self) -> &dyn Any {
            self
        }
    }

    /// A call hook sees calls before their bodies run and may answer
    /// them; one per execution.
    #[test]
    fn a_call_hook_intercepts_calls() {
        let src = "Name: T\nMethods:\n  m:\n    Usage: Static\n    Scope: Public\n    Body:\n      - Return: 1\n  n:\n    Usage: Static\n    Scope: Public\n    Body:\n      - Return: :T.m() + 1\n";
        let pkg = Package::new("tests", "0.0.0", "1.4", &[("T.yaml".into(), src.into())]).unwrap();
        let ex = Executor::new(vec![pkg]);
        let t = Value::Type(ex.class("T").unwrap().type_ref.clone());
        let call = |name: &str| ex.call(&t, name, vec![], vec![], true).unwrap().unwrap();
        assert_eq!(call("n"), Value::Int(2));
        let hook = Arc::new(Answer::default());
        assert!(ex.set_call_hook(hook.clone()));
        assert!(!ex.set_call_hook(Arc::new(Answer::default())));
        assert_eq!(call("m"), Value::Int(42));
        assert_eq!(call("n"), Value::Int(43));
        assert_eq!(hook.sites.load(Ordering::Relaxed), 1);
    }
}
