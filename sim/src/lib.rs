//! The simulated cloud: a deterministic stand-in for Heat, the guest agent,
//! status reporting and package resources, used by the `io.murano.system`
//! classes of our core library (`core/System.yaml`).
//!
//! Every execution has its own [`SimCloud`]: the executor reaches it only
//! through [`CloudHost`], and whoever runs the execution keeps a handle to
//! read the [`SimCloud::record`] afterwards. Nothing here touches a network: `push` records the
//! template and computes the stack outputs from it (addresses are handed
//! out in order of first use, so a run is reproducible), agent plans are
//! recorded with the script files they reference, and `call` answers with
//! a deterministic value. [`record`] returns everything a run did as one
//! value (reports, templates pushed, plans sent, notifications).
//!
//! Resources: a run registers a reader per package with
//! [`SimCloud::set_resources`]; `Resources.string/yaml/json` read from the package of
//! the class that calls them (or that created the `Resources` object). The
//! core library's own resources (the `RunCommand` / `PutFile` plan
//! templates) are built in.

use runtime::ErrorKind;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

pub mod deploy;

use engine::cloud::{CloudHost, CloudOp};
use runtime::registry::Args;
use runtime::{Dict, Error, Result, Value};

/// Reads a resource file (`Resources/NAME`) of a package.
pub type ResourceReader = Arc<dyn Fn(&str) -> Option<Vec<u8>> + Send + Sync>;

/// The stacks as a value: each one's final template, parameters, outputs,
/// pushes and whether it was deleted, by name.
fn stacks_value(stacks: &BTreeMap<String, Stack>) -> Dict {
    let mut out = Dict::default();
    for (name, st) in stacks {
        out.insert(
            s(name),
            dict(vec![
                ("template", st.template.clone()),
                ("parameters", st.parameters.clone()),
                ("outputs", Value::dict(st.outputs.clone())),
                ("pushes", Value::Int(st.pushes as i64)),
                ("deleted", Value::Bool(st.deleted)),
            ]),
        );
    }
    out
}

struct Stack {
    template: Value,
    parameters: Value,
    outputs: Dict,
    pushes: usize,
    deleted: bool,
}

impl Default for Stack {
    fn default() -> Stack {
        Stack {
            template: Value::Null,
            parameters: Value::Null,
            outputs: Dict::default(),
            pushes: 0,
            deleted: false,
        }
    }
}

#[derive(Default)]
struct Cloud {
    resources: HashMap<String, ResourceReader>,
    stacks: BTreeMap<String, Stack>,
    /// Resource name -> address index (first use order).
    addresses: HashMap<String, u32>,
    reports: Vec<Value>,
    pushes: Vec<Value>,
    plans: Vec<Value>,
    notifications: Vec<Value>,
    events: Vec<Value>,
    /// Scripted agent answers (see [`set_agent_answers`]): plan name ->
    /// answer, and `host/plan name` -> answer.
    agent_answers: HashMap<String, Value>,
    /// Neutron API objects beside Heat (networking-sfc): kind -> id -> object.
    neutron: BTreeMap<String, Dict>,
    neutron_seq: u64,
    /// Other services' state (Mistral workflows, ...): kind -> key -> value.
    store: BTreeMap<String, Dict>,
    /// Execution plans built so far (for their ids and stamps).
    plan_seq: u64,
}

/// The simulated cloud of one execution.
#[derive(Default)]
pub struct SimCloud {
    state: Mutex<Cloud>,
    /// Told of each status report as the run makes it (see
    /// [`SimCloud::on_report`]).
    report_sink: Mutex<Option<ReportSink>>,
}

/// A function told of each status report.
type ReportSink = Box<dyn Fn(&Value) + Send + Sync>;

impl SimCloud {
    /// A cloud with nothing deployed.
    pub fn new() -> SimCloud {
        SimCloud::default()
    }

