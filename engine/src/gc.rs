//! The garbage collector of MuranoPL objects (`io.murano.system.GC`):
//! `collect`, `isDestroyed`, `isDoomed`, destruction subscriptions, and
//! the destruction of objects that are only in a model's `ObjectsCopy`.
//!
//! Reachability: an object is alive when it can be reached from a root
//! through property values, attributes and owners. The roots are the model
//! root, the static properties, and the frames (local variables, arguments,
//! `this`) of every method that is in the middle of a call (each call made
//! through [`crate::Executor`]'s `Host::call_method` pushes its caller's frame
//! with a `FrameGuard`, see `executor/roots.rs`).
//!
//! Destruction follows the reference's `ObjectStore._destroy_garbage`: a
//! graph from each sentenced object to its owner and destruction
//! subscribers is ranked (an object ranks above everything it notifies);
//! subscribers' handlers are called rank by rank from the lowest, then the
//! objects are destroyed (`.destroy` of each class, most derived first,
//! errors muted) rank by rank from the highest.

use runtime::ErrorKind;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use runtime::ctx::Frame;
use runtime::registry::{p, Args, Cx, Registry, Ty};
use runtime::value::ObjRef;
use runtime::{Error, Result, Value};

use crate::executor::{Executor, ExecutorOf};

use crate::executor::{is_destroyed, is_doomed, set_root};

// ---- reachability ------------------------------------------------------

struct Marker<'a> {
    ex: &'a Executor,
    marked: HashSet<u32>,
    frames: HashSet<*const Frame>,
    values: Vec<Value>,
    frame_stack: Vec<Arc<Frame>>,
}

impl Marker<'_> {
    fn value(&mut self, v: &Value) {
        match v {
            Value::Object(_)
            | Value::List(_)
            | Value::Dict(_)
            | Value::Set(_)
            | Value::Pair(_)
            | Value::Context(_)
            | Value::Lambda(_) => self.values.push(v.clone()),
            _ => {}
        }
    }

    fn frame(&mut self, f: &Arc<Frame>) {
        if self.frames.insert(Arc::as_ptr(f)) {
            self.frame_stack.push(f.clone());
        }
    }

    fn run(&mut self) {
        loop {
            if let Some(f) = self.frame_stack.pop() {
                for a in f.args.iter() {
                    self.value(a);
                }
                for (_, v) in f.vars.iter() {
                    self.value(v);
                }
                for (_, v) in f.funcs.iter() {
                    self.value(v);
                }
                if let Some(p) = &f.parent {
                    self.frame(p);
                }
                continue;
            }
            let Some(v) = self.values.pop() else { break };
            match &v {
                Value::Object(r) => {
                    if self.marked.contains(&r.slot) || self.ex.with_obj(r, |_| ()).is_err() {
                        continue;
                    }
                    self.marked.insert(r.slot);
                    let got = self.ex.with_obj(r, |o| {
                        let mut out: Vec<Value> = o.props.values().cloned().collect();
                        out.extend(o.attrs.values().cloned());
                        if let Some(w) = &o.owner {
                            out.push(Value::Object(w.clone()));
                        }
                        out
                    });
                    if let Ok(vals) = got {
                        for x in &vals {
                            self.value(x);
                        }
                    }
                }
                Value::List(l) => {
                    for x in l.iter() {
                        self.value(x);
                    }
                }
                Value::Dict(d) => {
                    for (k, x) in d.iter() {
                        self.value(k);
                        self.value(x);
                    }
                }
                Value::Set(s) => {
                    for x in s.iter() {
                        self.value(x);
                    }
                }
                Value::Pair(p) => {
                    self.value(&p.0);
                    self.value(&p.1);
                }
                Value::Context(f) => self.frame(f),
                Value::Lambda(c) => self.frame(&c.ctx),
                _ => {}
            }
        }
    }
}

