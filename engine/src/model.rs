//! Object models in: `?` headers and `:Type` snippets, ownership by
//! nesting, references by id, property initialization through contracts,
//! `.init` in dependency order, and `ObjectsCopy` destruction.

use runtime::ErrorKind;
use std::collections::HashMap;
use std::sync::Arc;

use compiler::murano::PropertyUsage;
use runtime::registry::Cx;
use runtime::value::ObjRef;
use runtime::{Dict, Error, Result, Value};

use crate::class::Class;
use crate::contracts::plan::ObjectPlan;
use crate::contracts::Contract;
use crate::defs::{def_type, parse_def};
use crate::executor::Executor;

struct Loader<'a> {
    ex: &'a Executor,
    created: Vec<(Arc<ObjRef>, Dict)>,
    /// Index of `created` by the model's ids.
    by_id: std::collections::HashMap<String, Arc<ObjRef>>,
    /// Give new objects fresh ids (snippets loaded by `new()` and
    /// `class()`); references to the snippet's ids map through `aliases`.
    fresh: bool,
    aliases: Vec<(String, Arc<ObjRef>)>,
    /// Objects whose header says `destroyed: true`.
    destroyed: Vec<Arc<ObjRef>>,
}

impl Loader<'_> {
    /// Creates objects for every definition in `v` (recursively).
    fn scan(
        &mut self,
        v: &Value,
        owner: Option<Arc<ObjRef>>,
        resolver: Option<&Class>,
        default: Option<&str>,
    ) -> Result<Option<Arc<ObjRef>>> {
        self.scan_at(v, owner, resolver, default, JsonPath::root("$"))
    }

    fn scan_at(
        &mut self,
        v: &Value,
        owner: Option<Arc<ObjRef>>,
        resolver: Option<&Class>,
        default: Option<&str>,
        path: JsonPath<'_>,
    ) -> Result<Option<Arc<ObjRef>>> {
        if let Some(def) = parse_def(self.ex, resolver, v, default) {
            let class = self.ex.class(&def.class)?;
            let id = def.id.clone();
            if let Some(id) = &id {
                if let Some(existing) = self.by_id.get(id) {
                    return Ok(Some(existing.clone()));
                }
                if let Some((_, r)) = self.aliases.iter().find(|(k, _)| k == id) {
                    return Ok(Some(r.clone()));
                }
            }
            let r = if self.fresh {
                let r = self.ex.create(&class, None, owner);
                if let Some(id) = &id {
                    self.aliases.push((id.clone(), r.clone()));
                }
                r
            } else {
                self.ex.create(&class, id.clone(), owner)
            };
            self.ex.with_obj(&r, |o| {
                o.name = def.name.clone();
                o.metadata = def.metadata.clone();
                if !def.designer.is_empty() {
                    o.designer = Some(Box::new(def.designer.clone()));
                }
            })?;
            self.ex.set_path(&r, path.render());
            if let Some(id) = &id {
                self.by_id.insert(id.clone(), r.clone());
            }
            self.created.push((r.clone(), def.props.clone()));
            if def.destroyed {
                self.destroyed.push(r.clone());
            }
            for (k, x) in def.props.iter() {
                // A property whose contract is `template()` keeps object
                // definitions as data: they are not objects of this model.
                let is_template = k.as_str().is_some_and(|name| {
                    class
                        .find_prop(name)
                        .is_some_and(|(_, p)| Contract::of(&p.contract).is_template())
                });
                if is_template {
                    continue;
                }
                self.scan_at(
                    x,
                    Some(r.clone()),
                    Some(&class),
                    None,
                    path.child(Step::Key(k)),
                )?;
            }
            return Ok(Some(r));
        }
        match v {
            Value::List(l) => {
                for (i, x) in l.iter().enumerate() {
                    self.scan_at(x, owner.clone(), resolver, None, path.child(Step::Index(i)))?;
                }
            }
            Value::Dict(d) => {
                for (k, x) in d.iter() {
                    self.scan_at(x, owner.clone(), resolver, None, path.child(Step::Key(k)))?;
                }
            }
            _ => {}
        }
        Ok(None)
    }

    /// Replaces nested definitions by their objects' ids so that
    /// `class()` contracts find the created objects.
    /// [`Loader::replace_defs`] over an object's properties, leaving
    /// `template()` properties as they are.
    fn replace_props(&self, props: &Dict, class: &Class) -> Dict {
        let mut out = Dict::default();
        for (k, x) in props.iter() {
            let is_template = k.as_str().is_some_and(|name| {
                class
                    .find_prop(name)
                    .is_some_and(|(_, p)| Contract::of(&p.contract).is_template())
            });
            let v = if is_template {
                x.clone()
            } else {
                self.replace_defs(x, Some(class))
            };
            out.insert(k.clone(), v);
        }
        out
    }

    fn replace_defs(&self, v: &Value, resolver: Option<&Class>) -> Value {
        if let Some(def) = parse_def(self.ex, resolver, v, None) {
            if let Some(id) = def.id {
                if let Some((_, r)) = self.aliases.iter().find(|(k, _)| *k == id) {
                    return Value::Object(r.clone());
                }
                return Value::str(id);
            }
            if let Some((r, _)) = self.created.iter().find(|(_, p)| *p == def.props) {
                return Value::Object(r.clone());
            }
        }
        match v {
            Value::List(l) => {
                Value::list(l.iter().map(|x| self.replace_defs(x, resolver)).collect())
            }
            Value::Dict(d) => {
                let mut out = Dict::default();
                for (k, x) in d.iter() {
                    out.insert(k.clone(), self.replace_defs(x, resolver));
                }
                Value::dict(out)
            }
            other => other.clone(),
        }
    }
}