    fn with<T>(&self, f: impl FnOnce(&mut Cloud) -> T) -> T {
        f(&mut self.state.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Calls `sink` with each status report (`{level, entity, text}`) as
    /// the run makes it: progress for long deployments.
    pub fn on_report(&self, sink: impl Fn(&Value) + Send + Sync + 'static) {
        *self.report_sink.lock().unwrap_or_else(|e| e.into_inner()) = Some(Box::new(sink));
    }

    /// Makes the resources of package `name` readable by the run.
    pub fn set_resources(&self, name: &str, reader: ResourceReader) {
        self.with(|c| {
            c.resources.entry(name.to_string()).or_insert(reader);
        });
    }

    /// Scripts the agent of the run: a `call` of a plan named `NAME`
    /// answers `answers["HOST/NAME"]` (HOST is the instance's name) or else
    /// `answers["NAME"]`, instead of the default answer (the host's first
    /// address). A v1 plan answers the value once per command unless the
    /// value is already a list. This is how a test or a user makes the
    /// simulated guest report, say, its OS release.
    pub fn set_agent_answers(&self, answers: &Dict) -> Result<()> {
        let mut map = HashMap::new();
        for (k, v) in answers.iter() {
            let Some(k) = k.as_str() else {
                return Err(Error::value(format!(
                    "agent answers are keyed by plan name, not {}",
                    runtime::pyrepr::repr(k)
                )));
            };
            map.insert(k.to_string(), v.clone());
        }
        self.with(|c| c.agent_answers = map);
        Ok(())
    }

    /// Configures the simulated cloud of `ex` from a file (YAML or JSON):
    ///
    /// ```yaml
    /// agent:
    ///   answers:                      # see [`SimCloud::set_agent_answers`]
    ///     Check OS Distribution: Ubuntu 14.04.5 LTS
    ///     web-1/Deploy: ok            # only for the instance named web-1
    /// ```
    ///
    /// Unknown keys are errors, so a misspelt setting is not silently ignored.
    pub fn configure(&self, text: &str, file: &str) -> Result<()> {
        let config = yaml_value(text, file)?;
        let bad = |m: String| Error::value(format!("{file}: {m}"));
        let Value::Dict(top) = &config else {
            return Err(bad("expected a mapping".into()));
        };
        for (k, v) in top.iter() {
            match k.as_str() {
                Some("agent") => {
                    let Value::Dict(agent) = v else {
                        return Err(bad("`agent` must be a mapping".into()));
                    };
                    for (ak, av) in agent.iter() {
                        match (ak.as_str(), av) {
                            (Some("answers"), Value::Dict(d)) => self
                                .set_agent_answers(d)
                                .map_err(|e| bad(e.message().to_string()))?,
                            (Some("answers"), _) => {
                                return Err(bad("`agent.answers` must be a mapping".into()))
                            }
                            _ => {
                                return Err(bad(format!(
                                    "unknown setting agent.{}",
                                    runtime::pyrepr::to_str(ak)
                                )))
                            }
                        }
                    }
                }
                _ => {
                    return Err(bad(format!(
                        "unknown setting {}",
                        runtime::pyrepr::to_str(k)
                    )))
                }
            }
        }
        Ok(())
    }

    /// The deployment record of the run: `reports`, `stacks` (final
    /// template, parameters, outputs of each), `pushes` (every template
    /// pushed), `plans` (agent execution plans), `notifications`, `events`,
    /// `neutron` (objects made through the Neutron API, by kind).
    pub fn record(&self) -> Value {
        self.with(|c| {
            let stacks = stacks_value(&c.stacks);
            let mut neutron = Dict::default();
            for (kind, objs) in &c.neutron {
                neutron.insert(s(kind), Value::list(objs.values().cloned().collect()));
            }
            dict(vec![
                ("reports", Value::list(c.reports.clone())),
                ("stacks", Value::dict(stacks)),
                ("pushes", Value::list(c.pushes.clone())),
                ("plans", Value::list(c.plans.clone())),
                ("notifications", Value::list(c.notifications.clone())),
                ("events", Value::list(c.events.clone())),
                ("neutron", Value::dict(neutron)),
            ])
        })
    }
}

impl SimCloud {
    /// What a later run in the same cloud starts from, as one value: the
    /// stacks (template, parameters, outputs), the addresses handed out,
    /// the Neutron objects and the other services' state. What a run did
    /// (reports, pushes, plans, events) is not part of it. A server that
    /// keeps deployments between runs (`serve`) keeps this, and
    /// [`SimCloud::restore`]s it into the next run's cloud, as Heat and
    /// Neutron keep their state between murano's tasks.
    pub fn state(&self) -> Value {
        self.with(|c| {
            let stacks = stacks_value(&c.stacks);
            // In the order they were handed out (the map's own order
            // changes from process to process).
            let mut handed: Vec<(&String, &u32)> = c.addresses.iter().collect();
            handed.sort_by_key(|(_, i)| **i);
            let mut addresses = Dict::default();
            for (k, i) in handed {
                addresses.insert(s(k), Value::Int(*i as i64));
            }
            let by_kind = |m: &BTreeMap<String, Dict>| {
                let mut d = Dict::default();
                for (k, v) in m {
                    d.insert(s(k), Value::dict(v.clone()));
                }
                Value::dict(d)
            };
            dict(vec![
                ("stacks", Value::dict(stacks)),
                ("addresses", Value::dict(addresses)),
                ("neutron", by_kind(&c.neutron)),
                ("neutronSeq", Value::Int(c.neutron_seq as i64)),
                ("store", by_kind(&c.store)),
                ("planSeq", Value::Int(c.plan_seq as i64)),
            ])
        })
    }

    /// Starts this cloud from `state` (what [`SimCloud::state`] returned;
    /// null or `{}`: nothing deployed).
    pub fn restore(&self, state: &Value) -> Result<()> {
        let bad = |what: &str| Error::value(format!("the cloud's state: {what}"));
        let entries = |v: Option<&Value>, what: &str| -> Result<Vec<(String, Value)>> {
            match v {
                None | Some(Value::Null) => Ok(Vec::new()),
                Some(Value::Dict(d)) => d
                    .iter()
                    .map(|(k, v)| Ok((k.as_str().ok_or_else(|| bad(what))?.to_string(), v.clone())))
                    .collect(),
                Some(_) => Err(bad(what)),
            }
        };
        let int = |v: Option<&Value>| v.and_then(Value::as_i64).unwrap_or(0).max(0) as u64;
        let mut stacks = BTreeMap::new();
        for (name, st) in entries(get(state, "stacks"), "stacks")? {
            let outputs = match get(&st, "outputs") {
                Some(Value::Dict(d)) => (**d).clone(),
                _ => Dict::default(),
            };
            stacks.insert(
                name,
                Stack {
                    template: get(&st, "template").cloned().unwrap_or(Value::Null),
                    parameters: get(&st, "parameters").cloned().unwrap_or(Value::Null),
                    outputs,
                    pushes: int(get(&st, "pushes")) as usize,
                    deleted: get(&st, "deleted").is_some_and(Value::truthy),
                },
            );
        }
        let mut addresses = HashMap::new();
        for (k, i) in entries(get(state, "addresses"), "addresses")? {
            addresses.insert(k, int(Some(&i)) as u32);
        }
        let by_kind = |what: &str| -> Result<BTreeMap<String, Dict>> {
            let mut out = BTreeMap::new();
            for (k, v) in entries(get(state, what), what)? {
                match &v {
                    Value::Dict(d) => out.insert(k, (**d).clone()),
                    _ => return Err(bad(what)),
                };
            }
            Ok(out)
        };
        let (neutron, store) = (by_kind("neutron")?, by_kind("store")?);
        self.with(|c| {
            c.stacks = stacks;
            c.addresses = addresses;
            c.neutron = neutron;
            c.neutron_seq = int(get(state, "neutronSeq"));
            c.store = store;
            c.plan_seq = int(get(state, "planSeq"));
        });
        Ok(())
    }
}

pub(crate) fn s(v: &str) -> Value {
    Value::str(v)
}

pub(crate) fn dict(entries: Vec<(&str, Value)>) -> Value {
    let mut d = Dict::default();
    for (k, v) in entries {
        d.insert(s(k), v);
    }
    Value::dict(d)
}

// ---- the core library's own resources ---------------------------------

// The core library's plan templates have murano's shape
// (meta/io.murano/Resources): `runCommand` runs the command as an inline
// script file and answers the script's result; `putFile` writes the file
// with a script of the library and answers whether it succeeded.
const RUN_COMMAND: &str = "FormatVersion: 2.0.0
Version: 1.0.0
Name: $planName
Body: return runCommand()
Files:
  scriptFile:
    BodyType: Text
    Name: scriptFile.sh
    Body: $command
Scripts:
  runCommand:
    Type: Application
    Version: 1.0.0
    EntryPoint: scriptFile.sh
    Options:
      captureStdout: $captureStdout
      captureStderr: $captureStderr
      verifyExitcode: $verifyExitcode
";

const PUT_FILE: &str = "FormatVersion: 2.0.0
Version: 1.0.0
Name: $planName
Parameters:
  path: $path
Body: |
  return putFile(\"'{0}'\".format(args.path)).exitCode == 0
Files:
  destinationFile:
    BodyType: Base64
    Name: destinationFile
    Body: $fileContent
Scripts:
  putFile:
    Type: Application
    Version: 1.0.0
    EntryPoint: putFile.sh
    Files:
      - destinationFile
    Options:
      captureStdout: false
      captureStderr: true
      verifyExitcode: $verifyExitcode
";

/// The script `putFile` runs: moves the placed file to the path given.
const PUT_FILE_SH: &str =
    "#!/bin/bash\nmkdir -p \"$(dirname \"$1\")\" && cp destinationFile \"$1\"\n";

fn core_resource(name: &str) -> Option<&'static str> {
    match name {
        "RunCommand.template" => Some(RUN_COMMAND),
        "PutFile.template" => Some(PUT_FILE),
        "scripts/putFile.sh" => Some(PUT_FILE_SH),
        _ => None,
    }
}

fn read_resource(c: &SimCloud, package: &str, name: &str) -> Result<Vec<u8>> {
    let reader = c.with(|c| c.resources.get(package).cloned());
    if let Some(r) = reader {
        if let Some(b) = r(name) {
            return Ok(b);
        }
    }
    if package == "io.murano" || package.is_empty() {
        if let Some(t) = core_resource(name) {
            return Ok(t.as_bytes().to_vec());
        }
    }
    // Not in the calling package: a resource of any other loaded package.
    let readers: Vec<ResourceReader> = c.with(|c| c.resources.values().cloned().collect());
    for r in readers {
        if let Some(b) = r(name) {
            return Ok(b);
        }
    }
    if let Some(t) = core_resource(name) {
        return Ok(t.as_bytes().to_vec());
    }
    Err(Error::new(
        ErrorKind::ResourceNotFound,
        format!("resource {name} not found in package {package}"),
    ))
}

fn yaml_value(text: &str, file: &str) -> Result<Value> {
    let docs = compiler::murano::load_documents(text, file)?;
    Ok(match docs.first() {
        Some(d) => engine::node_value(d),
        None => Value::Null,
    })
}

/// `cloudResource(package, name, kind)`: kind is `string`, `bytes`,
/// `yaml` or `json`.
fn resource(c: &SimCloud, a: Args) -> Result<Value> {
    let package = a.get(0).as_str().unwrap_or("").to_string();
    let name = runtime::pyrepr::to_str(a.get(1));
    let kind = a.get(2).as_str().unwrap_or("string").to_string();
    let bytes = read_resource(c, &package, &name)?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    match kind.as_str() {
        "yaml" => yaml_value(&text, &format!("{package}/Resources/{name}")),
        "json" => runtime::json::from_tagged_str(&text),
        _ => Ok(Value::str(text)),
    }
}

// ---- Heat ---------------------------------------------------------------

pub(crate) fn get<'a>(v: &'a Value, k: &str) -> Option<&'a Value> {
    match v {
        Value::Dict(d) => d.get(&s(k)),
        _ => None,
    }
}