/// Initialized, live objects that no root reaches, in creation order.
fn find_garbage(ex: &Executor) -> Vec<Arc<ObjRef>> {
    let (root, frames) = ex.gc_state(|g| {
        (
            g.root.clone(),
            g.frames.iter().map(|(_, f)| f.clone()).collect::<Vec<_>>(),
        )
    });
    let mut m = Marker {
        ex,
        marked: HashSet::new(),
        frames: HashSet::new(),
        values: Vec::new(),
        frame_stack: Vec::new(),
    };
    if let Some(r) = root {
        m.values.push(Value::Object(r));
    }
    for v in ex.gc_static_values() {
        m.value(&v);
    }
    for f in &frames {
        m.frame(f);
    }
    m.run();
    ex.all_objects()
        .into_iter()
        .filter(|r| !m.marked.contains(&r.slot))
        .filter(|r| {
            ex.with_obj(r, |o| o.initialized && !o.destroyed)
                .unwrap_or(false)
        })
        .collect()
}

/// `GC.collect()`: destroys every object no root reaches. Returns how many
/// were destroyed, or the error that ran out a budget of the execution.
pub fn collect(ex: &Executor) -> Result<usize> {
    if ex.gc_state(|g| std::mem::replace(&mut g.running, true)) {
        return Ok(0);
    }
    let mut count = Ok(0);
    for _ in 0..64 {
        let garbage = find_garbage(ex);
        if garbage.is_empty() {
            break;
        }
        match destroy_objects(ex, &garbage) {
            Ok(n) => count = count.map(|c| c + n),
            Err(e) => {
                count = Err(e);
                break;
            }
        }
    }
    ex.gc_state(|g| g.running = false);
    count
}

/// The outcome of a destruction handler or `.destroy`: their errors are
/// muted, as the reference's GC logs and goes on, except one that ends the
/// execution's time, statement or memory budget (no MuranoPL error: the
/// execution must end with it, not report success).
fn muted<T>(r: Result<T>) -> Result<()> {
    match r {
        Err(e)
            if matches!(
                e.error_kind(),
                ErrorKind::TimeoutError
                    | ErrorKind::ExecutionLimitExceeded
                    | ErrorKind::MemoryQuotaExceededException
            ) =>
        {
            Err(e)
        }
        _ => Ok(()),
    }
}

// ---- destruction -------------------------------------------------------

/// The reference's ranking (`topological` in `_destroy_garbage`): each
/// object ranks one above the highest of its owner and subscribers.
fn rank(order: &[u32], graph: &HashMap<u32, Vec<Option<u32>>>) -> Vec<(u32, usize)> {
    struct St<'a> {
        graph: &'a HashMap<u32, Vec<Option<u32>>>,
        visited: HashMap<Option<u32>, usize>,
        indexes: HashMap<Option<u32>, usize>,
        out: Vec<(u32, usize)>,
    }
    fn dfs(st: &mut St, obj: Option<u32>, depth: usize) {
        *st.visited.entry(obj).or_default() += 1;
        if depth > 10_000 {
            return;
        }
        let Some(subs) = obj.and_then(|o| st.graph.get(&o)) else {
            return;
        };
        let subs = subs.clone();
        let mut m = 0;
        for (i, s) in subs.iter().enumerate() {
            if i == 0 || st.visited.get(s).copied().unwrap_or(0) == 0 {
                dfs(st, *s, depth + 1);
            }
            m = m.max(st.indexes.get(s).copied().unwrap_or(0));
        }
        if st.visited.get(&obj).copied().unwrap_or(0) <= 2 {
            *st.visited.entry(obj).or_default() += 1;
            st.indexes.insert(obj, m + 1);
            if let Some(o) = obj {
                st.out.push((o, m + 1));
            }
        }
    }
    let mut st = St {
        graph,
        visited: HashMap::new(),
        indexes: HashMap::new(),
        out: Vec::new(),
    };
    for o in order {
        if st.visited.get(&Some(*o)).copied().unwrap_or(0) == 0 {
            dfs(&mut st, Some(*o), 0);
        }
    }
    st.out
}

