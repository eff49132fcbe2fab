//! `muranopl yaql`: evaluates an expression over JSON input, with jq's
//! conventions: input from files or standard input, one result per input
//! document, `-r`, `-c`, `--arg`/`--argjson`, and JSON Lines evaluated on
//! every core.

use std::io::{BufRead, IsTerminal, Read, Write};
use std::sync::Arc;

use rayon::prelude::*;

use crate::cli::{exit, Limits};
use crate::diag::{Diagnostic, MessageFormat};
use crate::{json, Engine, Options, Program, Value};

/// The `yaql` command's arguments.
#[derive(clap::Args, Debug)]
pub struct YaqlArgs {
    /// The expression.
    expr: String,
    /// JSON input files; `-` is standard input. Each document in a file is
    /// an input (a file may hold several, separated by whitespace).
    /// Without files, standard input is read unless it is a terminal; with
    /// no input at all, the expression is evaluated once with `$` null.
    files: Vec<String>,
    /// An input file (the same as a FILE argument).
    #[arg(long, value_name = "FILE")]
    data: Option<String>,
    /// Read no input: evaluate once with `$` null.
    #[arg(short = 'n', long)]
    null_input: bool,
    /// Print a string result as its text, without quotes.
    #[arg(short = 'r', long)]
    raw_output: bool,
    /// Print JSON without spaces after `,` and `:`.
    #[arg(short = 'c', long)]
    compact: bool,
    /// Bind `$NAME` to the string VALUE; repeatable.
    #[arg(long, num_args = 2, value_names = ["NAME", "VALUE"])]
    arg: Vec<String>,
    /// Bind `$NAME` to the (tagged) JSON value; repeatable.
    #[arg(long, num_args = 2, value_names = ["NAME", "JSON"])]
    argjson: Vec<String>,
    /// The input is JSON Lines: each line is a document, evaluated on
    /// every core; one result per line, in input order (an error is
    /// reported with its line and the rest go on).
    #[arg(long)]
    jsonl: bool,
    /// The input and output are JSON text sequences (RFC 7464, jq's
    /// `--seq`): each document follows an RS character (0x1E); evaluated
    /// as `--jsonl` is, each result printed after an RS.
    #[arg(long, conflicts_with = "jsonl")]
    seq: bool,
    /// Threads for `--jsonl` and `--seq` (default: all cores).
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    /// yaql 0.2 (legacy) mode.
    #[arg(long)]
    legacy: bool,
    /// Print the IR and bytecode instead of evaluating.
    #[arg(long)]
    disasm: bool,
    #[command(flatten)]
    limits: Limits,
}

/// How results are printed.
#[derive(Clone, Copy)]
struct Style {
    raw: bool,
    compact: bool,
    /// Each result after an RS (RFC 7464).
    seq: bool,
}

/// The record separator of JSON text sequences (RFC 7464).
const RS: u8 = 0x1e;

impl Style {
    fn show(self, v: &Value) -> String {
        let text = match v {
            Value::Str(s) if self.raw => s.to_string(),
            _ if self.compact => json::to_compact_string(v),
            _ => json::to_tagged_string(v),
        };
        if self.seq {
            format!("{}{text}", RS as char)
        } else {
            text
        }
    }
}

/// What the evaluations share.
struct Job<'a> {
    engine: &'a Engine,
    prog: &'a Program,
    vars: &'a [(Arc<str>, Value)],
    expr: &'a str,
    style: Style,
    messages: MessageFormat,
}

/// A result line, or an error's text and the exit status it leaves.
type Outcome = Result<String, (i32, String)>;

impl Job<'_> {
    /// One input's result line, or its error (`input` names the input
    /// in the error).
    fn eval(&self, data: Value, input: Option<String>) -> Outcome {
        self.engine
            .eval_with(self.prog, data, self.vars)
            .map(|v| self.style.show(&v))
            .map_err(|e| {
                let d = Diagnostic::from_error(&e, Some(self.expr)).with_input(input);
                (exit::FAILED, d.show(self.messages))
            })
    }
}

/// Runs the command; returns the exit status.
pub fn run(a: YaqlArgs, jit: crate::jit::Mode, messages: MessageFormat) -> i32 {
    let engine = Engine::new(a.limits.apply(Options {
        legacy: a.legacy,
        convert_sets_to_lists: !a.legacy,
        jit,
        ..Options::default()
    }));
    let prog = match engine.compile(&a.expr) {
        Ok(p) => p,
        Err(e) => {
            Diagnostic::from_error(&e, Some(&a.expr)).eprint(messages);
            return exit::COMPILE;
        }
    };
    if a.disasm {
        println!("; IR\n{}", prog.ir().print());
        println!("; bytecode\n{}", prog.chunk().disas());
        return exit::OK;
    }
    let vars = match variables(&a.arg, &a.argjson) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::USAGE;
        }
    };
    let job = Job {
        engine: &engine,
        prog: &prog,
        vars: &vars,
        expr: &a.expr,
        style: Style {
            raw: a.raw_output,
            compact: a.compact,
            seq: a.seq,
        },
        messages,
    };
    let mut files = a.files;
    files.extend(a.data);
    if files.is_empty() && !a.null_input && !std::io::stdin().is_terminal() {
        files.push("-".into());
    }
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let status = if a.null_input || files.is_empty() {
        emit(&mut out, job.eval(Value::Null, None))
    } else if a.jsonl || a.seq {
        let sep = if a.seq { RS } else { b'\n' };
        records(&job, &files, sep, a.jobs, &mut out)
    } else {
        documents(&job, &files, &mut out)
    };
    if out.flush().is_err() {
        return exit::OK; // a closed pipe (`| head`)
    }
    status
}

