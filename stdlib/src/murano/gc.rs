//! The garbage collector of MuranoPL objects (`io.murano.system.GC`):
//! `collect`, `isDestroyed`, `isDoomed`, destruction subscriptions.

use runtime::registry::{p, var, Args, Cx, Registry, Ty};
use runtime::{Result, Value};

use super::executor;

/// `GC.collect()`: not built yet (objects are never collected).
fn gc_collect(_: &Cx, _: Args) -> Result<Value> {
    Ok(Value::Null)
}

/// `GC.isDestroyed(obj)`.
fn gc_is_destroyed(cx: &Cx, a: Args) -> Result<Value> {
    let ex = executor(cx)?;
    match a.get(0) {
        Value::Object(o) => Ok(Value::Bool(ex.with_obj(o, |s| s.destroyed).unwrap_or(true))),
        _ => Ok(Value::Bool(false)),
    }
}

/// `GC.subscribeDestruction` / `unsubscribeDestruction`: not built yet.
fn gc_subscribe(_: &Cx, _: Args) -> Result<Value> {
    Ok(Value::Null)
}

/// Registers the GC hooks used by `core/GC.yaml`.
pub fn register(r: &mut Registry) {
    r.function("gcCollect", vec![], gc_collect);
    r.function("gcIsDestroyed", vec![p("obj", Ty::Any).nullable()], gc_is_destroyed);
    r.function("gcIsDoomed", vec![p("obj", Ty::Any).nullable()], gc_is_destroyed);
    r.function("gcSubscribe", vec![var("args", Ty::Any).nullable()], gc_subscribe);
    r.function("gcUnsubscribe", vec![var("args", Ty::Any).nullable()], gc_subscribe);
}
