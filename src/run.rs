//! `muranopl run`: loads packages and an object model, runs a method (by
//! default `deploy`) in the simulated cloud, and writes the resulting
//! model and the deployment record. The method's return value is
//! printed (tagged JSON) on stdout; status reports stream to stderr as the
//! run makes them, then a summary of what it did.
//!
//! A model whose root is not an `io.murano.Environment` (for example the
//! application object that `muranopl ui model` prints) is wrapped into an
//! environment with a default Neutron network.

use crate::args::exit;
use std::path::{Path, PathBuf};

use engine::serialize;
use runtime::Value;

use muranopl::session::{load_formats_for, Catalogue, Session};

/// The options of `muranopl run`.
pub struct RunArgs {
    /// Package directories or .zip files.
    pub packages: Vec<PathBuf>,
    /// The object model (JSON).
    pub model: PathBuf,
    /// The method to run.
    pub method: String,
    /// Where to write the serialized model.
    pub out: Option<PathBuf>,
    /// Where to write the deployment record.
    pub record: Option<PathBuf>,
    /// Package search path.
    pub libs: Vec<PathBuf>,
    /// When contracts are compiled to machine code.
    pub jit: compiler::jit::Mode,
    /// Simulated cloud settings (YAML or JSON; see `cloud::configure`).
    pub cloud: Option<PathBuf>,
    /// The class configuration directory (see `read_class_configs`).
    pub class_configs: Option<PathBuf>,
    /// Time and statement limits of the execution.
    pub limits: muranopl::session::Limits,
    /// Print only the method's result: no reports, no log lines, no
    /// summary.
    pub quiet: bool,
    /// The least severe log line printed on stderr.
    pub log_level: crate::args::LogLevel,
    /// How errors are printed.
    pub messages: crate::diag::MessageFormat,
    /// Print each statement and call on stderr as it runs.
    pub trace: bool,
    /// Write the same events as JSON Lines here.
    pub trace_json: Option<PathBuf>,
    /// Stop at these statements (`FILE:LINE`) and read expressions from
    /// stdin evaluated in their frame.
    pub breaks: Vec<String>,
}

/// Writes `v` to `path` as indented JSON, or on one line when it nests
/// deeper than a JSON parser takes (never dropped).
fn write_json(path: &Path, v: &Value) -> Result<(), String> {
    let text = runtime::json::to_tagged_string(v);
    let text = match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(j) => serde_json::to_string_pretty(&j).map_err(|e| e.to_string())?,
        Err(_) => text,
    };
    std::fs::write(path, text + "\n").map_err(|e| format!("{}: {e}", path.display()))
}

fn print_error(e: &runtime::Error, a: &RunArgs, session: &Session) {
    crate::diag::Diagnostic::from_error(e, None)
        .with_catalog_help(session.executor().catalog())
        .eprint(a.messages);
}

/// Runs `muranopl run`; returns the exit status.
pub fn run(a: RunArgs) -> i32 {
    // The model's objects may ask for classes of packages the application
    // does not require: those load from the search path too.
    // The model is read once, in bounded memory: a file that is no JSON
    // (a NUL, `/dev/zero`) fails at its first bad byte.
    let max = Some(crate::records::DEFAULT_MAX_RECORD);
    let model = crate::records::read_model(&a.model, max)
        .and_then(|t| runtime::json::from_tagged_str(&t).map_err(|e| e.message().to_string()));
    let model = match model {
        Ok(m) => m,
        Err(e) => {
            eprintln!("error: {}: {e}", a.model.display());
            return exit::USAGE;
        }
    };
    let formats = match load_formats_for(&a.packages, &a.libs, Some(&model)) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::USAGE;
        }
    };
    // The model's `?.classVersion` / `type` versions against the loaded packages (issue 6).
    if let Err(e) = package::check_model_versions(&model, &formats) {
        eprintln!("error: {}: {}", a.model.display(), e.message());
        return exit::FAILED;
    }
    let session =
        match Catalogue::from_formats(formats, false, Vec::new(), a.class_configs.as_deref()) {
            Ok(c) => {
                crate::warnings::print(&c);
                c.set_jit(a.jit);
                c.session()
            }
            Err(e) => {
                eprintln!("error: {e}");
                return exit::USAGE;
            }
        };
    if let Some(path) = &a.cloud {
        let configured = crate::records::read_text(path, max)
            .map_err(|e| format!("{}: {e}", path.display()))
            .and_then(|t| {
                session
                    .cloud()
                    .configure(&t, &path.display().to_string())
                    .map_err(|e| e.message().to_string())
            });
        if let Err(e) = configured {
            eprintln!("error: {e}");
            return exit::USAGE;
        }
    }
    let breaks = match a
        .breaks
        .iter()
        .map(|b| crate::trace::parse_break(b))
        .collect()
    {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::USAGE;
        }
    };
    let trace = if a.trace || a.trace_json.is_some() || !a.breaks.is_empty() {
        let registry = session.executor().catalog().registry(false);
        match crate::trace::Trace::new(a.trace, a.trace_json.as_deref()) {
            Ok(t) => {
                let t = t.with_breaks(breaks, registry);
                let t = std::sync::Arc::new(t);
                session.executor().set_tracer(t.clone());
                Some(t)
            }
            Err(e) => {
                eprintln!("error: {e}");
                return exit::USAGE;
            }
        }
    } else {
        None
    };
    let status = run_in(&session, &a, &model);
    if let Some(t) = trace {
        t.flush();
    }
    status
}