/// `--arg` and `--argjson` pairs as variables.
fn variables(args: &[String], argjson: &[String]) -> Result<Vec<(Arc<str>, Value)>, String> {
    let mut vars: Vec<(Arc<str>, Value)> = args
        .chunks(2)
        .map(|p| (Arc::from(p[0].as_str()), Value::str(p[1].clone())))
        .collect();
    for p in argjson.chunks(2) {
        let v = json::from_tagged_str(&p[1]).map_err(|e| format!("--argjson {}: {e}", p[0]))?;
        vars.push((Arc::from(p[0].as_str()), v));
    }
    Ok(vars)
}

/// Prints a result, or its error to stderr; the status it leaves.
fn emit(out: &mut impl Write, r: Outcome) -> i32 {
    match r {
        Ok(line) => {
            let _ = writeln!(out, "{line}");
            exit::OK
        }
        Err((status, e)) => {
            let _ = out.flush();
            eprint!("{e}");
            status
        }
    }
}

fn read_all(file: &str) -> Result<String, String> {
    let mut text = String::new();
    let r = if file == "-" {
        std::io::stdin().read_to_string(&mut text).map(|_| ())
    } else {
        std::fs::File::open(file).and_then(|mut f| f.read_to_string(&mut text).map(|_| ()))
    };
    r.map(|()| text).map_err(|e| format!("{}: {e}", name(file)))
}

fn name(file: &str) -> &str {
    if file == "-" {
        "<stdin>"
    } else {
        file
    }
}

/// Evaluates over every document of every file, in order. No documents
/// at all: once over null.
fn documents(job: &Job, files: &[String], out: &mut impl Write) -> i32 {
    let mut status = exit::OK;
    let mut seen = 0;
    for file in files {
        let text = match read_all(file) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("error: {e}");
                return exit::USAGE;
            }
        };
        let (docs, bad) = json::documents_from_str(&text);
        let several = docs.len() > 1 || files.len() > 1;
        for (i, d) in docs.into_iter().enumerate() {
            let input = several.then(|| format!("{}, document {}", name(file), i + 1));
            status = status.max(emit(out, job.eval(d, input)));
            seen += 1;
        }
        if let Some(e) = bad {
            let _ = out.flush();
            Diagnostic::bad_json(name(file), &text, &e).eprint(job.messages);
            return exit::USAGE;
        }
    }
    if seen == 0 {
        status = emit(out, job.eval(Value::Null, None));
    }
    status
}

/// Lines evaluated at once: enough to keep every core busy, few enough
/// that results start coming soon and memory stays small.
const BATCH: usize = 4096;

/// Evaluates each record of each file (a line, or with `sep` RS a JSON
/// text sequence's element) as a document, a batch at a time on every
/// core, printing results in input order.
fn records(job: &Job, files: &[String], sep: u8, jobs: Option<usize>, out: &mut impl Write) -> i32 {
    let pool = match rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.unwrap_or(0))
        // Deep documents and expressions fail cleanly within the engine's
        // depth limits, which need more than the default stack.
        .stack_size(256 << 20)
        .build()
    {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::USAGE;
        }
    };
    let mut status = exit::OK;
    for file in files {
        let reader: Box<dyn BufRead> = if file == "-" {
            Box::new(std::io::stdin().lock())
        } else {
            match std::fs::File::open(file) {
                Ok(f) => Box::new(std::io::BufReader::new(f)),
                Err(e) => {
                    eprintln!("error: {file}: {e}");
                    return exit::USAGE;
                }
            }
        };
        let what = if sep == RS { "record " } else { "" };
        let mut lines = reader.split(sep).enumerate();
        loop {
            let mut batch = Vec::with_capacity(BATCH);
            for (i, line) in lines.by_ref().take(BATCH) {
                let text = line
                    .map_err(|e| e.to_string())
                    .and_then(|b| String::from_utf8(b).map_err(|_| "not UTF-8".to_string()));
                match text {
                    // A sequence's first chunk is what precedes its first
                    // RS (nothing, in a well-formed one).
                    Ok(l) => batch.push((if sep == RS { i } else { i + 1 }, l)),
                    Err(e) => {
                        eprintln!("error: {}:{what}{i}: {e}", name(file));
                        return exit::USAGE;
                    }
                }
            }
            if batch.is_empty() {
                break;
            }
            let results: Vec<_> = pool.install(|| {
                batch
                    .par_iter()
                    .filter(|(_, l)| !l.trim().is_empty())
                    .map(|(n, l)| {
                        let input = format!("{}:{what}{n}", name(file));
                        match json::from_tagged_str(l) {
                            Ok(d) => job.eval(d, Some(input)),
                            Err(e) => {
                                let d =
                                    Diagnostic::bad_json(name(file), l, &e).with_input(Some(input));
                                Err((exit::USAGE, d.show(job.messages)))
                            }
                        }
                    })
                    .collect()
            });
            for r in results {
                status = status.max(emit(out, r));
            }
        }
    }
    status
}
