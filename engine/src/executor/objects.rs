//! The object store: objects, their ids and aliases, owners, static
//! property storage, and the contexts expressions of a class run in.

use std::sync::Arc;

use runtime::ctx::Frame;
use runtime::value::ObjRef;
use runtime::{Dict, Error, ErrorKind, Result, Value};

use super::scope::Scope;
use super::state::{Executor, ObjState, OBJECT_BYTES};
use crate::class::Class;

impl Executor {
    // ---- objects ------------------------------------------------------

    /// Creates an object (uninitialized) of `class`.
    pub fn create(
        &self,
        class: &Arc<Class>,
        id: Option<String>,
        owner: Option<Arc<ObjRef>>,
    ) -> Arc<ObjRef> {
        let id = id.unwrap_or_else(|| self.new_id());
        // Objects count against the execution's memory budget like the
        // values they hold: the store keeps each one until it is destroyed.
        runtime::budget::charge(OBJECT_BYTES + 2 * id.len());
        let mut st = self.lock();
        let slot = st.objects.len() as u32;
        let r = Arc::new(ObjRef {
            id: id.into(),
            class: class.key.clone(),
            slot,
            store: self.store,
        });
        st.by_id.insert(r.id.clone(), slot);
        st.objects.push(Some(ObjState {
            class: class.clone(),
            r: r.clone(),
            props: Dict::default(),
            owner,
            attrs: Dict::default(),
            name: Value::Null,
            metadata: Value::Null,
            destroyed: false,
            initialized: false,
            subscribers: Vec::new(),
            designer: None,
        }));
        r
    }

    /// Runs `f` on an object's state.
    pub fn with_obj<T>(&self, r: &ObjRef, f: impl FnOnce(&mut ObjState) -> T) -> Result<T> {
        if r.store != self.store {
            return Err(Error::new(
                ErrorKind::NoObjectFoundError,
                format!("Object {} is not in this execution", r.id),
            ));
        }
        let mut st = self.lock();
        match st.objects.get_mut(r.slot as usize).and_then(|o| o.as_mut()) {
            Some(o) => Ok(f(o)),
            None => Err(Error::new(
                ErrorKind::ObjectDestroyedError,
                format!("Object {} has been destroyed", r.id),
            )),
        }
    }

    /// The class of an object.
    pub fn class_of(&self, r: &ObjRef) -> Result<Arc<Class>> {
        self.with_obj(r, |o| o.class.clone())
    }

    /// Makes `id` find `r` while a snippet with fresh ids loads.
    pub fn push_alias(&self, id: &str, r: Arc<ObjRef>) {
        self.lock().aliases.push((id.to_string(), r));
    }

    /// Drops the aliases added since `mark`.
    pub fn truncate_aliases(&self, mark: usize) -> usize {
        let mut st = self.lock();
        let n = st.aliases.len();
        st.aliases.truncate(mark);
        n
    }

    /// The number of aliases in force.
    pub fn alias_mark(&self) -> usize {
        self.lock().aliases.len()
    }

    /// Finds a live object by id.
    pub fn find_object(&self, id: &str) -> Option<Arc<ObjRef>> {
        let st = self.lock();
        if let Some((_, r)) = st.aliases.iter().rev().find(|(k, _)| k == id) {
            return Some(r.clone());
        }
        if let Some(&slot) = st.by_id.get(id) {
            if let Some(Some(o)) = st.objects.get(slot as usize) {
                if !o.destroyed && &*o.r.id == id {
                    return Some(o.r.clone());
                }
            }
        }
        st.objects
            .iter()
            .flatten()
            .find(|o| &*o.r.id == id && !o.destroyed)
            .map(|o| o.r.clone())
    }

    /// Every live object.
    pub fn all_objects(&self) -> Vec<Arc<ObjRef>> {
        self.lock()
            .objects
            .iter()
            .flatten()
            .filter(|o| !o.destroyed)
            .map(|o| o.r.clone())
            .collect()
    }

    /// The owner of an object.
    pub fn owner(&self, r: &ObjRef) -> Option<Arc<ObjRef>> {
        self.with_obj(r, |o| o.owner.clone()).ok().flatten()
    }