/// Destroys a set of objects in the reference's order: destruction
/// handlers first (lowest rank first), then `.destroy` (highest rank
/// first). Returns how many objects were destroyed, or the error that ran
/// out a budget (see [`muted`]; the objects stay as they are then).
pub fn destroy_objects(ex: &Executor, sentenced: &[Arc<ObjRef>]) -> Result<usize> {
    let mut refs: HashMap<u32, Arc<ObjRef>> = HashMap::new();
    let mut order = Vec::new();
    for r in sentenced {
        let r = ex.plain(r);
        if refs.insert(r.slot, r.clone()).is_none() {
            order.push(r.slot);
        }
    }
    ex.gc_state(|g| g.doomed.extend(order.iter().copied()));
    let mut graph: HashMap<u32, Vec<Option<u32>>> = HashMap::new();
    for slot in &order {
        let r = &refs[slot];
        let (owner, subs) = ex
            .with_obj(r, |o| (o.owner.clone(), o.subscribers.clone()))
            .unwrap_or((None, Vec::new()));
        let mut edges = vec![owner.map(|o| o.slot)];
        for (s, _) in subs {
            if !edges.contains(&Some(s.slot)) {
                edges.push(Some(s.slot));
            }
        }
        graph.insert(*slot, edges);
    }
    let mut groups: BTreeMap<usize, Vec<u32>> = BTreeMap::new();
    for (slot, idx) in rank(&order, &graph) {
        groups.entry(idx).or_default().push(slot);
    }
    let destroy = || {
        for group in groups.values() {
            for slot in group {
                signal(ex, &refs[slot])?;
            }
        }
        let mut count = 0;
        for group in groups.values().rev() {
            for slot in group {
                if destroy_one(ex, &refs[slot])? {
                    count += 1;
                }
            }
        }
        Ok(count)
    };
    let count = destroy();
    ex.gc_state(|g| {
        for s in &order {
            g.doomed.remove(s);
        }
    });
    count
}

/// Calls the destruction handlers subscribed to `r`, then forgets the
/// subscriptions.
fn signal(ex: &Executor, r: &Arc<ObjRef>) -> Result<()> {
    let Ok((destroyed, subs)) = ex.with_obj(r, |o| (o.destroyed, o.subscribers.clone())) else {
        return Ok(());
    };
    if destroyed {
        return Ok(());
    }
    for (sub, handler) in subs {
        let Some(handler) = handler else { continue };
        let ok = ex
            .with_obj(&sub, |s| s.initialized && !s.destroyed)
            .unwrap_or(false);
        if ok {
            // Errors of handlers are muted (logged by the reference).
            muted(ex.call(
                &Value::Object(sub.clone()),
                &handler,
                vec![Value::Object(r.clone())],
                Vec::new(),
                false,
            ))?;
        }
    }
    let _ = ex.with_obj(r, |o| o.subscribers.clear());
    Ok(())
}

/// Runs `.destroy` of every class of the object (most derived first,
/// errors muted, see [`muted`]) and marks it destroyed. False when it
/// already was.
fn destroy_one(ex: &Executor, r: &Arc<ObjRef>) -> Result<bool> {
    let Ok((destroyed, class)) = ex.with_obj(r, |o| (o.destroyed, o.class.clone())) else {
        return Ok(false);
    };
    if destroyed {
        return Ok(false);
    }
    let chain: Vec<String> = class.mro().map(|c| c.key.to_string()).collect();
    for cname in &chain {
        let Ok(c) = ex.class(cname) else { continue };
        if let Some(m) = c.methods.get(".destroy").cloned() {
            muted(ex.invoke(&Value::Object(r.clone()), &c, &m, Vec::new(), Vec::new()))?;
        }
    }
    let _ = ex.with_obj(r, |o| o.destroyed = true);
    Ok(true)
}

// ---- object models -----------------------------------------------------

