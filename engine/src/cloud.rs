//! The engine's side of the cloud: what the `io.murano.system` classes of
//! the core library (`core/System.yaml`) ask of the world outside the
//! engine (Heat stacks, the guest agent, Neutron, other services' state,
//! package resources, status reports).
//!
//! The engine owns no cloud state. Each executor holds a [`CloudHost`]; the
//! natives (`cloudStackPush`, `cloudAgentPlan`, ..., in `cloud_fns.rs`)
//! evaluate their arguments and forward them, as one [`CloudOp`], to it. The deterministic simulation (crate `muranopl-sim`)
//! is one implementation; an executor without one answers every operation
//! with a clear error.

use runtime::ErrorKind;
use std::sync::Arc;

use runtime::registry::Args;
use runtime::{Error, Result, Value};

/// One operation the `io.murano.system` classes ask of the cloud. Each is
/// the native `cloud<Op>` of the same name; its arguments (evaluated, lazy
/// sequences as lists) are listed with the variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CloudOp {
    /// `cloudGateway(cidr)`: the gateway address of a subnet.
    Gateway,
    /// `cloudResource(package, name, kind)`: a package resource as
    /// `string`, `bytes`, `yaml` or `json`.
    Resource,
    /// `cloudStackPush(name, template, parameters)`: the stack's outputs.
    StackPush,
    /// `cloudStackDelete(name)`.
    StackDelete,
    /// `cloudStackId(name)`.
    StackId,
    /// `cloudStackTemplate(name)`: the last template pushed (`{}` if none).
    StackTemplate,
    /// `cloudNeutron(op, kind, arg)`: `create`/`show`/`update`/`delete`/`list`.
    Neutron,
    /// `cloudAgentPlan(host, plan, package, call, answer)`: sends (or calls)
    /// an execution plan.
    AgentPlan,
    /// `cloudRecord(section, entry)`: a report, notification or event.
    Record,
    /// `cloudStore(kind, key, value)`: other services' state.
    Store,
    /// `cloudFetch(kind, key)`: one stored value, or all of a kind.
    Fetch,
    /// `cloudParseYaml(text)`.
    ParseYaml,
    /// `cloudExecutionPlan(template, package)`: an agent plan from a
    /// template, with its script files.
    ExecutionPlan,
    /// `cloudAddress(resource, floating)`: the address of a resource.
    Address,
}

/// The world outside the engine, as the `io.murano.system` classes see it.
/// Implementations own their state; each execution has its own host.
pub trait CloudHost: Send + Sync {
    /// Performs one operation. `args` hold the native's parameters in
    /// declaration order, evaluated.
    fn call(&self, op: CloudOp, args: Args) -> Result<Value>;
}

/// The host of an executor nobody gave a cloud: every operation is an
/// error that says so.
pub struct NoCloud;

impl CloudHost for NoCloud {
    fn call(&self, op: CloudOp, _: Args) -> Result<Value> {
        Err(Error::new(
            ErrorKind::RuntimeError,
            format!("{op:?}: this execution has no cloud (attach one with Executor::set_cloud)"),
        ))
    }
}

/// Shared handle to a cloud host.
pub type SharedCloud = Arc<dyn CloudHost>;