fn address(c: &mut Cloud, res: &str, floating: bool) -> String {
    let k = format!("{}{res}", if floating { "fip:" } else { "" });
    let n = c.addresses.len() as u32;
    let i = *c.addresses.entry(k).or_insert(n);
    if floating {
        format!("172.24.4.{}", 10 + i % 240)
    } else {
        format!("10.0.{}.{}", i / 240, 10 + i % 240)
    }
}

fn fake_id(stack: &str, res: &str) -> String {
    // FNV-1a: a stable id per stack and resource.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in stack.bytes().chain([b'/']).chain(res.bytes()) {
        h ^= b as u64;
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    let h2 = h.rotate_left(29) ^ 0x9e37_79b9_7f4a_7c15;
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        h >> 32,
        (h >> 16) & 0xffff,
        h & 0xffff,
        h2 >> 48,
        h2 & 0xffff_ffff_ffff
    )
}

/// The private addresses of server `res`, one per entry of its `networks`
/// property: an entry naming a port (`port: {get_resource: P}`) has the
/// port's own address (the one the port's `fixed_ips` gives), any other
/// entry an address of its own. A server with no networks has one address.
fn server_ips(c: &mut Cloud, template: &Value, res: &str) -> Vec<String> {
    let nets = get(template, "resources")
        .and_then(|r| get(r, res))
        .and_then(|r| get(r, "properties"))
        .and_then(|p| get(p, "networks"));
    let mut ips = Vec::new();
    if let Some(Value::List(entries)) = nets {
        for (i, e) in entries.iter().enumerate() {
            let port = get(e, "port")
                .and_then(|p| get(p, "get_resource").or(Some(p)))
                .and_then(|p| p.as_str());
            let key = match port {
                Some(p) if get(template, "resources").and_then(|r| get(r, p)).is_some() => {
                    p.to_string()
                }
                _ if i == 0 => res.to_string(),
                _ => format!("{res}#{i}"),
            };
            ips.push(address(c, &key, false));
        }
    }
    if ips.is_empty() {
        ips.push(address(c, res, false));
    }
    ips
}

