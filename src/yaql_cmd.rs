//! `muranopl yaql`: evaluates an expression over JSON input, with jq's
//! conventions: input from files or standard input, one result per input
//! document, `-r`, `-c`, `--arg`/`--argjson`, and JSON Lines evaluated on
//! every core.

use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;
use std::sync::Arc;

use rayon::prelude::*;

use crate::args::{exit, Limits};
use crate::diag::{Diagnostic, MessageFormat};
use crate::records::{self, Record, Records, Stop};
use muranopl::{json, Engine, Options, Program, Value};

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
    /// The longest record read, in bytes: a line of `--jsonl`, an element
    /// of `--seq`, or a whole input read from a pipe or a device (standard
    /// input included; a regular file is read as its size says). A longer
    /// one ends the run with an error (status 2); 0: no cap.
    #[arg(long, value_name = "BYTES", default_value_t = records::DEFAULT_MAX_RECORD)]
    max_record: usize,
    /// yaql 0.2 (legacy) mode.
    #[arg(long)]
    legacy: bool,
    /// Print the IR and bytecode instead of evaluating.
    #[arg(long)]
    disasm: bool,
    /// Start `random()` from seed N, so that a run replays exactly
    /// (every evaluation starts from it); default: from the clock.
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
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
                (exit::FAILED, show(d, self.messages))
            })
    }

    /// One record of a `--jsonl` or `--seq` input of `file` (`what`
    /// names records after the file: `` or `record `): its result, or why
    /// it has none.
    fn eval_record(&self, file: &str, what: &str, line: &Line) -> Outcome {
        let (Line::Text(n, ..) | Line::NotUtf8(n, _)) = line;
        let input = Some(format!("{}:{what}{n}", name(file)));
        let (text, cut) = match line {
            Line::Text(_, text, cut) => (text, *cut),
            Line::NotUtf8(_, e) => {
                let why = format!("bad JSON: not UTF-8 ({})", e.utf8_error());
                let d = Diagnostic::error("ValueError", why).with_input(input);
                return Err((exit::USAGE, show(d, self.messages)));
            }
        };
        let parsed = match json::from_tagged_str(text) {
            Ok(_) if cut => Err(records::cut_error(text)),
            r => r,
        };
        match parsed {
            Ok(d) => self.eval(d, input),
            Err(e) => Err((
                exit::USAGE,
                bad_json(name(file), text, &e, input, self.messages),
            )),
        }
    }
}

/// `s` safe to print on a terminal (see [`runtime::pyrepr::escape_controls`]).
fn safe(s: &str) -> std::borrow::Cow<'_, str> {
    runtime::pyrepr::escape_controls(s, false)
}

/// `d` as `format` prints it. For people, the untrusted text in it (input
/// values in messages, file names) has its control characters escaped, so
/// that it cannot drive the terminal; JSON escapes them itself.
fn show(mut d: Diagnostic, format: MessageFormat) -> String {
    if format == MessageFormat::Human {
        let esc = |s: &mut String| *s = runtime::pyrepr::escape_controls(s, true).into_owned();
        esc(&mut d.kind);
        esc(&mut d.message);
        d.file
            .iter_mut()
            .chain(&mut d.input)
            .chain(&mut d.help)
            .for_each(esc);
        d.trace.iter_mut().for_each(esc);
    }
    d.show(format)
}

/// Malformed JSON in `file` (text `text`), for `input`, as `format` prints
/// it. For people the snippet is `text` escaped, the span moved to match.
fn bad_json(
    file: &str,
    text: &str,
    e: &muranopl::Error,
    input: Option<String>,
    format: MessageFormat,
) -> String {
    let mut d = Diagnostic::bad_json(file, text, e).with_input(input);
    let escaped = runtime::pyrepr::escape_controls(text, true);
    if format == MessageFormat::Human && matches!(escaped, std::borrow::Cow::Owned(_)) {
        if let Some(at) = d
            .line_col
            .and_then(|(l, c)| crate::diag::offset(text, l, c))
        {
            let next = text[at..].chars().next().map_or(0, char::len_utf8);
            let esc_len = |s: &str| runtime::pyrepr::escape_controls(s, true).len();
            let start = esc_len(&text[..at]);
            let end = start + esc_len(&text[at..at + next]);
            d = d.at_span(file, &escaped, start..end);
        }
    }
    show(d, format)
}

