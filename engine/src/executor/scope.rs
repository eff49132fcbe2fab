//! What the engine attaches to YAQL frames, and the names of MuranoPL
//! exceptions.

use std::sync::Arc;

use runtime::ctx::Frame;
use runtime::value::ObjRef;
use runtime::ErrorKind;

use crate::class::Class;

/// The payload kind of errors thrown by `Throw`.
pub const MURANO_EXCEPTION: &str = "MuranoPlException";

/// What the engine attaches to a YAQL frame ([`Frame::scope`]): typed
/// data that expressions cannot see or shadow. Each field, when set,
/// holds for the frame and the frames below it, until a nearer scope sets
/// it again.
#[derive(Default)]
pub struct Scope {
    /// The class whose code runs (private properties, extension methods,
    /// `class()` names resolved in its namespaces).
    pub class: Option<Arc<Class>>,
    /// The object that owns the value a contract checks (`class()`,
    /// `owned()`, `notOwned()`).
    pub owner: Option<Arc<ObjRef>>,
    /// True while argument contracts run: objects they create from
    /// definitions have no owner.
    pub args: Option<bool>,
    /// What a call hook attaches to the frames of code it runs instead of
    /// a call (the test framework: a mock expression's intercepted call).
    pub hook: Option<Arc<dyn std::any::Any + Send + Sync>>,
}

impl Scope {
    /// A frame-ready scope.
    pub fn into_frame_scope(self) -> runtime::ctx::Scope {
        Arc::new(self)
    }

    /// The nearest value of a field along `ctx`'s frames.
    pub fn find<T>(ctx: &Frame, field: impl Fn(&Scope) -> Option<T>) -> Option<T> {
        ctx.scopes()
            .filter_map(|s| s.downcast_ref::<Scope>())
            .find_map(field)
    }
}

/// Kinds of MuranoPL exceptions as seen from inside MuranoPL.
pub fn qualified_kind(kind: &str) -> String {
    match ErrorKind::known(kind).and_then(|k| k.module()) {
        Some(module) => format!("{module}.{kind}"),
        None => kind.to_string(),
    }
}