fn run_in(session: &Session, a: &RunArgs, data: &Value) -> i32 {
    let _budget = session.limit(a.limits);
    let ex = session.executor();
    if let Some(sink) = a.log_level.sink(true).filter(|_| !a.quiet) {
        ex.on_log(sink);
    }
    let name = a
        .packages
        .first()
        .and_then(|p| p.file_stem())
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_else(|| "environment".into());
    let root = match sim::deploy::load(ex, data, &format!("{name}-env")) {
        Ok(r) => r,
        Err(e) if *e.error_kind() == runtime::ErrorKind::ValueError => {
            eprintln!("error: {}: {}", a.model.display(), e.message());
            return 1;
        }
        Err(e) => {
            print_error(&e, a, session);
            return 1;
        }
    };
    if !a.quiet {
        session
            .cloud()
            .on_report(|r| eprintln!("{}", report_line(r)));
    }
    let started = std::time::Instant::now();
    let mut status = 0;
    let result = sim::deploy::run(ex, &root, &a.method);
    match &result {
        Ok(v) => println!("{}", runtime::json::to_tagged_string(v)),
        Err(e) => {
            print_error(e, a, session);
            status = 1;
        }
    }
    if !a.quiet {
        eprintln!("{}", summary(session, a, result.is_ok(), started.elapsed()));
    }
    if let Some(out) = &a.out {
        match serialize::serialize_model(ex, &root) {
            Ok(m) => {
                if let Err(e) = write_json(out, &m) {
                    eprintln!("error: {e}");
                    status = 1;
                }
            }
            Err(e) => {
                print_error(&e, a, session);
                status = 1;
            }
        }
    }
    let log = ex.take_log();
    if let Some(path) = &a.record {
        let mut rec = session.record();
        if let Value::Dict(d) = &rec {
            let mut d = (**d).clone();
            let log = log.iter().map(|l| Value::str(l.as_str())).collect();
            d.insert(Value::str("log"), Value::list(log));
            let status = match &result {
                Ok(_) => Value::str("ok"),
                Err(e) => {
                    let trace = e.trace().iter().map(|t| Value::str(t.as_str())).collect();
                    let mut s = runtime::Dict::default();
                    s.insert(
                        Value::str("error"),
                        Value::str(e.kind().to_string().as_str()),
                    );
                    s.insert(Value::str("message"), Value::str(e.message()));
                    s.insert(Value::str("trace"), Value::list(trace));
                    Value::dict(s)
                }
            };
            d.insert(Value::str("status"), status);
            rec = Value::dict(d);
        }
        if let Err(e) = write_json(path, &rec) {
            eprintln!("error: {e}");
            status = 1;
        }
    }
    status
}

/// A status report as one line: `[level] entity: text`.
pub(crate) fn report_line(r: &Value) -> String {
    let field = |k: &str| match r {
        Value::Dict(d) => d
            .get(&Value::str(k.to_string()))
            .map(runtime::pyrepr::to_str)
            .unwrap_or_default(),
        _ => String::new(),
    };
    format!(
        "[{}] {}: {}",
        field("level"),
        field("entity"),
        field("text")
    )
}

/// What the run did, in one line.
fn summary(session: &Session, a: &RunArgs, ok: bool, took: std::time::Duration) -> String {
    let record = session.record();
    let count = |k: &str| match &record {
        Value::Dict(d) => match d.get(&Value::str(k.to_string())) {
            Some(Value::List(l)) => l.len(),
            Some(Value::Dict(d)) => d.len(),
            _ => 0,
        },
        _ => 0,
    };
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    format!(
        "{}: {} in {:.2} s: {}, {}, {}, {}, {}",
        a.method,
        if ok { "ok" } else { "failed" },
        took.as_secs_f64(),
        plural(session.executor().all_objects().len(), "object", "objects"),
        plural(count("stacks"), "stack", "stacks"),
        plural(count("pushes"), "template push", "template pushes"),
        plural(count("plans"), "agent plan", "agent plans"),
        plural(count("reports"), "report", "reports"),
    )
}