/// Runs the command; returns the exit status.
pub fn run(a: YaqlArgs, jit: muranopl::jit::Mode, messages: MessageFormat) -> i32 {
    let engine = Engine::new(a.limits.apply(Options {
        legacy: a.legacy,
        convert_sets_to_lists: !a.legacy,
        jit,
        seed: a.seed,
        ..Options::default()
    }));
    let prog = match engine.compile(&a.expr) {
        Ok(p) => p,
        Err(e) => {
            eprint!(
                "{}",
                show(Diagnostic::from_error(&e, Some(&a.expr)), messages)
            );
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
            eprintln!("error: {}", safe(&e));
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
    let max = records::cap(a.max_record);
    let status = if a.null_input || files.is_empty() {
        emit(&mut out, job.eval(Value::Null, None))
    } else if a.jsonl || a.seq {
        let sep = if a.seq { RS } else { b'\n' };
        by_record(&job, &files, sep, a.jobs, max, &mut out)
    } else {
        documents(&job, &files, max, &mut out)
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

/// The text of `file` (`-`: standard input), read whole, at most `max`
/// bytes unless it is a regular file; true when it was cut at a byte JSON
/// text cannot hold (see [`records`]).
fn read_all(file: &str, max: Option<usize>) -> Result<(String, bool), String> {
    let at = |e: &dyn std::fmt::Display| format!("{}: {e}", safe(name(file)));
    let Record { bytes, cut } = records::read_whole(Path::new(file), max).map_err(|e| at(&e))?;
    let text = String::from_utf8(bytes).map_err(|_| at(&"stream did not contain valid UTF-8"))?;
    Ok((text, cut))
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
fn documents(job: &Job, files: &[String], max: Option<usize>, out: &mut impl Write) -> i32 {
    let mut status = exit::OK;
    let mut seen = 0;
    for file in files {
        let (text, cut) = match read_all(file, max) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("error: {e}");
                return exit::USAGE;
            }
        };
        let (docs, bad) = json::documents_from_str(&text);
        let bad = bad.or_else(|| cut.then(|| records::cut_error(&text)));
        let several = docs.len() > 1 || files.len() > 1;
        for (i, d) in docs.into_iter().enumerate() {
            let input = several.then(|| format!("{}, document {}", name(file), i + 1));
            status = status.max(emit(out, job.eval(d, input)));
            seen += 1;
        }
        if let Some(e) = bad {
            let _ = out.flush();
            eprint!("{}", bad_json(name(file), &text, &e, None, job.messages));
            return exit::USAGE;
        }
    }
    if seen == 0 {
        status = emit(out, job.eval(Value::Null, None));
    }
    status
}

/// Records evaluated at once, at most: enough to keep every core busy,
/// few enough that results start coming soon and memory stays small.
const BATCH: usize = 4096;

/// Bytes of records evaluated at once, at most (past the record that
/// reaches it): with `--max-record`, what bounds the input held.
const BATCH_BYTES: usize = 16 << 20;

/// A record of a `--jsonl` or `--seq` input, with its number (1-based
/// lines; a sequence's record 0 is what precedes its first RS).
enum Line {
    /// Its text, and whether it was cut at a byte JSON cannot hold.
    Text(usize, String, bool),
    /// It is not UTF-8.
    NotUtf8(usize, std::string::FromUtf8Error),
}

/// Evaluates each record of each file (a line, or with `sep` RS a JSON
/// text sequence's element) as a document, a batch at a time on every
/// core, printing results in input order. A record that is not UTF-8 or
/// not JSON is an error of its own; one longer than `max` ends the run.
fn by_record(
    job: &Job,
    files: &[String],
    sep: u8,
    jobs: Option<usize>,
    max: Option<usize>,
    out: &mut impl Write,
) -> i32 {
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
    let (what, unit) = if sep == RS {
        ("record ", "record")
    } else {
        ("", "line")
    };
    let mut status = exit::OK;
    for file in files {
        let reader: Box<dyn BufRead> = if file == "-" {
            Box::new(std::io::BufReader::with_capacity(
                1 << 16,
                std::io::stdin().lock(),
            ))
        } else {
            match std::fs::File::open(file) {
                Ok(f) => Box::new(std::io::BufReader::with_capacity(1 << 16, f)),
                Err(e) => {
                    eprintln!("error: {}: {e}", safe(file));
                    return exit::USAGE;
                }
            }
        };
        let first = usize::from(sep != RS);
        let mut numbered = Records::new(reader, Some(sep), max)
            .enumerate()
            .map(|(i, r)| (i + first, r));
        loop {
            let (batch, stop) = next_batch(&mut numbered);
            let results: Vec<Outcome> = pool.install(|| {
                batch
                    .par_iter()
                    .filter(|l| !matches!(l, Line::Text(_, t, _) if t.trim().is_empty()))
                    .map(|l| job.eval_record(file, what, l))
                    .collect()
            });
            for r in results {
                status = status.max(emit(out, r));
            }
            match stop {
                Some((n, e)) => {
                    let _ = out.flush();
                    let e = match e {
                        Stop::TooLong(_) => format!("the {unit} is {e}"),
                        Stop::Io(_) => e.to_string(),
                    };
                    eprintln!("error: {}:{what}{n}: {e}", safe(name(file)));
                    return exit::USAGE;
                }
                None if batch.is_empty() => break,
                None => {}
            }
        }
    }
    status
}

/// The next records, up to [`BATCH`] of them or [`BATCH_BYTES`], and the
/// numbered reason the input stopped, if it did.
fn next_batch(
    numbered: &mut impl Iterator<Item = (usize, Result<Record, Stop>)>,
) -> (Vec<Line>, Option<(usize, Stop)>) {
    let mut batch = Vec::new();
    let mut bytes = 0;
    while batch.len() < BATCH && bytes < BATCH_BYTES {
        let Some((n, r)) = numbered.next() else { break };
        match r {
            Ok(Record { bytes: b, cut }) => {
                bytes += b.len();
                batch.push(match String::from_utf8(b) {
                    Ok(text) => Line::Text(n, text, cut),
                    Err(e) => Line::NotUtf8(n, e),
                });
            }
            Err(e) => return (batch, Some((n, e))),
        }
    }
    (batch, None)
}