/// Loads the destruction dependencies (`?.dependencies.onDestruction`)
/// of the objects of a model section. With `only`, just for those objects.
pub fn load_dependencies(ex: &Executor, section: &Value, only: Option<&[Arc<ObjRef>]>) {
    let mut found: Vec<(String, Vec<(String, Option<String>)>)> = Vec::new();
    walk_headers(section, &mut |id, header| {
        let Some(Value::Dict(deps)) = header.get(&Value::str("dependencies")) else {
            return;
        };
        let Some(Value::List(on)) = deps.get(&Value::str("onDestruction")) else {
            return;
        };
        let mut list = Vec::new();
        for d in on.iter() {
            let Value::Dict(d) = d else { continue };
            let Some(sub) = d.get(&Value::str("subscriber")).and_then(|s| s.as_str()) else {
                continue;
            };
            let handler = d
                .get(&Value::str("handler"))
                .and_then(|h| h.as_str())
                .map(str::to_string);
            list.push((sub.to_string(), handler));
        }
        found.push((id.to_string(), list));
    });
    for (id, list) in found {
        let Some(publisher) = find_live(ex, &id, only) else {
            continue;
        };
        for (sub_id, handler) in list {
            let Some(sub) = ex.find_object(&sub_id) else {
                continue;
            };
            let sub = ex.plain(&sub);
            let _ = ex.with_obj(&publisher, |o| {
                if !o
                    .subscribers
                    .iter()
                    .any(|(s, h)| s.slot == sub.slot && *h == handler)
                {
                    o.subscribers.push((sub.clone(), handler.clone()));
                }
            });
        }
    }
}

fn find_live(ex: &Executor, id: &str, only: Option<&[Arc<ObjRef>]>) -> Option<Arc<ObjRef>> {
    match only {
        Some(list) => list.iter().find(|r| &*r.id == id).map(|r| ex.plain(r)),
        None => ex.find_object(id).map(|r| ex.plain(&r)),
    }
}

/// Calls `f(id, header)` for every object definition (`"?": {id, ...}`)
/// in a model section.
fn walk_headers(v: &Value, f: &mut dyn FnMut(&str, &runtime::Dict)) {
    match v {
        Value::Dict(d) => {
            if let Some(Value::Dict(h)) = d.get(&Value::str("?")) {
                if let Some(id) = h.get(&Value::str("id")).and_then(|i| i.as_str()) {
                    f(id, h);
                }
            }
            for x in d.values() {
                walk_headers(x, f);
            }
        }
        Value::List(l) => l.iter().for_each(|x| walk_headers(x, f)),
        _ => {}
    }
}

/// Owners by nesting: id -> id of the enclosing definition.
fn nesting_owners(v: &Value, owner: Option<&str>, out: &mut Vec<(String, String)>) {
    match v {
        Value::Dict(d) => {
            let mut here = owner.map(str::to_string);
            if let Some(Value::Dict(h)) = d.get(&Value::str("?")) {
                if let Some(id) = h.get(&Value::str("id")).and_then(|i| i.as_str()) {
                    if let Some(o) = owner {
                        out.push((id.to_string(), o.to_string()));
                    }
                    here = Some(id.to_string());
                }
            }
            for x in d.values() {
                nesting_owners(x, here.as_deref(), out);
            }
        }
        Value::List(l) => l.iter().for_each(|x| nesting_owners(x, owner, out)),
        _ => {}
    }
}

/// Destroys the objects that are only in a model's `ObjectsCopy` (`made`,
/// already created from it): loads their destruction dependencies and
/// owners from the copy, then destroys them as the collector does.
pub fn destroy_copy(ex: &Executor, copy: &Value, made: &[Arc<ObjRef>]) -> Result<()> {
    load_dependencies(ex, copy, Some(made));
    let mut owners = Vec::new();
    nesting_owners(copy, None, &mut owners);
    for r in made {
        let Some((_, oid)) = owners.iter().find(|(id, _)| *id == *r.id) else {
            continue;
        };
        let owner = made
            .iter()
            .find(|m| *m.id == **oid)
            .cloned()
            .or_else(|| ex.find_object(oid));
        if let Some(owner) = owner {
            let _ = ex.with_obj(r, |o| {
                if o.owner.is_none() {
                    o.owner = Some(owner.clone());
                }
            });
        }
    }
    let was = ex.gc_state(|g| std::mem::replace(&mut g.running, true));
    let r = destroy_objects(ex, made);
    ex.gc_state(|g| g.running = was);
    r.map(|_| ())
}

