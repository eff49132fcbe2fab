//! How the layers above the executor reach back into a call without the
//! executor naming them: the call hook (installed at run time, by the test
//! framework for its mocks) and the upcalls table (given at construction by
//! the crate's top, `lib.rs`).

use std::sync::Arc;

use runtime::ctx::Frame;
use runtime::registry::Cx;
use runtime::value::ObjRef;
use runtime::{Dict, Env, Result, Value};

use super::state::Executor;
use crate::class::{Class, Method};

use super::state::CallHook;

/// A call site pushed on a call hook while a call runs.
pub(crate) struct Site<'a>(Option<&'a dyn CallHook>);

impl<'a> Site<'a> {
    /// Tells `ex`'s hook, if any, that a call starts at `ctx`.
    #[inline]
    pub(crate) fn enter(ex: &'a Executor, ctx: &Arc<Frame>) -> Site<'a> {
        match ex.call_hook() {
            Some(h) if h.enter_site(ctx) => Site(Some(&**h)),
            _ => Site(None),
        }
    }
}

impl Drop for Site<'_> {
    fn drop(&mut self) {
        if let Some(h) = self.0 {
            h.leave_site();
        }
    }
}

impl Executor {
    /// Installs the call hook (once per execution; false when one is
    /// installed already).
    pub fn set_call_hook(&self, hook: Arc<dyn CallHook>) -> bool {
        self.hook.set(hook).is_ok()
    }

    /// The installed call hook.
    #[inline]
    pub fn call_hook(&self) -> Option<&Arc<dyn CallHook>> {
        self.hook.get()
    }

    /// Runs a method body (see [`Layers::run_method`]).
    pub fn run_method(
        &self,
        env: &Env,
        class: &Arc<Class>,
        method: &Arc<Method>,
        this: Value,
        vars: Vec<(Arc<str>, Value)>,
    ) -> Result<Value> {
        (self.layers.run_method)(self, env, class, method, this, vars)
    }

    /// Makes an object of definition `v` (see [`Layers::instantiate`]).
    pub fn instantiate(
        &self,
        cx: &Cx,
        v: &Value,
        owner: Option<Arc<ObjRef>>,
        default: Option<&str>,
    ) -> Result<Arc<ObjRef>> {
        (self.layers.instantiate)(self, cx, v, owner, default)
    }

    /// The properties of `class` template `given` gives (see
    /// [`Layers::template_props`]).
    pub fn template_props(
        &self,
        class: &Arc<Class>,
        given: &Dict,
        excluded: &[Value],
    ) -> Result<Dict> {
        (self.layers.template_props)(self, class, given, excluded)
    }
}
