//! The host interface: what the VM asks of the embedding for MuranoPL
//! objects (method dispatch on objects and types). YAQL alone needs no host.

use std::any::Any;
use std::sync::Arc;

use crate::error::Result;
use crate::registry::{ArgIn, Cx};
use crate::value::Value;

/// Services an embedding provides to evaluation.
pub trait Host: Send + Sync {
    /// For downcasting to the concrete host.
    fn as_any(&self) -> &dyn Any;
    /// For downcasting a shared host to the concrete type.
    fn as_any_arc(self: Arc<Self>) -> Arc<dyn Any + Send + Sync>;
    /// `receiver.name(args)` where the receiver is a MuranoPL object or
    /// type. `None` means "not a method of the object": the call falls back
    /// to the function registry (extension methods, yaql methods).
    fn call_method(
        &self,
        cx: &Cx,
        receiver: &Value,
        name: &str,
        pos: &[ArgIn],
        named: &[(Arc<str>, ArgIn)],
    ) -> Option<Result<Value>>;

    /// Whether [`Host::call_method`] could answer `receiver.name(...)`.
    /// `false` lets the VM go straight to the function registry. The
    /// default is `true` (always ask).
    fn may_handle(&self, receiver: &Value, name: &str) -> bool {
        let _ = (receiver, name);
        true
    }

    /// The generator of the run this host executes (`random()`,
    /// `randomName()`); `None` (the default) leaves them to the
    /// evaluation's ([`crate::rand::next_u64`]).
    fn rng(&self) -> Option<&crate::rand::Rng> {
        None
    }
}
