//! The `muranopl` command line.

use std::io::Write;
use std::panic::AssertUnwindSafe;
use std::time::Instant;

use clap::{Parser, Subcommand};

use muranopl::{json, Engine, Options, Value};

use crate::args::seconds;
pub use crate::args::{exit, ExecLimits, Limits};

#[derive(Parser)]
#[command(
    name = "muranopl",
    version,
    about = "A fast engine for YAQL and MuranoPL",
    after_help = "Exit status: 0 success; 1 an evaluation error, invalid model or failed test; \
                  2 a usage error or input that cannot be read or parsed; 3 an expression \
                  that does not compile; 4 an internal error (a bug)."
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
    /// When to compile contracts and conditions to machine code: off, auto, always.
    ///
    /// `off` interprets, `auto` (the default) compiles once hot, `always`
    /// compiles as each class is compiled, and conditions at their first
    /// evaluation. Default: `MURANOPL_JIT`, else `auto`.
    #[arg(long, global = true, value_name = "MODE")]
    jit: Option<JitMode>,
    /// A directory of class configuration files (murano's `class_configs`).
    ///
    /// For `run`, `test`, `serve` and `validate`: `<full class name>.json`
    /// or `.yaml`, mapping the class's `Usage: Config` properties to values
    /// (murano's `[engine] class_configs`).
    #[arg(long, global = true, value_name = "DIR")]
    class_configs: Option<std::path::PathBuf>,
    /// How errors are printed: `human` (source snippets) or `json` (one
    /// object per line: file, line, col, kind, message, trace).
    #[arg(long, global = true, value_enum, default_value = "human")]
    message_format: crate::diag::MessageFormat,
}

type JitMode = compiler::jit::Mode;

/// How a report is printed.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportFormat {
    /// Lines for people.
    Text,
    /// JSON for tools.
    Json,
}