    /// Static property storage of a class.
    pub fn static_get(&self, class: &str, name: &str) -> Option<Value> {
        self.lock()
            .statics
            .get(class)
            .and_then(|d| d.get(&Value::str(name)).cloned())
    }

    /// Sets a static property as it is (see [`Executor::set_static`]).
    pub fn static_set(&self, class: &str, name: &str, v: Value) {
        self.lock()
            .statics
            .entry(class.to_string())
            .or_default()
            .insert(Value::str(name), v);
    }

    /// Records the declaring class of the method whose expressions run now
    /// (for private properties); returns the previous one.
    pub fn set_caller(&self, class: Option<Arc<str>>) -> Option<Arc<str>> {
        let me = vm::coro::current_id();
        let mut st = self.lock();
        match class {
            Some(c) => st.callers.insert(me, c),
            None => st.callers.remove(&me),
        }
    }

    /// The declaring class of the method whose expressions run now on this
    /// green thread.
    pub fn caller(&self) -> Option<Arc<str>> {
        self.lock().callers.get(&vm::coro::current_id()).cloned()
    }

    /// A context for evaluating expressions of `class` with `$` = `this`.
    pub fn class_ctx(&self, class: &Arc<Class>, this: Value) -> Arc<Frame> {
        let mut f = Frame::default();
        f.args.push(this.clone());
        f.vars.push(("this".into(), this));
        f.scope = Some(
            Scope {
                class: Some(class.clone()),
                ..Default::default()
            }
            .into_frame_scope(),
        );
        Arc::new(f)
    }

    /// A context for evaluating expressions typed outside any method with
    /// `$` = `data` and no `$this`, whose class names and extension methods
    /// are `class`'s (see [`Class::names_only`]).
    pub fn names_ctx(&self, class: &Arc<Class>, data: Value) -> Arc<Frame> {
        let mut f = Frame::default();
        f.args.push(data);
        f.scope = Some(
            Scope {
                class: Some(class.clone()),
                ..Default::default()
            }
            .into_frame_scope(),
        );
        Arc::new(f)
    }

    /// The class of the method a context belongs to.
    pub fn ctx_class(&self, ctx: &Arc<Frame>) -> Option<Arc<Class>> {
        Scope::find(ctx, |s| s.class.clone())
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
}

/// Keeps a caller's frame among the GC roots while a call is in progress.
pub struct FrameGuard<'a> {
    ex: &'a Executor,
    token: u64,
}

impl<'a> FrameGuard<'a> {
    /// Pushes `frame` as a root until the guard drops.
    pub fn push(ex: &'a Executor, frame: &Arc<Frame>) -> FrameGuard<'a> {
        let token = ex.gc_state(|g| {
            g.next_token += 1;
            g.frames.push((g.next_token, frame.clone()));
            g.next_token
        });
        FrameGuard { ex, token }
    }
}

impl Drop for FrameGuard<'_> {
    fn drop(&mut self) {
        let t = self.token;
        self.ex.gc_state(|g| {
            if let Some(i) = g.frames.iter().rposition(|(k, _)| *k == t) {
                g.frames.remove(i);
            }
        });
    }
}

/// Sets the model root (a GC root).
pub fn set_root(ex: &Executor, root: Option<Arc<ObjRef>>) {
    ex.gc_state(|g| g.root = root);
}

/// `ObjectDestroyedError` when `receiver` is a destroyed object.
pub fn destroyed_error(ex: &Executor, receiver: &Value) -> Option<Error> {
    let Value::Object(r) = receiver else {
        return None;
    };
    let (destroyed, class) = ex
        .with_obj(r, |o| (o.destroyed, o.class.type_string()))
        .ok()?;
    destroyed.then(|| {
        Error::new(
            ErrorKind::ObjectDestroyedError,
            format!("Object <{class} {}> is already destroyed", r.id),
        )
    })
}

/// True when the object has been destroyed.
pub fn is_destroyed(ex: &Executor, r: &ObjRef) -> bool {
    ex.with_obj(r, |o| o.destroyed).unwrap_or(true)
}

/// True when the object is sentenced in the running pass (or destroyed).
pub fn is_doomed(ex: &Executor, r: &ObjRef) -> bool {
    ex.gc_state(|g| g.doomed.contains(&r.slot)) || is_destroyed(ex, r)
}
