//! Object models out: `Objects`, `ObjectsCopy`, `Attributes`.

use std::sync::Arc;

use runtime::value::ObjRef;
use runtime::{Result, Value};

use super::Executor;

/// Serializes the model rooted at `root` (not built yet: returns null).
pub fn serialize_model(ex: &Executor, root: &Arc<ObjRef>) -> Result<Value> {
    let _ = (ex, root);
    Ok(Value::Null)
}

/// Registers `dump()` and the serializer's engine functions.
pub fn register(r: &mut runtime::Registry) {
    let _ = r;
}