#[derive(Subcommand)]
enum Cmd {
    /// Evaluate a YAQL expression over JSON input and print each result.
    ///
    /// Input comes from files or standard input; results are (tagged)
    /// JSON, one line per input document.
    Yaql(crate::yaql_cmd::YaqlArgs),
    /// Speak the conformance protocol (JSON Lines on stdin/stdout).
    Harness {
        /// `yaql`, `dsl` or `schema`.
        kind: String,
        /// The longest request line, in bytes: a longer one is answered
        /// with an error and ends the run (status 2), since its end cannot
        /// be found in bounded memory; 0: no cap.
        #[arg(long, value_name = "BYTES", default_value_t = crate::records::DEFAULT_MAX_RECORD)]
        max_record: usize,
    },
    /// Validate object models against the contracts of MuranoPL packages.
    Validate {
        /// A package directory (manifest.yaml + Classes/); repeatable.
        #[arg(long = "package", short = 'p', required = true)]
        packages: Vec<std::path::PathBuf>,
        /// Object model JSON files; `-` is standard input.
        #[arg(required = true)]
        models: Vec<std::path::PathBuf>,
        /// Worker threads (default: all cores).
        #[arg(long)]
        jobs: Option<usize>,
        /// A directory whose subfolders or .zip files are packages
        /// (searched to satisfy the packages' `Require`); repeatable.
        #[arg(short = 'L', long = "library")]
        libs: Vec<std::path::PathBuf>,
        /// Print what the run did to stderr: classes compiled, models,
        /// objects, and the time of each phase.
        #[arg(long)]
        stats: bool,
        /// `text`: a `FILE:LINE:COL: $.path.property: message` line per
        /// violation (the line and column of the value in the model),
        /// sorted by model then path; `json`: one JSON document.
        #[arg(long, value_enum, default_value = "text")]
        format: ReportFormat,
        /// No summary line on stderr.
        #[arg(short, long)]
        quiet: bool,
        /// The largest model read from standard input or another stream (a
        /// pipe, a device), in bytes; regular files are read as their size
        /// says. A longer one is a model that cannot be read (status 2); 0:
        /// no cap.
        #[arg(long, value_name = "BYTES", default_value_t = crate::records::DEFAULT_MAX_RECORD)]
        max_record: usize,
    },
    /// Murano packages: `info`, `check`, `pack`, `bundle`.
    ///
    /// `info` prints manifest facts as JSON, `check` loads and compiles,
    /// `pack` zips a directory, `bundle` resolves a bundle as JSON.
    Package {
        #[command(subcommand)]
        cmd: crate::package::PackageCmd,
    },
    /// Dynamic UI: `model` (the object model a package's UI produces), `forms`.
    Ui {
        #[command(subcommand)]
        cmd: crate::ui::UiCmd,
    },
    /// Run the MuranoPL tests of a package (classes extending
    /// io.murano.test.TestFixture).
    Test {
        /// The package (a directory or .zip), then the test classes or
        /// `Class.test` names to run (default: all); with `-p`, all are
        /// test names.
        #[arg(value_name = "PACKAGE | TEST")]
        args: Vec<String>,
        /// The package (murano-test-runner's `-p`).
        #[arg(short = 'p', long = "package", value_name = "PACKAGE")]
        package: Option<std::path::PathBuf>,
        /// A directory whose subfolders or .zip files are packages
        /// (searched to satisfy `Require`); repeatable (`-l` as in
        /// murano-test-runner).
        #[arg(short = 'L', long = "library", visible_short_alias = 'l')]
        libs: Vec<std::path::PathBuf>,
        /// Start each test's `random()` and `randomName()` from seed N, so
        /// that test runs replay exactly.
        #[arg(long, value_name = "N", default_value_t = 0)]
        seed: u64,
        /// The least severe MuranoPL log line (`io.murano.system.Logger`)
        /// printed on stderr as it is logged (`off`: none).
        #[arg(long, value_enum, env = "MURANOPL_LOG_LEVEL", default_value_t)]
        log_level: crate::args::LogLevel,
        /// Print each statement as it starts and each method call as it is
        /// entered and left, on stderr (as `run --trace` does).
        #[arg(long)]
        trace: bool,
        /// Write the same events as JSON Lines to FILE (as `run
        /// --trace-json` does).
        #[arg(long, value_name = "FILE")]
        trace_json: Option<std::path::PathBuf>,
        /// Stop before each run of the statement at FILE:LINE (FILE: the
        /// end of the class file's path) in any test and read expressions
        /// from stdin, evaluated in its frame (as `run --break` does);
        /// repeatable.
        #[arg(long = "break", value_name = "FILE:LINE")]
        breaks: Vec<String>,
        #[command(flatten)]
        limits: ExecLimits,
    },
    /// Print the JSON schema of a class, or of its methods' parameters
    /// (the murano CLI's `class-schema`).
    Schema(crate::api_cmd::SchemaArgs),
    /// Call a static action of a class and print its result (the murano
    /// CLI's `static-action-call`).
    Action(crate::api_cmd::ActionArgs),
    /// Run a method (default `deploy`) of an object model in the simulated cloud.
    ///
    /// Prints the method's result; reports and a summary go to stderr.
    Run {
        /// Package directories or .zip files.
        #[arg(required = true)]
        packages: Vec<std::path::PathBuf>,
        /// The object model (JSON).
        #[arg(long)]
        model: std::path::PathBuf,
        /// The method to call.
        #[arg(long, default_value = "deploy")]
        method: String,
        /// Write the resulting model here.
        #[arg(long)]
        out: Option<std::path::PathBuf>,
        /// Write the deployment record (JSON) here.
        #[arg(long)]
        record: Option<std::path::PathBuf>,
        /// Package search path (repeatable).
        #[arg(short = 'L', long = "library")]
        libs: Vec<std::path::PathBuf>,
        /// Simulated cloud settings, YAML or JSON (scripted agent answers:
        /// `agent: {answers: {PLAN NAME: value, HOST/PLAN NAME: value}}`).
        #[arg(long)]
        cloud: Option<std::path::PathBuf>,
        /// Print only the method's result: no reports, no log lines, no
        /// summary.
        #[arg(short, long)]
        quiet: bool,
        /// The least severe MuranoPL log line (`io.murano.system.Logger`)
        /// printed on stderr as it is logged; `--record` keeps every line
        /// whatever the level.
        #[arg(long, value_enum, env = "MURANOPL_LOG_LEVEL", default_value_t)]
        log_level: crate::args::LogLevel,
        /// Start `random()` and `randomName()` from seed N, so that the
        /// run replays exactly; default: from the clock.
        #[arg(long, value_name = "N")]
        seed: Option<u64>,
        /// Print each statement as it starts and each method call as it is
        /// entered and left, on stderr: `FILE:LINE:COL [thread N @ CLOCK s]
        /// ...` (the green thread and the virtual clock).
        #[arg(long)]
        trace: bool,
        /// Write the same events as JSON Lines to FILE: `file`, `line`,
        /// `col`, `thread`, `clock`, `event` (`statement`, `enter`, `exit`,
        /// `raise`), `class`, `method`, and `text`, `args`, `result` or
        /// `error`.
        #[arg(long, value_name = "FILE")]
        trace_json: Option<std::path::PathBuf>,
        /// Stop before each run of the statement at FILE:LINE (FILE: the
        /// end of the class file's path) and read expressions from stdin,
        /// evaluated in its frame (`$this`, the method's variables);
        /// `:vars` lists them, an empty line or `:c` goes on, `:q` stops
        /// breaking; repeatable.
        #[arg(long = "break", value_name = "FILE:LINE")]
        breaks: Vec<String>,
        #[command(flatten)]
        limits: ExecLimits,
    },
    /// Serve the HTTP API Murano's clients call, and a forms page at `/`.
    ///
    /// `GET /v1/schemas/{class}[/{methods}]` form schemas, `POST
    /// /v1/actions` static actions, `POST /v1/validate`, `GET /health`;
    /// and an offline Murano (murano's v1 environments, sessions,
    /// services, deployments, instance actions and package catalogue, as
    /// python-muranoclient calls them) on the simulated cloud, its state
    /// in SQLite (`--db`). One request log line per request on stderr
    /// (`MURANOPL_LOG=warn` silences it).
    Serve {
        /// Package directories or .zip files (with what they require);
        /// without any, every package on the search path.
        packages: Vec<std::path::PathBuf>,
        /// Package search path (repeatable).
        #[arg(short = 'L', long = "library")]
        libs: Vec<std::path::PathBuf>,
        /// The address to listen on (port 0 picks a free port; the first
        /// line of output names it).
        #[arg(long, default_value = "127.0.0.1:8082")]
        addr: String,
        #[command(flatten)]
        server: ServeArgs,
    },
    /// Serve the Language Server Protocol on stdin/stdout, for editors.
    ///
    /// Diagnostics as `package check` finds them (with the editor's unsaved
    /// text), hover, go to definition, completion and document symbols in
    /// MuranoPL class files, manifests and `.yaql` files. A file's package
    /// is the folder above it holding `manifest.yaml`; its requirements
    /// are found on `-L`, the workspace folders and the folder holding the
    /// package. Editor set-up: docs/editors.md.
    Lsp {
        /// A directory whose subfolders or .zip files are packages
        /// (searched to satisfy `Require`); repeatable.
        #[arg(short = 'L', long = "library")]
        libs: Vec<std::path::PathBuf>,
        /// Accepted for clients that pass it: stdio is the only transport.
        #[arg(long)]
        stdio: bool,
    },
    /// Evaluate YAQL interactively against JSON data (history, completion,
    /// `:type`, `:disasm`, `:time`).
    ///
    /// Each line is an expression evaluated with `$` bound to `--data`;
    /// unclosed brackets or quotes continue it on the next line. Tab
    /// completes functions, methods after `.` and the keys of `$` after
    /// `$.`. With `-p PACKAGE --model FILE`, MuranoPL expressions with `$`
    /// the model's root object (`$.deploy()`). `:help` lists the commands.
    Repl(crate::repl::ReplArgs),
    /// Print a shell completion script.
    ///
    /// `muranopl completions bash > /etc/bash_completion.d/muranopl`.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// SQL over object models with YAQL and contract validation, on this
    /// machine's cores or a Ballista cluster (`muranopl batch --help`).
    ///
    /// Runs the `muranopl-batch` program beside this one (or on PATH),
    /// built apart because DataFusion and Ballista take long to compile:
    /// `cargo build --release -p muranopl-datafusion`.
    #[command(disable_help_flag = true)]
    Batch {
        /// The arguments of `muranopl-batch`.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<std::ffi::OsString>,
    },
    /// Print the manual page (roff: `muranopl man | man -l -`).
    Man,
    /// Time evaluation: compile once, evaluate N times.
    BenchEval {
        /// The expression.
        #[arg(long)]
        expr: Option<String>,
        /// JSON data file.
        #[arg(long)]
        data: Option<String>,
        /// Repetitions.
        #[arg(long, default_value_t = 1)]
        repeat: usize,
        /// Evaluate once per element of the top-level array.
        #[arg(long)]
        each: bool,
        /// Parse (compile) every line of this file instead of evaluating.
        #[arg(long)]
        parse_file: Option<String>,
    },
}

