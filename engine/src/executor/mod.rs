//! One MuranoPL execution ([`Executor`]): the object store over a shared
//! [`Catalog`], and everything else a run changes (statics, log, traces,
//! violations, locks). This layer knows the catalogue and the classes
//! below it; the layers above (contracts, property access, dispatch, the
//! statement interpreter, models, natives) add their `impl Executor`
//! blocks and reach back down only through [`Layers`] and the hooks.

mod foreign;
mod hooks;
mod journal;
mod names;
mod objects;
mod roots;
mod scope;
mod state;

pub(crate) use foreign::Defs;
pub use foreign::{not_streamable, Index};
pub(crate) use hooks::Site;
pub use names::{attr_slot, resolve_class_name};
pub use objects::{destroyed_error, is_destroyed, is_doomed, set_root, FrameGuard};
pub use scope::{qualified_kind, Scope, MURANO_EXCEPTION};
pub use state::{
    Call, CallHook, Executor, ExecutorOf, Instantiate, Layers, LogSink, ObjState, RunMethod,
    TemplateProps, STEP_BUDGET,
};
