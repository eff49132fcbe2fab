//! `muranopl schema` and `muranopl action`: the murano CLI's
//! `class-schema` and `static-action-call`, answered from local packages
//! by the same code as `serve`'s `GET /v1/schemas` and `POST /v1/actions`.

use std::path::PathBuf;

use serde_json::json;

use crate::args::{exit, ExecLimits};
use crate::diag::{Diagnostic, MessageFormat};
use crate::serve::api::{self, Answer};
use muranopl::Catalogue;

/// Where the classes come from.
#[derive(clap::Args, Debug)]
pub struct Packages {
    /// A package directory or .zip (with what it requires); repeatable.
    /// Without any, every package on the search path.
    #[arg(short = 'p', long = "package-dir", value_name = "PKG")]
    packages: Vec<PathBuf>,
    /// Package search path (repeatable).
    #[arg(short = 'L', long = "library", value_name = "DIR")]
    libs: Vec<PathBuf>,
    /// The version the class must match, a murano version spec such as
    /// `=1`, `>=1.2,<2` or `*` (default: `*`, the newest version loaded;
    /// Murano's HTTP API defaults to `=0` instead).
    #[arg(long, value_name = "SPEC")]
    class_version: Option<String>,
    /// The package that must provide the class (its FullName).
    #[arg(long = "package", value_name = "NAME")]
    package_name: Option<String>,
}

impl Packages {
    /// The version spec asked for: any version (the newest wins) unless
    /// given.
    fn class_version(&self) -> &str {
        self.class_version.as_deref().unwrap_or("*")
    }
}

/// `schema` arguments.
#[derive(clap::Args, Debug)]
pub struct SchemaArgs {
    /// The class (full name).
    class: String,
    /// Methods whose parameter schemas to print (default: the class's own
    /// schema and its model builders').
    methods: Vec<String>,
    #[command(flatten)]
    from: Packages,
}

/// `action` arguments.
#[derive(clap::Args, Debug)]
pub struct ActionArgs {
    /// The class (full name).
    class: String,
    /// The static action: a method with `Usage: Static` and
    /// `Scope: Public` (murano's static actions).
    method: String,
    /// The action's arguments as a JSON object (tagged JSON values).
    #[arg(long, value_name = "JSON", default_value = "{}")]
    args: String,
    #[command(flatten)]
    from: Packages,
    #[command(flatten)]
    limits: ExecLimits,
}

fn load(
    from: &Packages,
    jit: muranopl::jit::Mode,
    configs: Option<&std::path::Path>,
) -> Result<Catalogue, i32> {
    let catalog = Catalogue::load_served(&from.packages, &from.libs, configs).map_err(|e| {
        eprintln!("error: {e}");
        exit::USAGE
    })?;
    crate::warnings::print(&catalog);
    catalog.set_jit(jit);
    Ok(catalog)
}

/// Prints an answer: the body on stdout when it succeeded, the error on
/// stderr otherwise; the exit status.
fn print(answer: Answer, messages: MessageFormat) -> i32 {
    let (status, body) = answer;
    if status == 200 {
        println!(
            "{}",
            serde_json::to_string_pretty(&body).unwrap_or_default()
        );
        return exit::OK;
    }
    let e = &body["error"];
    let text = |v: &serde_json::Value| v.as_str().unwrap_or("").to_string();
    let mut d = Diagnostic::from_text(text(&e["kind"]), &text(&e["message"]));
    d.trace = e["trace"]
        .as_array()
        .into_iter()
        .flatten()
        .map(text)
        .collect();
    d.eprint(messages);
    // A class, package or method that is not there is the caller's
    // mistake; anything else failed while running.
    if status == 404 || status == 403 {
        exit::USAGE
    } else {
        exit::FAILED
    }
}

/// Runs `muranopl schema`.
pub fn schema(
    a: SchemaArgs,
    jit: muranopl::jit::Mode,
    configs: Option<&std::path::Path>,
    messages: MessageFormat,
) -> i32 {
    let catalog = match load(&a.from, jit, configs) {
        Ok(c) => c,
        Err(status) => return status,
    };
    let methods = (!a.methods.is_empty()).then(|| a.methods.join(","));
    print(
        api::schemas(
            &catalog,
            &a.class,
            methods.as_deref(),
            Some(a.from.class_version()),
            a.from.package_name.as_deref(),
        ),
        messages,
    )
}

/// Runs `muranopl action`.
pub fn action(
    a: ActionArgs,
    jit: muranopl::jit::Mode,
    configs: Option<&std::path::Path>,
    messages: MessageFormat,
) -> i32 {
    let params: serde_json::Value = match serde_json::from_str(&a.args) {
        Ok(p @ serde_json::Value::Object(_)) => p,
        Ok(_) => {
            eprintln!("error: --args must be a JSON object");
            return exit::USAGE;
        }
        Err(e) => {
            eprintln!("error: --args: bad JSON: {e}");
            return exit::USAGE;
        }
    };
    let mut catalog = match load(&a.from, jit, configs) {
        Ok(c) => c,
        Err(status) => return status,
    };
    let limits: muranopl::session::Limits = a.limits.into();
    catalog.set_max_steps(limits.max_steps.unwrap_or(u64::MAX));
    let body = json!({
        "className": a.class,
        "methodName": a.method,
        "parameters": params,
        "classVersion": a.from.class_version(),
        "packageName": a.from.package_name,
    });
    let _budget = runtime::budget::Budget::start(limits.timeout, limits.max_memory);
    let (status, text) = api::action(&catalog, body.to_string().as_bytes());
    if status == 200 {
        // As `run` prints a result: one line of JSON, written once (a
        // result may nest deeper than a JSON parser takes).
        println!("{text}");
        return exit::OK;
    }
    let body = serde_json::from_str(&text).unwrap_or_else(|_| json!({"error": {}}));
    print((status, body), messages)
}