/// The attachments of volume `res`: `OS::Cinder::VolumeAttachment`s of it
/// and servers that boot from it (`block_device_mapping_v2`).
fn volume_attachments(stack: &str, template: &Value, res: &str) -> Vec<Value> {
    let refers = |v: Option<&Value>| {
        v.is_some_and(|v| {
            v.as_str() == Some(res) || get(v, "get_resource").and_then(|x| x.as_str()) == Some(res)
        })
    };
    let server_of = |v: Option<&Value>| match v {
        Some(v) => match get(v, "get_resource").and_then(|x| x.as_str()) {
            Some(r) => fake_id(stack, r),
            None => runtime::pyrepr::to_str(v),
        },
        None => String::new(),
    };
    let mut out = Vec::new();
    let Some(Value::Dict(resources)) = get(template, "resources") else {
        return out;
    };
    for (name, r) in resources.iter() {
        let name = runtime::pyrepr::to_str(name);
        let props = get(r, "properties");
        match get(r, "type").and_then(|t| t.as_str()) {
            Some("OS::Cinder::VolumeAttachment")
                if refers(props.and_then(|p| get(p, "volume_id"))) =>
            {
                out.push(dict(vec![
                    ("id", s(&fake_id(stack, &name))),
                    ("attachment_id", s(&fake_id(stack, &name))),
                    ("volume_id", s(&fake_id(stack, res))),
                    (
                        "server_id",
                        s(&server_of(props.and_then(|p| get(p, "instance_uuid")))),
                    ),
                    (
                        "device",
                        props
                            .and_then(|p| get(p, "mountpoint"))
                            .cloned()
                            .unwrap_or(Value::Null),
                    ),
                ]));
            }
            Some("OS::Nova::Server") => {
                if let Some(Value::List(bdm)) =
                    props.and_then(|p| get(p, "block_device_mapping_v2"))
                {
                    for d in bdm.iter().filter(|d| refers(get(d, "volume_id"))) {
                        out.push(dict(vec![
                            ("id", s(&fake_id(stack, res))),
                            (
                                "attachment_id",
                                s(&fake_id(stack, &format!("{name}/{res}"))),
                            ),
                            ("volume_id", s(&fake_id(stack, res))),
                            ("server_id", s(&fake_id(stack, &name))),
                            (
                                "device",
                                get(d, "device_name").cloned().unwrap_or(Value::Null),
                            ),
                        ]));
                    }
                }
            }
            _ => {}
        }
    }
    out
}

fn attr(c: &mut Cloud, stack: &str, template: &Value, res: &str, attr: &str) -> Value {
    let rtype = get(template, "resources")
        .and_then(|r| get(r, res))
        .and_then(|r| get(r, "type"))
        .and_then(|t| t.as_str())
        .unwrap_or("")
        .to_string();
    match attr {
        "first_address" | "ip_address" | "private_ip" => {
            s(&server_ips(c, template, res).swap_remove(0))
        }
        "floating_ip_address" | "public_ip" => s(&address(c, res, true)),
        "addresses" | "networks" => {
            let ips = server_ips(c, template, res);
            dict(vec![(
                "network",
                Value::list(ips.iter().map(|ip| s(ip)).collect()),
            )])
        }
        "fixed_ips" => {
            let ip = address(c, res, false);
            Value::list(vec![dict(vec![
                ("ip_address", s(&ip)),
                ("subnet_id", s(&fake_id(stack, "subnet"))),
            ])])
        }
        "attachments_list" => Value::list(volume_attachments(stack, template, res)),
        "id" | "show" => s(&fake_id(stack, res)),
        "name" => s(res),
        _ if rtype == "OS::Neutron::FloatingIP" => s(&address(c, res, true)),
        _ => s(&format!("{res}.{attr}")),
    }
}