/// Runs the CLI; returns the exit status.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    // A closed standard output (`muranopl ... | head`) ends the process
    // quietly, as command-line tools do, instead of reporting a panic.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let msg = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if msg.contains("Broken pipe") {
            std::process::exit(141);
        }
        default_hook(info);
    }));
    // Evaluate on a thread with a large stack: deeply nested input and
    // expressions must fail cleanly, not overflow.
    let h = std::thread::Builder::new()
        .stack_size(512 << 20)
        .spawn(move || run(cli));
    match h {
        Ok(h) => h.join().unwrap_or(exit::INTERNAL),
        Err(e) => {
            eprintln!("error: cannot start the evaluation thread (a 512 MiB stack): {e}");
            exit::INTERNAL
        }
    }
}

fn read_data(path: &Option<String>) -> Result<Value, String> {
    let Some(p) = path.as_deref() else {
        return Ok(Value::Null);
    };
    // Read in bounded memory, up to the first byte that is no JSON.
    let max = Some(crate::records::DEFAULT_MAX_RECORD);
    let text = crate::records::read_model(std::path::Path::new(p), max).map_err(|e| {
        if p == "-" {
            e
        } else {
            format!("{p}: {e}")
        }
    })?;
    json::from_tagged_str(&text).map_err(|e| e.to_string())
}

