//! The engine's side of the cloud: what the `io.murano.system` classes of
//! the core library (`core/System.yaml`) ask of the world outside the
//! engine (Heat stacks, the guest agent, Neutron, other services' state,
//! package resources, status reports).
//!
//! The engine owns no cloud state. Each [`Executor`](crate::Executor) holds
//! a [`CloudHost`]; the natives registered here (`cloudStackPush`,
//! `cloudAgentPlan`, ...) evaluate their arguments and forward them, as one
//! [`CloudOp`], to it. The deterministic simulation (crate `muranopl-sim`)
//! is one implementation; an executor without one answers every operation
//! with a clear error.

use runtime::ErrorKind;
use std::sync::Arc;

use runtime::registry::{p, Args, Cx, Registry, Ty};
use runtime::{Error, Result, Value};

use crate::executor;

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

fn forward(cx: &Cx, op: CloudOp, mut a: Args) -> Result<Value> {
    let ex = executor(cx)?;
    for v in a.vals.iter_mut() {
        *v = stdlib::finalize(cx.env, std::mem::replace(v, Value::Null))?;
    }
    ex.cloud().call(op, a)
}

/// `decryptData(value)`: secrets are not encrypted in this engine.
fn decrypt_data(_: &Cx, a: Args) -> Result<Value> {
    Ok(a.get(0).clone())
}

/// `cloudCallerPackage()`: the package of the class whose code is running
/// (evaluated in an argument default, that is the caller of the method).
fn caller_package(cx: &Cx, _: Args) -> Result<Value> {
    let ex = executor(cx)?;
    Ok(match ex.caller().map(|c| ex.class(&c)) {
        Some(Ok(cls)) => Value::str(cls.package.name.to_string()),
        _ => Value::Null,
    })
}

macro_rules! natives {
    ($($f:ident $name:literal $op:ident [$($param:literal $nullable:literal),*];)*) => {
        $(
            fn $f(cx: &Cx, a: Args) -> Result<Value> {
                forward(cx, CloudOp::$op, a)
            }
        )*
        /// Registers the cloud natives of the core library.
        pub fn register(r: &mut Registry) {
            r.function("decryptData", vec![p("value", Ty::Any).nullable()], decrypt_data);
            r.function("cloudCallerPackage", vec![], caller_package);
            $(
                r.function(
                    $name,
                    vec![$({
                        let q = p($param, Ty::Any);
                        if $nullable { q.nullable() } else { q }
                    }),*],
                    $f,
                );
            )*
        }
    };
}

natives! {
    gateway "cloudGateway" Gateway ["cidr" true];
    resource "cloudResource" Resource ["package" true, "name" false, "kind" true];
    stack_push "cloudStackPush" StackPush ["name" false, "template" true, "parameters" true];
    stack_delete "cloudStackDelete" StackDelete ["name" false];
    stack_id "cloudStackId" StackId ["name" false];
    neutron "cloudNeutron" Neutron ["op" false, "kind" false, "arg" true];
    agent_plan "cloudAgentPlan" AgentPlan
        ["host" true, "plan" true, "package" true, "call" true, "answer" true];
    record "cloudRecord" Record ["section" false, "entry" true];
    stack_template "cloudStackTemplate" StackTemplate ["name" false];
    store "cloudStore" Store ["kind" false, "key" false, "value" true];
    fetch "cloudFetch" Fetch ["kind" false, "key" true];
    parse_yaml "cloudParseYaml" ParseYaml ["text" false];
    execution_plan "cloudExecutionPlan" ExecutionPlan ["template" true, "package" true];
    address "cloudAddress" Address ["resource" false, "floating" true];
}