/// After a model loads: remembers its root and loads the destruction
/// dependencies of its objects.
pub fn after_load(ex: &Executor, model: &Value, root: Option<&Arc<ObjRef>>) {
    set_root(ex, root.cloned());
    if let Value::Dict(m) = model {
        if let Some(objects) = m.get(&Value::str("Objects")) {
            load_dependencies(ex, objects, None);
        }
    }
}

// ---- hooks of core/GC.yaml -------------------------------------------------

fn gc_collect(cx: &Cx, _: Args) -> Result<Value> {
    let ex = cx.executor()?;
    collect(&ex)?;
    Ok(Value::Null)
}

fn gc_is_destroyed(cx: &Cx, a: Args) -> Result<Value> {
    let ex = cx.executor()?;
    match a.get(0) {
        Value::Object(o) => Ok(Value::Bool(is_destroyed(&ex, o))),
        _ => Ok(Value::Bool(false)),
    }
}

fn gc_is_doomed(cx: &Cx, a: Args) -> Result<Value> {
    let ex = cx.executor()?;
    match a.get(0) {
        Value::Object(o) => Ok(Value::Bool(is_doomed(&ex, o))),
        _ => Ok(Value::Bool(false)),
    }
}

/// The publisher, subscriber and handler of a (un)subscription; checks
/// that the handler is a method of the subscriber.
fn subscription(ex: &Executor, a: &Args) -> Result<(Arc<ObjRef>, Arc<ObjRef>, Option<String>)> {
    let (Value::Object(p), Value::Object(s)) = (a.get(0), a.get(1)) else {
        return Err(Error::new(
            ErrorKind::ContractViolationException,
            "publisher and subscriber must be objects",
        ));
    };
    let handler = a
        .get(2)
        .as_str()
        .filter(|h| !h.is_empty())
        .map(str::to_string);
    let (p, s) = (ex.plain(p), ex.plain(s));
    if let Some(h) = &handler {
        let class = ex.class_of(&s)?;
        if class.find_method(h).is_none() {
            return Err(Error::new(
                ErrorKind::NoMethodFound,
                format!("Method '{h}' is not found in class {}", class.name),
            ));
        }
    }
    Ok((p, s, handler))
}

fn gc_subscribe(cx: &Cx, a: Args) -> Result<Value> {
    let ex = cx.executor()?;
    let (p, s, handler) = subscription(&ex, &a)?;
    ex.with_obj(&p, |o| {
        if !o
            .subscribers
            .iter()
            .any(|(x, h)| x.slot == s.slot && *h == handler)
        {
            o.subscribers.push((s.clone(), handler.clone()));
        }
    })?;
    Ok(Value::Null)
}

fn gc_unsubscribe(cx: &Cx, a: Args) -> Result<Value> {
    let ex = cx.executor()?;
    let (p, s, handler) = subscription(&ex, &a)?;
    ex.with_obj(&p, |o| {
        if let Some(i) = o
            .subscribers
            .iter()
            .position(|(x, h)| x.slot == s.slot && *h == handler)
        {
            o.subscribers.remove(i);
        }
    })?;
    Ok(Value::Null)
}

/// Registers the GC hooks used by `core/GC.yaml`.
pub fn register(r: &mut Registry) {
    r.function("gcCollect", vec![], gc_collect);
    r.function(
        "gcIsDestroyed",
        vec![p("obj", Ty::Any).nullable()],
        gc_is_destroyed,
    );
    r.function(
        "gcIsDoomed",
        vec![p("obj", Ty::Any).nullable()],
        gc_is_doomed,
    );
    let sub = || {
        vec![
            p("publisher", Ty::Any).nullable(),
            p("subscriber", Ty::Any).nullable(),
            p("handler", Ty::Any).nullable(),
        ]
    };
    r.function("gcSubscribe", sub(), gc_subscribe);
    r.function("gcUnsubscribe", sub(), gc_unsubscribe);
}