fn run(cli: Cli) -> i32 {
    let jit = match cli.jit.map_or_else(JitMode::from_env, |m| Ok(Some(m))) {
        Ok(m) => m.unwrap_or_default(),
        Err(e) => {
            eprintln!("error: {}: {e}", JitMode::ENV);
            return 2;
        }
    };
    match cli.cmd {
        Cmd::Yaql(args) => crate::yaql_cmd::run(args, jit, cli.message_format),
        Cmd::Harness { kind, max_record } => harness(&kind, max_record, jit),
        Cmd::Validate {
            packages,
            models,
            jobs,
            libs,
            stats,
            format,
            quiet,
            max_record,
        } => crate::validate::run(crate::validate::Options {
            packages,
            models,
            jobs,
            libs,
            stats,
            quiet,
            jit,
            class_configs: cli.class_configs,
            json: format == ReportFormat::Json,
            max_record: crate::records::cap(max_record),
        }),
        Cmd::Package { cmd } => crate::package::run(cmd, jit, cli.message_format),
        Cmd::Ui { cmd } => crate::ui::run(cmd),
        Cmd::Run {
            packages,
            model,
            method,
            out,
            record,
            libs,
            cloud,
            quiet,
            log_level,
            seed,
            trace,
            trace_json,
            breaks,
            limits,
        } => crate::run::run(crate::run::RunArgs {
            packages,
            model,
            method,
            out,
            record,
            libs,
            cloud,
            jit,
            class_configs: cli.class_configs,
            limits: muranopl::session::Limits {
                seed,
                ..limits.into()
            },
            quiet,
            log_level,
            messages: cli.message_format,
            trace,
            trace_json,
            breaks,
        }),
        Cmd::Test {
            args,
            package,
            libs,
            seed,
            log_level,
            trace,
            trace_json,
            breaks,
            limits,
        } => test(
            args,
            package,
            &libs,
            (
                seed,
                log_level,
                crate::test_cmd::Tracing {
                    stderr: trace,
                    json: trace_json.as_deref(),
                    breaks: &breaks,
                },
            ),
            limits,
            jit,
            &cli.class_configs,
            cli.message_format,
        ),
        Cmd::Schema(args) => {
            crate::api_cmd::schema(args, jit, cli.class_configs.as_deref(), cli.message_format)
        }
        Cmd::Action(args) => {
            crate::api_cmd::action(args, jit, cli.class_configs.as_deref(), cli.message_format)
        }
        Cmd::Serve {
            packages,
            libs,
            addr,
            server,
        } => serve(
            &packages,
            &libs,
            &addr,
            server,
            jit,
            cli.class_configs.as_deref(),
        ),
        Cmd::Batch { args } => batch(&args),
        Cmd::Lsp { libs, stdio: _ } => crate::lsp::run(libs, jit),
        Cmd::Repl(args) => crate::repl::run(args, jit),
        Cmd::Completions { shell } => {
            use clap::CommandFactory;
            let mut cmd = Cli::command();
            clap_complete::generate(shell, &mut cmd, "muranopl", &mut std::io::stdout());
            exit::OK
        }
        Cmd::Man => man_page(),
        Cmd::BenchEval {
            expr,
            data,
            repeat,
            each,
            parse_file,
        } => bench_eval(expr, data, repeat, each, parse_file, jit),
    }
}