fn resolve(c: &mut Cloud, stack: &str, template: &Value, params: &Value, v: &Value) -> Value {
    match v {
        Value::Dict(d) if d.len() == 1 => {
            let (k, arg) = d
                .iter()
                .next()
                .map(|(k, a)| (k.clone(), a.clone()))
                .unwrap();
            match k.as_str().unwrap_or("") {
                "get_attr" | "Fn::GetAtt" => {
                    if let Value::List(l) = &arg {
                        let res = l.first().and_then(|x| x.as_str()).unwrap_or("");
                        let name = l.get(1).and_then(|x| x.as_str()).unwrap_or("");
                        // Further items are a path into the attribute
                        // (`[port, fixed_ips, 0, ip_address]`).
                        let mut v = attr(c, stack, template, res, name);
                        for step in l.iter().skip(2) {
                            v = match (&v, step) {
                                (Value::List(items), Value::Int(i)) => {
                                    items.get(*i as usize).cloned().unwrap_or(Value::Null)
                                }
                                (Value::Dict(d), k) => d.get(k).cloned().unwrap_or(Value::Null),
                                _ => Value::Null,
                            };
                        }
                        return v;
                    }
                }
                "get_resource" | "Ref" => {
                    let res = arg.as_str().unwrap_or("");
                    if get(params, res).is_some() {
                        return get(params, res).cloned().unwrap_or(Value::Null);
                    }
                    return s(&fake_id(stack, res));
                }
                "get_param" => {
                    let name = match &arg {
                        Value::List(l) => l.first().and_then(|x| x.as_str()).unwrap_or(""),
                        other => other.as_str().unwrap_or(""),
                    };
                    if let Some(v) = get(params, name) {
                        return v.clone();
                    }
                    return get(template, "parameters")
                        .and_then(|p| get(p, name))
                        .and_then(|p| get(p, "default"))
                        .cloned()
                        .unwrap_or(Value::Null);
                }
                "str_replace" => {
                    // Heat replaces the longest keys first, so that a key
                    // inside another is not replaced in it.
                    let text = get(&arg, "template")
                        .map(|t| resolve(c, stack, template, params, t))
                        .map(|t| runtime::pyrepr::to_str(&t));
                    let params_v =
                        get(&arg, "params").map(|p| resolve(c, stack, template, params, p));
                    if let (Some(mut text), Some(Value::Dict(ref ps))) = (text, params_v) {
                        let mut pairs: Vec<(String, String)> = ps
                            .iter()
                            .map(|(k, v)| (runtime::pyrepr::to_str(k), runtime::pyrepr::to_str(v)))
                            .collect();
                        pairs.sort_by_key(|p| std::cmp::Reverse(p.0.len()));
                        for (k, v) in pairs {
                            if !k.is_empty() {
                                text = text.replace(&k, &v);
                            }
                        }
                        return s(&text);
                    }
                }
                "Fn::Join" => {
                    if let Value::List(l) = &arg {
                        let sep = l.first().and_then(|x| x.as_str()).unwrap_or("").to_string();
                        if let Some(Value::List(ref items)) =
                            l.get(1).map(|x| resolve(c, stack, template, params, x))
                        {
                            let parts: Vec<String> =
                                items.iter().map(runtime::pyrepr::to_str).collect();
                            return s(&parts.join(&sep));
                        }
                    }
                }
                "list_join" => {
                    if let Value::List(l) = &arg {
                        let sep = l.first().and_then(|x| x.as_str()).unwrap_or("").to_string();
                        let mut parts = Vec::new();
                        for x in l.iter().skip(1) {
                            if let Value::List(ref items) = resolve(c, stack, template, params, x) {
                                for i in items.iter() {
                                    parts.push(runtime::pyrepr::to_str(i));
                                }
                            }
                        }
                        return s(&parts.join(&sep));
                    }
                }
                _ => {}
            }
            let mut out = Dict::default();
            out.insert(k, resolve(c, stack, template, params, &arg));
            Value::dict(out)
        }
        Value::Dict(d) => {
            let mut out = Dict::default();
            for (k, x) in d.iter() {
                out.insert(k.clone(), resolve(c, stack, template, params, x));
            }
            Value::dict(out)
        }
        Value::List(l) => Value::list(
            l.iter()
                .map(|x| resolve(c, stack, template, params, x))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// `cloudStackPush(name, template, parameters)`: records the template and
/// returns the stack outputs.
fn stack_push(c: &SimCloud, a: Args) -> Result<Value> {
    let name = runtime::pyrepr::to_str(a.get(0));
    let template = a.get(1).clone();
    let params = a.get(2).clone();
    Ok(c.with(|c| {
        let mut outputs = Dict::default();
        if let Some(Value::Dict(outs)) = get(&template, "outputs") {
            for (k, o) in outs.iter() {
                let v = get(o, "value").cloned().unwrap_or(Value::Null);
                outputs.insert(k.clone(), resolve(c, &name, &template, &params, &v));
            }
        }
        c.pushes.push(dict(vec![
            ("stack", s(&name)),
            ("template", template.clone()),
            ("parameters", params.clone()),
        ]));
        let st = c.stacks.entry(name.clone()).or_default();
        st.template = template;
        st.parameters = params;
        st.outputs = outputs.clone();
        st.pushes += 1;
        st.deleted = false;
        Value::dict(outputs)
    }))
}

/// `cloudStackDelete(name)`.
fn stack_delete(c: &SimCloud, a: Args) -> Result<Value> {
    let name = runtime::pyrepr::to_str(a.get(0));
    c.with(|c| {
        let st = c.stacks.entry(name.clone()).or_default();
        st.deleted = true;
        st.outputs = Dict::default();
        st.template = Value::dict(Dict::default());
        c.events.push(dict(vec![
            ("event", s("stackDeleted")),
            ("stack", s(&name)),
        ]));
    });
    Ok(Value::Null)
}

/// `cloudStackId(name)`: a stable stack id.
fn stack_id(_: &SimCloud, a: Args) -> Result<Value> {
    let name = runtime::pyrepr::to_str(a.get(0));
    Ok(s(&fake_id("stack", &name)))
}

// ---- the agent ----------------------------------------------------------

/// The files a v2 template defines inline (`Files: {id: {Name, BodyType,
/// Body}}`), by name: scripts that name them use them instead of a file
/// of the package (murano's `_build_v2_execution_plan`,
/// murano/engine/system/agent.py).
fn inline_files(template: &Value) -> HashMap<String, String> {
    match get(template, "Files") {
        Some(Value::Dict(d)) => d
            .iter()
            .filter_map(|(id, f)| {
                let name = get(f, "Name")?;
                Some((runtime::pyrepr::to_str(name), runtime::pyrepr::to_str(id)))
            })
            .collect(),
        _ => HashMap::new(),
    }
}

/// What a v2 plan script places on the guest: its entry point when it is
/// an `Application` script (for Chef or Puppet the entry point is a recipe
/// name), then its `Files`, each with the URL the agent downloads it from
/// when it is given as `{name: url}`.
fn script_files(sc: &Value) -> (Option<String>, Vec<(String, Option<Value>)>) {
    let app = get(sc, "Type")
        .and_then(|t| t.as_str())
        .is_some_and(|t| t.contains("Application"));
    let entry = get(sc, "EntryPoint")
        .filter(|_| app)
        .map(runtime::pyrepr::to_str);
    let mut files = Vec::new();
    if let Some(Value::List(fl)) = get(sc, "Files") {
        for f in fl.iter() {
            match f {
                Value::Dict(d) => {
                    if let Some((k, v)) = d.iter().next() {
                        let url = get(v, "URL").cloned().unwrap_or(v.clone());
                        files.push((runtime::pyrepr::to_str(k), Some(url)));
                    }
                }
                other => files.push((runtime::pyrepr::to_str(other), None)),
            }
        }
    }
    (entry, files)
}

/// The script files an execution plan template places on the guest, read
/// from the package's `Resources/scripts`, as murano's agent builds the
/// plan: a v2 template (`FormatVersion: 2.x`) places the `EntryPoint` of
/// each `Application` script and the scripts' `Files` (a `{name: url}`
/// entry is downloaded by the agent, not read); a v1 template inlines its
/// `Scripts`. A file that is not there is an error, as it is in murano.
fn plan_files(c: &SimCloud, package: &str, plan: &Value) -> Result<Value> {
    let mut out = Dict::default();
    let inline = inline_files(plan);
    let mut add = |name: &str| -> Result<()> {
        let file = name.trim_start_matches('<').trim_end_matches('>');
        if out.contains_key(&s(file)) || inline.contains_key(file) {
            return Ok(());
        }
        let body = read_resource(c, package, &format!("scripts/{file}"))?;
        out.insert(s(file), s(&String::from_utf8_lossy(&body)));
        Ok(())
    };
    match (get(plan, "FormatVersion"), get(plan, "Scripts")) {
        (Some(_), Some(Value::Dict(scripts))) => {
            for (_, sc) in scripts.iter() {
                let (entry, files) = script_files(sc);
                for name in entry
                    .iter()
                    .chain(files.iter().filter(|f| f.1.is_none()).map(|f| &f.0))
                {
                    add(name)?;
                }
            }
        }
        (None, Some(Value::List(scripts))) => {
            for sc in scripts.iter() {
                add(&runtime::pyrepr::to_str(sc))?;
            }
        }
        _ => {}
    }
    Ok(Value::dict(out))
}

/// `cloudAgentPlan(host, plan, package, call, answer)`: records an
/// execution plan sent to the agent of `host`; returns `answer` for a
/// `call`, null for a `send`.
fn agent_plan(c: &SimCloud, a: Args) -> Result<Value> {
    let host = runtime::pyrepr::to_str(a.get(0));
    let plan = a.get(1).clone();
    let package = a.get(2).as_str().unwrap_or("").to_string();
    let call = a.get(3).truthy();
    let answer = a.get(4).clone();
    let files = plan_files(c, &package, &plan)?;
    let shape = plan.clone();
    let name = get(&plan, "Name").cloned().unwrap_or(Value::Null);
    let scripted = name.as_str().and_then(|n| {
        c.with(|c| {
            c.agent_answers
                .get(&format!("{host}/{n}"))
                .or_else(|| c.agent_answers.get(n))
                .cloned()
        })
    });
    let v1_commands = match (get(&plan, "FormatVersion"), get(&plan, "Commands")) {
        (None, Some(Value::List(cmds))) => Some(cmds.len().max(1)),
        _ => None,
    };
    c.with(|c| {
        c.plans.push(dict(vec![
            ("host", s(&host)),
            ("method", s(if call { "call" } else { "send" })),
            ("name", name),
            ("package", s(&package)),
            ("plan", plan),
            ("files", files),
        ]))
    });
    if !call {
        return Ok(Value::Null);
    }
    // A v1 plan (`Scripts` + `Commands`, no `FormatVersion`) answers with
    // one result per command, as the Windows agent does.
    if let Some(n) = v1_commands {
        return Ok(match scripted {
            Some(v @ Value::List(_)) => v,
            Some(v) => Value::list(vec![v; n]),
            None => Value::list(vec![answer; n]),
        });
    }
    Ok(scripted.unwrap_or_else(|| shaped_answer(&shape, answer)))
}

/// The answer of a v2 plan the run scripts no answer for, shaped by its
/// `Body` as murano-agent would evaluate it: `return s()` of an
/// `Application` script gives the script's result `{exitCode, stdout,
/// stderr}` (`stdout` is the run's default answer, null when not
/// captured); `.stdout`, `.stderr` and `.exitCode` of it, and `.exitCode
/// == 0` / `!= 0`, give those. Any other body answers the default.
fn shaped_answer(plan: &Value, answer: Value) -> Value {
    let body = get(plan, "Body")
        .map(runtime::pyrepr::to_str)
        .unwrap_or_default();
    let Some(call) = body.trim().strip_prefix("return ") else {
        return answer;
    };
    let Some((name, rest)) = call.split_once('(') else {
        return answer;
    };
    let script = get(plan, "Scripts").and_then(|sc| get(sc, name.trim()));
    let is_app = script
        .and_then(|sc| get(sc, "Type"))
        .is_some_and(|t| runtime::pyrepr::to_str(t).contains("Application"));
    let Some(after) = close_paren(rest).filter(|_| is_app) else {
        return answer;
    };
    let option = |k: &str| {
        script
            .and_then(|sc| get(sc, "Options"))
            .and_then(|o| get(o, k))
            .is_none_or(Value::truthy)
    };
    let stdout = if option("captureStdout") {
        answer
    } else {
        Value::Null
    };
    let stderr = if option("captureStderr") {
        s("")
    } else {
        Value::Null
    };
    match after.split_whitespace().collect::<Vec<_>>()[..] {
        [] => dict(vec![
            ("exitCode", Value::Int(0)),
            ("stdout", stdout),
            ("stderr", stderr),
        ]),
        [".stdout"] => stdout,
        [".stderr"] => stderr,
        [".exitCode"] => Value::Int(0),
        [".exitCode", "==", "0"] => Value::Bool(true),
        [".exitCode", "!=", "0"] => Value::Bool(false),
        _ => stdout,
    }
}

/// The text after the parenthesis that closes an open one at the start.
fn close_paren(rest: &str) -> Option<&str> {
    let mut depth = 1usize;
    for (i, ch) in rest.char_indices() {
        match ch {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&rest[i + 1..]);
                }
            }
            _ => {}
        }
    }
    None
}