/// Initializes an object's properties from its definition.
///
/// As murano's `MuranoObject.initialize` (murano/dsl/murano_object.py):
/// a property whose default or contract reads a property not set yet is
/// tried again after the others, until a round sets nothing more
/// (`CircularExpressionDependenciesError`); a `Runtime` property whose
/// value violates its contract stays unset; a property named like an
/// argument of its class's `.init` is left to `.init`.
pub fn init_properties(ex: &Executor, r: &Arc<ObjRef>, props: &Dict) -> Result<()> {
    let class = ex.class_of(r)?;
    if let Some(e) = class.conflicting_property() {
        return Err(e);
    }
    let this = Value::Object(r.clone());
    let mut waiting: Vec<Arc<str>> = Vec::new();
    let mut first = true;
    loop {
        let mut blocked = Vec::new();
        let mut ctx: Option<PropCtx<'_>> = None;
        for (cls, p) in class.init_order() {
            if !first && !waiting.contains(&p.name) {
                continue;
            }
            let is_init_arg = cls
                .methods
                .get(".init")
                .is_some_and(|m| m.args.iter().any(|a| a.name == p.name));
            if is_init_arg {
                continue;
            }
            if !ctx.as_ref().is_some_and(|c| Arc::ptr_eq(c.class, cls)) {
                ctx = Some(PropCtx {
                    ex,
                    class: cls,
                    this: &this,
                    made: Default::default(),
                });
            }
            let ctx = ctx.as_ref().expect("set above");
            let env = ex.env(cls.package.legacy);
            let uninitialized =
                |e: &Error| *e.error_kind() == ErrorKind::UninitializedPropertyAccessError;
            let raw = match start_value(ex, cls, p, props, ctx) {
                Ok(Some(raw)) => raw,
                Ok(None) => continue,
                Err(e) if uninitialized(&e) => {
                    blocked.push(p.name.clone());
                    continue;
                }
                Err(e) => return Err(e),
            };
            let v = match Contract::of(&p.contract).check(
                ex,
                env,
                ctx.get(),
                raw.clone(),
                Some(r),
                &p.name,
            ) {
                Ok(v) => v,
                Err(e) if uninitialized(&e) => {
                    blocked.push(p.name.clone());
                    continue;
                }
                Err(e) if *e.error_kind() == ErrorKind::ContractViolationException => {
                    if p.usage == PropertyUsage::Runtime {
                        continue;
                    }
                    if !ex.collecting() {
                        return Err(e);
                    }
                    ex.record_violation(r, &p.name, e);
                    raw
                }
                Err(e) => return Err(e),
            };
            ex.with_obj(r, |o| {
                o.props.insert(p.key.clone(), v);
            })?;
        }
        if blocked.is_empty() {
            return Ok(());
        }
        if !first && blocked.len() >= waiting.len() {
            return Err(Error::new(
                ErrorKind::CircularExpressionDependenciesError,
                format!(
                    "the defaults of {} read each other",
                    blocked
                        .iter()
                        .map(|n| n.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        waiting = blocked;
        first = false;
    }
}

/// Checks `props` (an object definition's properties) against the
/// property contracts of `class` as loading an object does, without making
/// the object: the violations, by property, in the order of
/// initialization. An error that is not a contract violation stops the
/// check. Contracts see no `$this`: this is for classes whose contracts
/// need only the values (see [`crate::contracts::Reach`]).
pub fn check_properties(
    ex: &Executor,
    class: &Arc<Class>,
    props: &Dict,
) -> Result<Vec<(Arc<str>, Error)>> {
    check_properties_except(ex, class, props, &[])
}

/// [`check_properties`] but for the properties named by `skip` (keys),
/// which the caller checks in another way.
pub fn check_properties_except(
    ex: &Executor,
    class: &Arc<Class>,
    props: &Dict,
    skip: &[&Value],
) -> Result<Vec<(Arc<str>, Error)>> {
    let shown = shown(ex, class, props);
    if shown.all {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    each_property(
        ex,
        class,
        props,
        &Value::Null,
        shown.passed,
        |p, env, ctx, raw| {
            // A property the plan read and did not pass does not pass the
            // compiled pass either.
            let holds = || !shown.planned && Contract::of(&p.contract).holds(ex, &raw);
            if skip.contains(&&p.key) || holds() {
                return Ok(());
            }
            match Contract::of(&p.contract).check(ex, env, ctx.get(), raw, None, &p.name) {
                Ok(_) => Ok(()),
                Err(e) if *e.error_kind() == ErrorKind::ContractViolationException => {
                    out.push((p.name.clone(), e));
                    Ok(())
                }
                Err(e) => Err(e),
            }
        },
    )?;
    Ok(out)
}

/// What machine code alone shows of a definition's properties
/// ([`crate::contracts::Contract::holds`]), decided on the values in
/// place, without a context.
struct Shown {
    /// Every property meets its contract: validation's common case.
    all: bool,
    /// Bit `i`: property `i` (in [`Class::init_order`], of the first 64)
    /// meets its contract; the others take the full path.
    passed: u64,
    /// The class's plan decided it: the compiled pass need not run again.
    planned: bool,
}

/// What machine code shows of `props` ([`Shown`]). It takes the values
/// [`each_property`] starts from where no configuration or default needs
/// evaluating.
fn shown(ex: &Executor, class: &Arc<Class>, props: &Dict) -> Shown {
    // The values' own memory is read first, all at once: these reads do
    // not depend on each other, so the processor overlaps their cache
    // misses instead of waiting for each as the checks reach it.
    let touched: usize = props.values().map(Value::touch).sum();
    std::hint::black_box(touched);
    if let Some(plan) = class_plan(ex, class) {
        let (all, passed) = plan.properties_hold(props);
        return Shown {
            all,
            passed,
            planned: true,
        };
    }
    let all = class.init_order().all(|(cls, p)| {
        if !cls.package.configs.is_empty() || p.usage == PropertyUsage::Config {
            return false;
        }
        let runtime = p.usage == PropertyUsage::Runtime;
        let given = runtime::value::get_interned(props, &p.key);
        match given {
            Some(v) if !runtime => Contract::of(&p.contract).holds(ex, v),
            None if runtime && !p.has_default => true,
            _ if p.default.is_none() => Contract::of(&p.contract).holds(ex, &runtime::value::NULL),
            _ => false,
        }
    });
    Shown {
        all,
        passed: 0,
        planned: false,
    }
}

/// The plan of `class`'s property contracts on engine values, when the
/// JIT mode wants machine code for them by now and the plan decides
/// every property as [`Contract::holds`] would: one flat walk of the
/// record instead of a dispatch per property and link.
fn class_plan<'a>(ex: &Executor, class: &'a Arc<Class>) -> Option<&'a ObjectPlan> {
    let code = class.plan.get(ex.catalog().jit(), || {
        let plan = ObjectPlan::of(ex, class, true)?;
        plan.complete()
            .then(|| crate::class::ContractCode::new(plan))
    })?;
    code.get::<ObjectPlan>()
}

/// Calls `f` with each property an object of `class` initializes
/// ([`Class::init_order`]) and the value it starts from (the definition's,
/// the package configuration's or the default), with the environment and
/// context (`$this` is `this`) its contract runs in; runtime properties
/// without a value or default are skipped, and so is property `i` (in
/// [`Class::init_order`], of the first 64) when bit `i` of `skip` is set.
pub(crate) fn each_property(
    ex: &Executor,
    class: &Arc<Class>,
    props: &Dict,
    this: &Value,
    skip: u64,
    mut f: impl FnMut(&crate::class::Prop, &runtime::Env, &PropCtx<'_>, Value) -> Result<()>,
) -> Result<()> {
    if let Some(e) = class.conflicting_property() {
        return Err(e);
    }
    let mut ctx: Option<PropCtx<'_>> = None;
    for (i, (cls, p)) in class.init_order().enumerate() {
        if i < 64 && skip & (1 << i) != 0 {
            continue;
        }
        if !ctx.as_ref().is_some_and(|c| Arc::ptr_eq(c.class, cls)) {
            ctx = Some(PropCtx {
                ex,
                class: cls,
                this,
                made: Default::default(),
            });
        }
        let ctx = ctx.as_ref().expect("set above");
        let env = ex.env(cls.package.legacy);
        if let Some(raw) = start_value(ex, cls, p, props, ctx)? {
            f(p, env, ctx, raw)?;
        }
    }
    Ok(())
}

/// The value property `p` of `cls` starts from: the definition's, the
/// package configuration's or the default; `None` for a runtime property
/// without a value or default (it stays uninitialised).
fn start_value(
    ex: &Executor,
    cls: &Arc<Class>,
    p: &crate::class::Prop,
    props: &Dict,
    ctx: &PropCtx<'_>,
) -> Result<Option<Value>> {
    let key = &p.key;
    let configs = &cls.package.configs;
    let config = if configs.is_empty() {
        None
    } else {
        configs.get(&*cls.name).and_then(|d| d.get(key)).cloned()
    };
    if p.usage == PropertyUsage::Runtime
        && !p.has_default
        && runtime::value::get_interned(props, key).is_none()
    {
        return Ok(None);
    }
    let raw = match p.usage {
        PropertyUsage::Config => config.clone(),
        PropertyUsage::Runtime => None,
        _ => runtime::value::get_interned(props, key).cloned(),
    };
    Ok(Some(match raw {
        Some(v) => v,
        None => match (&config, p.usage) {
            (Some(v), u) if u != PropertyUsage::Config => v.clone(),
            _ => match &p.default {
                Some(d) => d.eval(ex.env(cls.package.legacy), ctx.get())?,
                None => Value::Null,
            },
        },
    }))
}

/// The context (`$this`, the declaring class) a property's default and
/// contract run in, made the first time it is asked for: validation that
/// machine code decides never makes it.
pub(crate) struct PropCtx<'a> {
    ex: &'a Executor,
    class: &'a Arc<Class>,
    this: &'a Value,
    made: std::cell::OnceCell<Arc<runtime::ctx::Frame>>,
}

impl PropCtx<'_> {
    pub(crate) fn get(&self) -> &Arc<runtime::ctx::Frame> {
        self.made
            .get_or_init(|| self.ex.class_ctx(self.class, self.this.clone()))
    }
}

/// Runs `.init` of every class of the object (parents first). Arguments
/// of `.init` take the values of the same name from `props`.
pub fn run_init(ex: &Executor, r: &Arc<ObjRef>, props: &Dict) -> Result<()> {
    let class = ex.class_of(r)?;
    let chain: Vec<String> = class.mro().map(|c| c.key.to_string()).collect();
    for cname in chain.iter().rev() {
        let c = ex.class(cname)?;
        if let Some(m) = c.methods.get(".init") {
            let m = m.clone();
            let named: Vec<(Arc<str>, Value)> = m
                .args
                .iter()
                .filter_map(|a| {
                    props
                        .get(&Value::str(&*a.name))
                        .map(|v| (a.name.clone(), v.clone()))
                })
                .collect();
            ex.invoke(&Value::Object(r.clone()), &c, &m, Vec::new(), named)?;
        }
    }
    ex.with_obj(r, |o| o.initialized = true)?;
    Ok(())
}

/// Loads an object model snippet, creating objects owned by `owner`.
/// Returns the root object.
pub fn load(
    ex: &Executor,
    v: &Value,
    owner: Option<Arc<ObjRef>>,
    resolver: Option<&Class>,
    default: Option<&str>,
) -> Result<Option<Arc<ObjRef>>> {
    load_with(ex, v, owner, resolver, default, false)
}

/// [`load`] with a choice of keeping the model's ids.
pub fn load_with(
    ex: &Executor,
    v: &Value,
    owner: Option<Arc<ObjRef>>,
    resolver: Option<&Class>,
    default: Option<&str>,
    fresh: bool,
) -> Result<Option<Arc<ObjRef>>> {
    let mut ld = Loader {
        ex,
        created: Vec::new(),
        by_id: Default::default(),
        fresh,
        aliases: Vec::new(),
        destroyed: Vec::new(),
    };
    let root = ld.scan(v, owner, resolver, default)?;
    let mark = ex.alias_mark();
    for (id, r) in &ld.aliases {
        ex.push_alias(id, r.clone());
    }
    let r = init_loaded(ex, &ld);
    ex.truncate_aliases(mark);
    r?;
    Ok(root)
}

fn init_loaded(ex: &Executor, ld: &Loader) -> Result<()> {
    let mut inits = Vec::new();
    for (r, props) in &ld.created {
        let class = ex.class_of(r)?;
        let props = ld.replace_props(props, &class);
        inits.push((r.clone(), props));
    }
    // Properties: owned objects first (deepest definitions were created
    // last), so that references resolve to initialised objects.
    for (r, props) in inits.iter().rev() {
        init_properties(ex, r, props)?;
    }
    for (r, props) in inits.iter().rev() {
        run_init(ex, r, props)?;
    }
    // Objects the model says are destroyed refuse calls
    // (`ObjectDestroyedError`), as murano marks them.
    for r in &ld.destroyed {
        ex.with_obj(r, |o| o.destroyed = true)?;
    }
    Ok(())
}

/// `class()` contract / `new()` with a dict: instantiate an object model
/// snippet.
pub fn instantiate(
    ex: &Executor,
    cx: &Cx,
    v: &Value,
    owner: Option<Arc<ObjRef>>,
    default: Option<&str>,
) -> Result<Arc<ObjRef>> {
    let resolver = ex.ctx_class(cx.ctx);
    match load_with(ex, v, owner, resolver.as_deref(), default, true)? {
        Some(r) => Ok(r),
        None => Err(Error::new(
            ErrorKind::ContractViolationException,
            format!(
                "Value {} is not an object definition",
                runtime::pyrepr::repr(v)
            ),
        )),
    }
}

/// The properties of a `template()` value of `class`, as the object
/// would have them: each declared property (not `Runtime` or `Static`, not
/// excluded) from `given` or its default, checked and coerced by its
/// contract; keys the class does not declare are dropped. A value whose
/// coercion makes objects (a nested `class()` definition) stays as given,
/// a definition.
pub fn template_props(
    ex: &Executor,
    class: &Arc<Class>,
    given: &Dict,
    excluded: &[Value],
) -> Result<Dict> {
    let env = ex.env(class.package.legacy).clone();
    let ctx = ex.class_ctx(class, Value::Null);
    let mut out = Dict::default();
    for (_, p) in class.init_order() {
        if matches!(p.usage, PropertyUsage::Runtime | PropertyUsage::Static)
            || excluded.contains(&p.key)
        {
            continue;
        }
        let raw = match (given.get(&p.key), &p.default) {
            (Some(v), _) => v.clone(),
            (None, Some(d)) => d.eval(&env, &ctx)?,
            (None, None) => Value::Null,
        };
        let checked =
            Contract::of(&p.contract).check(ex, &env, &ctx, raw.clone(), None, &p.name)?;
        let keep = if holds_object(&checked) { raw } else { checked };
        out.insert(p.key.clone(), keep);
    }
    Ok(out)
}

fn holds_object(v: &Value) -> bool {
    match v {
        Value::Object(_) => true,
        Value::List(l) => l.iter().any(holds_object),
        Value::Dict(d) => d.iter().any(|(k, x)| holds_object(k) || holds_object(x)),
        _ => false,
    }
}

/// Destroys an object: runs `.destroy` of its classes (most derived
/// first) and marks it destroyed.
pub fn destroy(ex: &Executor, r: &Arc<ObjRef>) -> Result<()> {
    let Ok(class) = ex.class_of(r) else {
        return Ok(());
    };
    if ex.with_obj(r, |o| o.destroyed).unwrap_or(true) {
        return Ok(());
    }
    let chain: Vec<String> = class.mro().map(|c| c.key.to_string()).collect();
    for cname in &chain {
        let c = ex.class(cname)?;
        if let Some(m) = c.methods.get(".destroy") {
            let m = m.clone();
            ex.invoke(&Value::Object(r.clone()), &c, &m, Vec::new(), Vec::new())?;
        }
    }
    ex.with_obj(r, |o| o.destroyed = true)?;
    Ok(())
}

/// Loads a Murano object model (`{"Objects": ..., "ObjectsCopy": ...}`).
/// Objects present only in `ObjectsCopy` are created and then destroyed.
pub fn load_model(ex: &Executor, model: &Value) -> Result<Option<Arc<ObjRef>>> {
    let Value::Dict(m) = model else {
        return Ok(None);
    };
    let objects = m
        .get(&Value::str("Objects"))
        .cloned()
        .unwrap_or(Value::Null);
    let copy = m.get(&Value::str("ObjectsCopy")).cloned();
    let root = if objects.is_null() {
        None
    } else {
        let mut ld = Loader {
            ex,
            created: Vec::new(),
            by_id: Default::default(),
            fresh: false,
            aliases: Vec::new(),
            destroyed: Vec::new(),
        };
        let root = ld.scan_at(&objects, None, None, None, JsonPath::root("$.Objects"))?;
        init_loaded(ex, &ld)?;
        root
    };
    // `Attributes`: [object id, class name, attribute name, value].
    if let Some(Value::List(attrs)) = m.get(&Value::str("Attributes")) {
        for a in attrs.iter() {
            if let Value::List(parts) = a {
                if let [Value::Str(id), Value::Str(owner), name, value] = &parts[..] {
                    if let Some(r) = ex.find_object(id) {
                        ex.with_obj(&r, |o| {
                            o.attrs
                                .insert(crate::executor::attr_slot(owner, name), value.clone());
                        })?;
                    }
                }
            }
        }
    }
    crate::gc::after_load(ex, model, root.as_ref());
    if let Some(copy) = copy {
        // Objects of the previous deployment that are gone now.
        let mut ids = Vec::new();
        collect_ids(&objects, &mut ids);
        let mut old = Vec::new();
        collect_defs(ex, &copy, &mut old);
        let gone: Vec<(String, Value)> = old
            .into_iter()
            .filter(|(id, _)| !ids.contains(id))
            .collect();
        if !gone.is_empty() {
            let mut ld = Loader {
                ex,
                created: Vec::new(),
                by_id: Default::default(),
                fresh: false,
                aliases: Vec::new(),
                destroyed: Vec::new(),
            };
            let mut made = Vec::new();
            for (_, def) in &gone {
                let mut flat = def.clone();
                if let Value::Dict(d) = &def {
                    // Keep only the object's own properties; nested objects are
                    // handled by their own entries.
                    let mut d2 = (**d).clone();
                    for (_, x) in d2.iter_mut() {
                        *x = strip_defs(ex, x);
                    }
                    flat = Value::dict(d2);
                }
                if let Some(r) = ld.scan(&flat, None, None, None)? {
                    made.push(r);
                }
            }
            let created = ld.created.clone();
            for (r, props) in created.iter().rev() {
                let class = ex.class_of(r)?;
                let props = ld.replace_props(props, &class);
                // Contracts may reject stale values; destruction still runs.
                let _ = init_properties(ex, r, &props);
            }
            crate::gc::destroy_copy(ex, &copy, &made)?;
        }
    }
    Ok(root)
}

fn strip_defs(ex: &Executor, v: &Value) -> Value {
    if let Some(def) = parse_def(ex, None, v, None) {
        if let Some(id) = def.id {
            return Value::str(id);
        }
    }
    match v {
        Value::List(l) => Value::list(l.iter().map(|x| strip_defs(ex, x)).collect()),
        other => other.clone(),
    }
}

fn collect_ids(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Dict(d) => {
            if let Some(Value::Dict(h)) = d.get(&Value::str("?")) {
                if let Some(id) = h.get(&Value::str("id")).and_then(|i| i.as_str()) {
                    out.push(id.to_string());
                }
            }
            for x in d.values() {
                collect_ids(x, out);
            }
        }
        Value::List(l) => l.iter().for_each(|x| collect_ids(x, out)),
        _ => {}
    }
}

fn collect_defs(ex: &Executor, v: &Value, out: &mut Vec<(String, Value)>) {
    if let Some(def) = parse_def(ex, None, v, None) {
        if let Some(id) = def.id {
            out.push((id, v.clone()));
        }
    }
    match v {
        Value::Dict(d) => d.values().for_each(|x| collect_defs(ex, x, out)),
        Value::List(l) => l.iter().for_each(|x| collect_defs(ex, x, out)),
        _ => {}
    }
}

/// The outcome of validating one object model: how many objects it made,
/// the contract violations found (the object's JSON path in the model,
/// the property, the error), and the error that stopped the load, if one
/// did.
pub struct Validation {
    /// Objects loaded.
    pub objects: usize,
    /// `(object path, property, error)` for each violation.
    pub violations: Vec<(String, String, Error)>,
    /// A load error that stopped validation.
    pub error: Option<Error>,
    /// Of a streamed model ([`crate::stream`]), where the text of each
    /// violation's object is, parallel to `violations`: the byte offset of
    /// the piece of text that holds it and that piece's JSON path (so that
    /// the value can be found again without reading the whole model).
    /// Empty for a model validated whole.
    pub places: Vec<(u64, String)>,
}

/// Validates an object model (`{"Objects": ...}` or a bare object) against
/// the classes of `catalog` in an execution of its own: the model loads in
/// validation mode, so every contract violation is recorded instead of the
/// first one stopping the load.
pub fn validate(catalog: &Arc<crate::catalog::Catalog>, data: &Value) -> Validation {
    let ex = Executor::with_catalog(catalog.clone());
    ex.collect_violations();
    let wrapped;
    let model = match data {
        Value::Dict(d) if d.contains_key(&Value::str("Objects")) => data,
        _ => {
            let mut d = runtime::Dict::default();
            d.insert(Value::str("Objects"), data.clone());
            wrapped = Value::dict(d);
            &wrapped
        }
    };
    if let Err(e) = check_definitions(model) {
        return Validation {
            objects: 0,
            violations: Vec::new(),
            error: Some(e),
            places: Vec::new(),
        };
    }
    let error = load_model(&ex, model).err();
    Validation {
        objects: ex.all_objects().len(),
        violations: ex.take_violations(),
        error,
        places: Vec::new(),
    }
}

/// What makes a model unfit to validate, before it loads: no object
/// definition in it, a `?` header that is no `{type: ..., id: ...}` mapping, or
/// two definitions with one id (murano's object store would make the
/// second update the first, silently). The error names the JSON path.
fn check_definitions(model: &Value) -> Result<()> {
    let objects = match model {
        Value::Dict(m) => m
            .get(&Value::str("Objects"))
            .cloned()
            .unwrap_or(Value::Null),
        _ => Value::Null,
    };
    // Each node's parent and step, so that a path is rendered only for an
    // error: ids map to their definitions' nodes.
    let mut nodes: Vec<(usize, Step<'_>)> = vec![(0, Step::Root("$.Objects"))];
    let mut ids: HashMap<&str, usize> = HashMap::new();
    let mut defs = 0usize;
    // Depth-first, without recursion (models come from users).
    let mut todo: Vec<(usize, &Value)> = vec![(0, &objects)];
    while let Some((at, v)) = todo.pop() {
        match v {
            Value::Dict(d) => {
                if let Some(h) = d.get(&Value::str("?")) {
                    check_header(&nodes, at, h, &mut ids)?;
                    defs += 1;
                }
                for (k, x) in d.iter().rev() {
                    if k.as_str() != Some("?") {
                        nodes.push((at, Step::Key(k)));
                        todo.push((nodes.len() - 1, x));
                    }
                }
            }
            Value::List(l) => {
                for (i, x) in l.iter().enumerate().rev() {
                    nodes.push((at, Step::Index(i)));
                    todo.push((nodes.len() - 1, x));
                }
            }
            _ => {}
        }
    }
    if defs == 0 {
        return Err(Error::value(
            "$.Objects: the model defines no object (a mapping with a `?: {type, id}` header)",
        ));
    }
    Ok(())
}

/// One step of a JSON path.
#[derive(Clone, Copy)]
enum Step<'v> {
    /// The start (`$`, `$.Objects`).
    Root(&'static str),
    /// `.key`.
    Key(&'v Value),
    /// `[i]`.
    Index(usize),
}

/// The text of a path given its steps from the root.
fn render_steps<'v>(steps: impl Iterator<Item = Step<'v>>) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    for s in steps {
        let _ = match s {
            Step::Root(r) => write!(out, "{r}"),
            Step::Key(k) => write!(out, ".{}", runtime::pyrepr::to_str(k)),
            Step::Index(i) => write!(out, "[{i}]"),
        };
    }
    out
}

/// The path of node `at` of [`check_definitions`]'s walk.
fn node_path(nodes: &[(usize, Step<'_>)], mut at: usize) -> String {
    let mut steps = Vec::new();
    loop {
        let (parent, step) = nodes[at];
        steps.push(step);
        if at == 0 {
            break;
        }
        at = parent;
    }
    render_steps(steps.into_iter().rev())
}

/// The JSON path of a value the loader walks, as a link to its parent's
/// on the walk's stack: rendered only when an object is found there.
#[derive(Clone, Copy)]
struct JsonPath<'a> {
    up: Option<&'a JsonPath<'a>>,
    step: Step<'a>,
}

impl<'a> JsonPath<'a> {
    fn root(start: &'static str) -> JsonPath<'a> {
        JsonPath {
            up: None,
            step: Step::Root(start),
        }
    }

    fn child(&'a self, step: Step<'a>) -> JsonPath<'a> {
        JsonPath {
            up: Some(self),
            step,
        }
    }

    fn render(&self) -> String {
        let mut steps = vec![self.step];
        let mut at = self;
        while let Some(up) = at.up {
            steps.push(up.step);
            at = up;
        }
        render_steps(steps.into_iter().rev())
    }
}

/// One definition's `?` header, at node `at` (see [`check_definitions`]).
fn check_header<'v>(
    nodes: &[(usize, Step<'_>)],
    at: usize,
    h: &'v Value,
    ids: &mut HashMap<&'v str, usize>,
) -> Result<()> {
    let path = || node_path(nodes, at);
    let Value::Dict(h) = h else {
        return Err(Error::value(format!(
            "{}.?: an object header is a mapping with `type` and `id`, not {}",
            path(),
            runtime::pyrepr::repr(h)
        )));
    };
    if def_type(h).is_none() {
        return Err(Error::value(format!(
            "{}.?.type: an object needs a class name",
            path()
        )));
    }
    match h.get(&Value::str("id")) {
        None | Some(Value::Null) => Ok(()),
        Some(Value::Str(id)) => match ids.insert(id.as_str(), at) {
            Some(first) => Err(Error::value(format!(
                "{}.?.id: duplicate object id \"{id}\" (first at {})",
                path(),
                node_path(nodes, first)
            ))),
            None => Ok(()),
        },
        Some(other) => Err(Error::value(format!(
            "{}.?.id: an object id is a string, not {}",
            path(),
            runtime::pyrepr::repr(other)
        ))),
    }
}
