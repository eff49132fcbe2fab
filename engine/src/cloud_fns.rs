//! The cloud's natives: the `cloud*` functions the core library's system
//! classes call, forwarded to the executor's [`CloudHost`].

use runtime::registry::{p, Args, Cx, Registry, Ty};
use runtime::{Result, Value};

use crate::cloud::CloudOp;
use crate::executor::ExecutorOf;

fn forward(cx: &Cx, op: CloudOp, mut a: Args) -> Result<Value> {
    let ex = cx.executor()?;
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
    let ex = cx.executor()?;
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