// ---- Neutron API (networking-sfc) ----------------------------------------

/// `cloudNeutron(op, kind, arg)`: the Neutron API for objects that are
/// not Heat resources (port pairs, port pair groups, flow classifiers,
/// port chains). `create` takes the object's fields and answers them with
/// a stable `id`; `show`, `update` (arg: `[id, fields]`) and `delete` take
/// an id and fail with `NeutronClientException` when it is unknown; `list`
/// answers every object of the kind in creation order.
fn neutron(c: &SimCloud, a: Args) -> Result<Value> {
    let op = runtime::pyrepr::to_str(a.get(0));
    let kind = runtime::pyrepr::to_str(a.get(1));
    let arg = a.get(2).clone();
    let not_found = |id: &str| {
        Error::new(
            ErrorKind::NeutronClientException,
            format!("{kind} {id} could not be found"),
        )
    };
    c.with(|c| match op.as_str() {
        "create" => {
            let Value::Dict(fields) = &arg else {
                return Err(Error::new(
                    ErrorKind::NeutronClientException,
                    format!(
                        "create {kind}: the body must be a dict, not {}",
                        arg.type_name()
                    ),
                ));
            };
            c.neutron_seq += 1;
            let id = fake_id("neutron", &format!("{kind}/{}", c.neutron_seq));
            let mut obj = Dict::default();
            obj.insert(s("id"), s(&id));
            for (k, v) in fields.iter() {
                if k.as_str() != Some("id") {
                    obj.insert(k.clone(), v.clone());
                }
            }
            let obj = Value::dict(obj);
            c.neutron
                .entry(kind.clone())
                .or_default()
                .insert(s(&id), obj.clone());
            c.events.push(dict(vec![
                ("event", s("neutronCreate")),
                ("kind", s(&kind)),
                ("id", s(&id)),
            ]));
            Ok(obj)
        }
        "show" | "delete" => {
            let id = runtime::pyrepr::to_str(&arg);
            let objs = c.neutron.entry(kind.clone()).or_default();
            if op == "show" {
                return objs.get(&s(&id)).cloned().ok_or_else(|| not_found(&id));
            }
            objs.shift_remove(&s(&id)).ok_or_else(|| not_found(&id))?;
            c.events.push(dict(vec![
                ("event", s("neutronDelete")),
                ("kind", s(&kind)),
                ("id", s(&id)),
            ]));
            Ok(Value::Null)
        }
        "update" => {
            let (id, fields) = match &arg {
                Value::List(l) if l.len() == 2 => (runtime::pyrepr::to_str(&l[0]), l[1].clone()),
                _ => {
                    return Err(Error::new(
                        ErrorKind::NeutronClientException,
                        format!("update {kind}: expected [id, fields]"),
                    ))
                }
            };
            let objs = c.neutron.entry(kind.clone()).or_default();
            let Some(Value::Dict(ref old)) = objs.get(&s(&id)).cloned() else {
                return Err(not_found(&id));
            };
            let mut obj = (**old).clone();
            if let Value::Dict(f) = &fields {
                for (k, v) in f.iter() {
                    if k.as_str() != Some("id") {
                        obj.insert(k.clone(), v.clone());
                    }
                }
            }
            let obj = Value::dict(obj);
            objs.insert(s(&id), obj.clone());
            Ok(obj)
        }
        "list" => Ok(Value::list(
            c.neutron
                .get(&kind)
                .map(|o| o.values().cloned().collect())
                .unwrap_or_default(),
        )),
        other => Err(Error::new(
            ErrorKind::NeutronClientException,
            format!("unknown Neutron operation {other:?}"),
        )),
    })
}