/// `muranopl harness yaql|dsl|schema`.
fn harness(kind: &str, max_record: usize, jit: JitMode) -> i32 {
    let max_line = crate::records::cap(max_record);
    match kind {
        "yaql" => harness_yaql(jit, max_line),
        "dsl" => crate::dsl::harness_dsl(jit, max_line),
        "schema" => crate::schema::harness_schema(jit, max_line),
        other => {
            eprintln!("error: unknown harness `{other}` (expected `yaql`, `dsl` or `schema`)");
            exit::USAGE
        }
    }
}

/// `muranopl test PACKAGE [TEST]...` (or `-p PACKAGE`); `test` runs from
/// seed `seed` so that runs replay, printing log lines at `log_level` and
/// above.
fn test(
    mut args: Vec<String>,
    package: Option<std::path::PathBuf>,
    libs: &[std::path::PathBuf],
    (seed, log_level, trace): (u64, crate::args::LogLevel, crate::test_cmd::Tracing<'_>),
    limits: ExecLimits,
    jit: JitMode,
    class_configs: &Option<std::path::PathBuf>,
    messages: crate::diag::MessageFormat,
) -> i32 {
    let Some(package) =
        package.or_else(|| (!args.is_empty()).then(|| std::path::PathBuf::from(args.remove(0))))
    else {
        eprintln!("error: which package? (muranopl test PACKAGE [TEST]... or -p PACKAGE)");
        return exit::USAGE;
    };
    let limits = muranopl::session::Limits {
        seed: Some(seed),
        ..limits.into()
    };
    crate::test_cmd::run(crate::test_cmd::TestRun {
        package: &package,
        selectors: &args,
        libs,
        jit,
        class_configs: class_configs.as_deref(),
        limits,
        messages,
        log_level,
        trace,
    })
}

/// `muranopl serve`.
fn serve(
    packages: &[std::path::PathBuf],
    libs: &[std::path::PathBuf],
    addr: &str,
    server: ServeArgs,
    jit: JitMode,
    class_configs: Option<&std::path::Path>,
) -> i32 {
    match server.options() {
        Ok(options) => crate::serve::serve(packages, libs, addr, options, jit, class_configs),
        Err(e) => {
            eprintln!("error: {e}");
            exit::USAGE
        }
    }
}

/// `muranopl man`: the manual page on stdout.
fn man_page() -> i32 {
    use clap::CommandFactory;
    let man = clap_mangen::Man::new(Cli::command());
    match man.render(&mut std::io::stdout()) {
        Ok(()) => exit::OK,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => exit::OK,
        Err(e) => {
            eprintln!("error: {e}");
            exit::USAGE
        }
    }
}

/// The limits and settings of `serve` (see `serve::Options`).
#[derive(clap::Args, Clone, Debug)]
pub struct ServeArgs {
    /// Engine workers: requests worked on at once.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Requests that may wait for a worker; more get 503.
    #[arg(long, default_value_t = 64)]
    queue: usize,
    /// Open connections at most; more get 503.
    #[arg(long, default_value_t = 256)]
    max_connections: usize,
    /// The largest request body in bytes (413 past it).
    #[arg(long, default_value_t = 4 << 20, value_name = "BYTES")]
    max_body: usize,
    /// Seconds a request may take in all (408), and the time budget of
    /// its engine work (504).
    #[arg(long, default_value_t = 30.0, value_name = "SECS")]
    timeout: f64,
    /// Seconds a connection may stay idle before it is closed.
    #[arg(long, default_value_t = 15.0, value_name = "SECS")]
    idle_timeout: f64,
    /// Bytes the values of one request's engine work may take in all
    /// (allocated, not live; 500 MemoryQuotaExceededException past it)
    #[arg(long, default_value_t = runtime::DEFAULT_MAX_MEMORY, value_name = "BYTES")]
    max_memory: usize,
    /// A bearer token every API request must carry (`Authorization:
    /// Bearer TOKEN` or `X-Auth-Token: TOKEN`; 401 otherwise).
    #[arg(long, env = "MURANOPL_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// The SQLite database of environments, sessions, deployments, tasks
    /// and imported packages (created when missing; a restart on it
    /// keeps them). Default: in memory.
    #[arg(long, value_name = "FILE")]
    db: Option<std::path::PathBuf>,
}

impl ServeArgs {
    fn options(self) -> Result<crate::serve::Options, String> {
        let (Some(timeout), Some(idle_timeout)) =
            (seconds(self.timeout), seconds(self.idle_timeout))
        else {
            return Err("--timeout and --idle-timeout must be positive numbers of seconds".into());
        };
        Ok(crate::serve::Options {
            threads: self.threads,
            queue: self.queue,
            max_connections: self.max_connections,
            max_body: self.max_body,
            timeout,
            idle_timeout,
            max_memory: self.max_memory,
            token: self.token.filter(|t| !t.is_empty()),
            db: self.db,
        })
    }
}

fn error_json(kind: &str, msg: &str) -> serde_json::Value {
    serde_json::json!({"kind": kind, "message": msg})
}

fn harness_yaql(jit: JitMode, max_line: Option<usize>) -> i32 {
    let mut cache: std::collections::HashMap<(String, bool), std::rc::Rc<muranopl::Program>> =
        std::collections::HashMap::new();
    let mut cached_bytes = 0usize;
    let engines = [
        Engine::new(Options {
            jit,
            ..Options::test_suite(false)
        }),
        Engine::new(Options {
            jit,
            ..Options::test_suite(true)
        }),
    ];
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    let mut requests = crate::harness::requests(stdin.lock(), max_line);
    for line in requests.by_ref() {
        let parsed = line
            .and_then(|l| serde_json::from_str::<serde_json::Value>(&l).map_err(|e| e.to_string()));
        let resp = match parsed {
            Err(e) => format!(
                "{{\"id\": null, \"error\": {}}}",
                error_json("ValueError", &format!("bad request: {e}"))
            ),
            Ok(req) => {
                let id = req.get("id").cloned().unwrap_or(serde_json::Value::Null);
                let expr = req.get("expr").and_then(|e| e.as_str()).unwrap_or("");
                let legacy = req.get("legacy").and_then(|l| l.as_bool()).unwrap_or(false);
                let engine = &engines[legacy as usize];
                let data = req.get("data").cloned().unwrap_or(serde_json::Value::Null);
                let r = std::panic::catch_unwind(AssertUnwindSafe(|| {
                    let data = json::from_tagged(&data)?;
                    // Requests often repeat an expression: compile it once.
                    let key = (expr.to_string(), legacy);
                    let prog = match cache.get(&key) {
                        Some(p) => p.clone(),
                        None => {
                            let p = std::rc::Rc::new(engine.compile(expr)?);
                            // Bounded by count and by the source it holds.
                            if cache.len() >= 4096 || cached_bytes + expr.len() > 16 << 20 {
                                cache.clear();
                                cached_bytes = 0;
                            }
                            if expr.len() <= 1 << 20 {
                                cached_bytes += expr.len();
                                cache.insert(key, p.clone());
                            }
                            p
                        }
                    };
                    let v = engine.eval(&prog, data)?;
                    Ok::<String, muranopl::Error>(json::to_tagged_string(&v))
                }));
                let body = match r {
                    Ok(Ok(s)) => format!("\"result\": {s}"),
                    Ok(Err(e)) => format!("\"error\": {}", error_json(e.kind(), e.message())),
                    Err(_) => format!("\"error\": {}", error_json("InternalError", "panic")),
                };
                format!("{{\"id\": {id}, {body}}}")
            }
        };
        if writeln!(out, "{resp}").and_then(|_| out.flush()).is_err() {
            break;
        }
    }
    crate::harness::status(&requests)
}

fn bench_eval(
    expr: Option<String>,
    data: Option<String>,
    repeat: usize,
    each: bool,
    parse_file: Option<String>,
    jit: JitMode,
) -> i32 {
    let engine = Engine::new(Options {
        jit,
        ..Options::default()
    });
    let mut times = Vec::with_capacity(repeat);
    let summary: serde_json::Value;
    if let Some(pf) = parse_file {
        let max = Some(crate::records::DEFAULT_MAX_RECORD);
        let text = match crate::records::read_text(std::path::Path::new(&pf), max) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("error: {pf}: {e}");
                return 2;
            }
        };
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let mut ok = 0;
        for _ in 0..repeat {
            let t = Instant::now();
            ok = 0;
            for l in &lines {
                if engine.compile(l).is_ok() {
                    ok += 1;
                }
            }
            times.push(t.elapsed().as_secs_f64());
        }
        summary = serde_json::json!(ok);
    } else {
        let Some(expr) = expr else {
            eprintln!("error: --expr or --parse-file is required");
            return 2;
        };
        let data = match read_data(&data) {
            Ok(d) => d,
            Err(e) => {
                eprintln!("error: {e}");
                return 2;
            }
        };
        let prog = match engine.compile(&expr) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("{}", e.render(&expr));
                return 1;
            }
        };
        let mut last = Value::Null;
        for _ in 0..repeat {
            let t = Instant::now();
            let r = if each {
                let items = match &data {
                    Value::List(l) => l.clone(),
                    _ => {
                        eprintln!("error: --each needs a top-level array");
                        return 2;
                    }
                };
                let mut count = 0i64;
                let mut res = Ok(Value::Null);
                for it in items.iter() {
                    match engine.eval(&prog, it.clone()) {
                        Ok(v) => {
                            if v.truthy() {
                                count += 1
                            }
                        }
                        Err(e) => {
                            res = Err(e);
                            break;
                        }
                    }
                }
                res.map(|_| Value::Int(count))
            } else {
                engine.eval(&prog, data.clone())
            };
            times.push(t.elapsed().as_secs_f64());
            match r {
                Ok(v) => last = v,
                Err(e) => {
                    eprintln!("{}", e.render(&expr));
                    return 1;
                }
            }
        }
        summary = match &last {
            Value::List(l) => serde_json::json!(l.len()),
            Value::Int(i) => serde_json::json!(i),
            v => serde_json::from_str(&json::to_tagged_string(v)).unwrap_or_default(),
        };
    }
    println!(
        "{}",
        serde_json::json!({"eval_s": times, "summary": summary})
    );
    0
}

/// `muranopl batch`: runs `muranopl-batch` from this program's directory,
/// else from PATH, with `args`; its exit status is ours.
fn batch(args: &[std::ffi::OsString]) -> i32 {
    const PROGRAM: &str = "muranopl-batch";
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.join(PROGRAM)))
        .filter(|p| p.is_file());
    let program = beside.map_or_else(|| PROGRAM.into(), std::ffi::OsString::from);
    match std::process::Command::new(&program).args(args).status() {
        Ok(status) => status.code().unwrap_or(exit::INTERNAL),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!(
                "error: `muranopl batch` needs the {PROGRAM} program, built apart: \
                 cargo build --release -p muranopl-datafusion"
            );
            exit::USAGE
        }
        Err(e) => {
            eprintln!("error: cannot run {}: {e}", program.to_string_lossy());
            exit::INTERNAL
        }
    }
}
