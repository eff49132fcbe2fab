//! An execution's method calls: dispatch, arguments and their contracts,
//! extension methods, static actions.

use super::*;

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
                exec::Scope {
                    args: Some(true),
                    ..Default::default()
                }
                .into_frame_scope(),
            );
            Arc::new(f)
        };
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
                        out.push(a.contract.check(
                            self,
                            &env,
                            &ctx0,
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
                        let x =
                            a.contract
                                .check(self, &env, &ctx0, x, obj_ref.as_ref(), &a.name)?;
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
                            Some(d) => d.eval(&env, &ctx0)?,
                            None => Value::Null,
                        },
                    };
                    a.contract
                        .check(self, &env, &ctx0, raw, obj_ref.as_ref(), &a.name)?
                }
            };
            vars.push((a.name.clone(), v));
        }
        if pos_it.next().is_some() || !named.is_empty() {
            return Err(sig_err());
        }
        if let Some(r) = testing::intercept(self, this, &this_v, &decl_class, method, &vars, &how) {
            return r;
        }
        let keys = self.lock_keys(method, &this_v, &vars);
        for (i, k) in keys.iter().enumerate() {
            if let Err(e) = self.acquire(k) {
                keys[..i].iter().rev().for_each(|k| self.release(k));
                return Err(e);
            }
        }
        let r = exec::run_method(self, &env, &decl_class, method, this_v, vars);
        for k in keys.iter().rev() {
            self.release(k);
        }
        r
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
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |c| {
                Some((c + 1) % 1296)
            })
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
            match first
                .contract
                .check(self, env, &ctx, receiver.clone(), None, &first.name)
            {
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

    /// The plain reference of an object (drops a `cast`/`super` view).
    pub fn plain(&self, r: &Arc<ObjRef>) -> Arc<ObjRef> {
        self.with_obj(r, |o| o.r.clone())
            .unwrap_or_else(|_| r.clone())
    }

    /// A view of an object as one of its classes (`cast`, `super`).
    pub fn view(&self, r: &Arc<ObjRef>, class: &str) -> Arc<ObjRef> {
        Arc::new(ObjRef {
            id: r.id.clone(),
            class: class.into(),
            slot: r.slot,
            store: r.store,
        })
    }

    /// The class methods are looked up from: the view's class.
    pub fn dispatch_class(&self, r: &ObjRef) -> Result<Arc<Class>> {
        self.class_of(r)?;
        self.class(&r.class)
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