// ---- other services ---------------------------------------------------------

/// `cloudStackTemplate(name)`: the template Heat has for stack `name` (what
/// the last push sent), `{}` when the stack does not exist.
fn stack_template(c: &SimCloud, a: Args) -> Result<Value> {
    let name = runtime::pyrepr::to_str(a.get(0));
    Ok(c.with(|c| match c.stacks.get(&name) {
        Some(st) if !st.deleted && !matches!(st.template, Value::Null) => st.template.clone(),
        _ => Value::dict(Dict::default()),
    }))
}

/// `cloudStore(kind, key, value)`: keeps `value` under `key` in the state of
/// a simulated service (`kind`: `mistral`, ...); answers the value.
fn store_put(c: &SimCloud, a: Args) -> Result<Value> {
    let kind = runtime::pyrepr::to_str(a.get(0));
    let k = runtime::pyrepr::to_str(a.get(1));
    let v = a.get(2).clone();
    c.with(|c| {
        c.store.entry(kind).or_default().insert(s(&k), v.clone());
    });
    Ok(v)
}

/// `cloudFetch(kind, key)`: what `cloudStore` kept (null when nothing);
/// with a null key, every value of the kind in the order they were stored.
fn store_get(c: &SimCloud, a: Args) -> Result<Value> {
    let kind = runtime::pyrepr::to_str(a.get(0));
    let key = a.get(1).clone();
    Ok(c.with(|c| {
        let objs = c.store.get(&kind);
        match key {
            Value::Null => Value::list(
                objs.map(|o| o.values().cloned().collect())
                    .unwrap_or_default(),
            ),
            k => objs
                .and_then(|o| o.get(&s(&runtime::pyrepr::to_str(&k))).cloned())
                .unwrap_or(Value::Null),
        }
    }))
}

/// `cloudParseYaml(text)`: the first YAML document of `text` as a value.
fn parse_yaml(_: &SimCloud, a: Args) -> Result<Value> {
    let text = runtime::pyrepr::to_str(a.get(0));
    yaml_value(&text, "<definition>")
}

/// `cloudExecutionPlan(template, package)`: the execution plan the agent
/// receives for a plan template. A v1 template (no `FormatVersion`) gets
/// its `Scripts` (file names under `Resources/scripts/`) inlined as
/// base64. A v2 template gets an `ID`, a `Stamp` and `Action: Execute`;
/// the files named by `Files` and by each script's `EntryPoint` become
/// `Files: {id: {Name, BodyType, Body}}` (a name in angle brackets is
/// binary and sent as base64; a `{name: {URL: ...}}` entry is downloadable)
/// and references to them use the file ids.
fn execution_plan(c: &SimCloud, a: Args) -> Result<Value> {
    let template = a.get(0).clone();
    let package = a.get(1).as_str().unwrap_or("").to_string();
    let Value::Dict(t) = &template else {
        return Err(Error::new(
            ErrorKind::ValueError,
            format!(
                "an execution plan template must be a dict, not {}",
                template.type_name()
            ),
        ));
    };
    let mut plan = (**t).clone();
    let read = |name: &str| read_resource(c, &package, &format!("scripts/{name}"));
    let version = get(&template, "FormatVersion").map(runtime::pyrepr::to_str);
    let seq = c.with(|c| {
        c.plan_seq += 1;
        c.plan_seq
    });
    match version {
        None => {
            if let Some(Value::List(scripts)) = get(&template, "Scripts") {
                let mut inlined = Vec::new();
                for sc in scripts.iter() {
                    let name = runtime::pyrepr::to_str(sc);
                    inlined.push(s(&engine::extra::b64_encode(&read(&name)?)));
                }
                plan.insert(s("Scripts"), Value::list(inlined));
            }
        }
        Some(_) => {
            plan.insert(
                s("ID"),
                s(&fake_id("plan", &seq.to_string()).replace('-', "")),
            );
            plan.insert(s("Stamp"), Value::Int(seq as i64));
            plan.insert(s("Action"), s("Execute"));
            let mut files = match get(&template, "Files") {
                Some(Value::Dict(d)) => (**d).clone(),
                _ => Dict::default(),
            };
            let mut ids: HashMap<String, String> = inline_files(&template);
            let mut add = |name: &str, url: Option<Value>| -> Result<String> {
                if let Some(id) = ids.get(name) {
                    return Ok(id.clone());
                }
                let id = fake_id(&format!("plan-{seq}"), name).replace('-', "");
                let entry = match url {
                    Some(u) => dict(vec![
                        ("Name", s(name)),
                        ("URL", u),
                        ("Type", s("Downloadable")),
                    ]),
                    None => {
                        let binary = name.starts_with('<') && name.ends_with('>');
                        let file = name.trim_start_matches('<').trim_end_matches('>');
                        let body = read(file)?;
                        dict(vec![
                            ("Name", s(file)),
                            ("BodyType", s(if binary { "Base64" } else { "Text" })),
                            (
                                "Body",
                                s(&if binary {
                                    engine::extra::b64_encode(&body)
                                } else {
                                    String::from_utf8_lossy(&body).into_owned()
                                }),
                            ),
                        ])
                    }
                };
                files.insert(s(&id), entry);
                ids.insert(name.to_string(), id.clone());
                Ok(id)
            };
            if let Some(Value::List(l)) = get(&template, "Files") {
                for f in l.iter() {
                    match f {
                        Value::Dict(d) => {
                            for (k, v) in d.iter() {
                                let url = get(v, "URL").cloned().or_else(|| Some(v.clone()));
                                add(&runtime::pyrepr::to_str(k), url)?;
                            }
                        }
                        other => {
                            add(&runtime::pyrepr::to_str(other), None)?;
                        }
                    }
                }
            }
            if let Some(Value::Dict(scripts)) = get(&template, "Scripts") {
                let mut out = Dict::default();
                for (k, sc) in scripts.iter() {
                    let mut sc2 = match sc {
                        Value::Dict(d) => (**d).clone(),
                        _ => Dict::default(),
                    };
                    let (entry, files) = script_files(sc);
                    if let Some(ep) = entry {
                        let id = add(&ep, None)?;
                        sc2.insert(s("EntryPoint"), s(&id));
                    }
                    if matches!(get(sc, "Files"), Some(Value::List(_))) {
                        let mut refs = Vec::new();
                        for (name, url) in files {
                            refs.push(s(&add(&name, url)?));
                        }
                        sc2.insert(s("Files"), Value::list(refs));
                    }
                    out.insert(k.clone(), Value::dict(sc2));
                }
                plan.insert(s("Scripts"), Value::dict(out));
            }
            plan.insert(s("Files"), Value::dict(files));
        }
    }
    Ok(Value::dict(plan))
}

