//! The roots the garbage collector (`gc.rs`) starts from that the
//! executor keeps: the model root and the frames of the calls in progress;
//! and what the store knows of destroyed and doomed objects.

use std::collections::HashSet;
use std::sync::Arc;

use runtime::ctx::Frame;
use runtime::value::ObjRef;

/// The collector's state (a field of the executor's state).
#[derive(Default)]
pub struct GcState {
    /// Frames of calls in progress, by token.
    pub(crate) frames: Vec<(u64, Arc<Frame>)>,
    pub(crate) next_token: u64,
    /// The model root.
    pub(crate) root: Option<Arc<ObjRef>>,
    /// Slots of the objects sentenced in the current pass.
    pub(crate) doomed: HashSet<u32>,
    /// A pass is running.
    pub(crate) running: bool,
}