// ---- reports ------------------------------------------------------------

/// `cloudRecord(section, entry)`: appends to `reports`, `notifications` or
/// `events` of the record.
fn record_entry(c: &SimCloud, a: Args) -> Result<Value> {
    let section = a.get(0).as_str().unwrap_or("events").to_string();
    let entry = a.get(1).clone();
    if section == "reports" {
        if let Some(sink) = &*c.report_sink.lock().unwrap_or_else(|e| e.into_inner()) {
            sink(&entry);
        }
    }
    c.with(|c| match section.as_str() {
        "reports" => c.reports.push(entry),
        "notifications" => c.notifications.push(entry),
        _ => c.events.push(entry),
    });
    Ok(Value::Null)
}

/// `cloudAddress(resource, floating)`: the simulated address of a resource.
fn address_fn(c: &SimCloud, a: Args) -> Result<Value> {
    let res = runtime::pyrepr::to_str(a.get(0));
    let floating = a.get(1).truthy();
    Ok(s(&c.with(|c| address(c, &res, floating))))
}

/// `cloudGateway(cidr)`: the first host address of an IPv4 range (the
/// default gateway Neutron assigns); null for anything else.
fn gateway(_: &SimCloud, a: Args) -> Result<Value> {
    let Some(cidr) = a.get(0).as_str() else {
        return Ok(Value::Null);
    };
    let net = cidr.split('/').next().unwrap_or("");
    let octets: Vec<u8> = net.split('.').filter_map(|o| o.parse().ok()).collect();
    if octets.len() != 4 {
        return Ok(Value::Null);
    }
    let n = u32::from_be_bytes([octets[0], octets[1], octets[2], octets[3]]).wrapping_add(1);
    let b = n.to_be_bytes();
    Ok(Value::str(format!("{}.{}.{}.{}", b[0], b[1], b[2], b[3])))
}

impl CloudHost for SimCloud {
    fn call(&self, op: CloudOp, a: Args) -> Result<Value> {
        let f = match op {
            CloudOp::Gateway => gateway,
            CloudOp::Resource => resource,
            CloudOp::StackPush => stack_push,
            CloudOp::StackDelete => stack_delete,
            CloudOp::StackId => stack_id,
            CloudOp::StackTemplate => stack_template,
            CloudOp::Neutron => neutron,
            CloudOp::AgentPlan => agent_plan,
            CloudOp::Record => record_entry,
            CloudOp::Store => store_put,
            CloudOp::Fetch => store_get,
            CloudOp::ParseYaml => parse_yaml,
            CloudOp::ExecutionPlan => execution_plan,
            CloudOp::Address => address_fn,
        };
        f(self, a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml(text: &str) -> Value {
        yaml_value(text, "t.yaml").unwrap()
    }

    #[test]
    fn a_cloud_restored_from_its_state_goes_on_where_it_was() {
        let a = SimCloud::new();
        a.with(|c| {
            address(c, "srv1", false);
            address(c, "srv1", true);
            c.stacks.insert(
                "st".into(),
                Stack {
                    pushes: 2,
                    ..Stack::default()
                },
            );
            c.plan_seq = 7;
        });
        let state = a.state();
        let b = SimCloud::new();
        b.restore(&state).unwrap();
        assert_eq!(
            runtime::json::to_tagged_string(&b.state()),
            runtime::json::to_tagged_string(&state)
        );
        // Addresses go on from those handed out.
        assert_eq!(b.with(|c| address(c, "srv1", false)), "10.0.0.10");
        assert_eq!(b.with(|c| address(c, "srv2", false)), "10.0.0.12");
        assert!(b.restore(&yaml("{stacks: [1]}")).is_err());
        assert!(SimCloud::new().restore(&Value::Null).is_ok());
    }

    #[test]
    fn outputs_resolve_heat_string_functions() {
        let template =
            yaml("resources:\n  srv: {type: 'OS::Nova::Server', properties: {networks: []}}\n");
        let mut c = Cloud::default();
        let params = yaml("{port: 8080}");
        let out = resolve(
            &mut c,
            "st",
            &template,
            &params,
            &yaml(
                "str_replace:\n  template: 'https://host:port/host port_alt'\n  params:\n    host: {get_attr: [srv, first_address]}\n    port: {get_param: port}\n    port_alt: '9'\n",
            ),
        );
        // Every occurrence is replaced, the longer key `port_alt` before
        // `port`, which it contains.
        assert_eq!(
            runtime::pyrepr::to_str(&out),
            "https://10.0.0.10:8080/10.0.0.10 9"
        );
        let joined = resolve(
            &mut c,
            "st",
            &template,
            &params,
            &yaml("Fn::Join: ['-', [a, {get_param: port}, c]]"),
        );
        assert_eq!(runtime::pyrepr::to_str(&joined), "a-8080-c");
    }
}
