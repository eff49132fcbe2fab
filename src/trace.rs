//! `run --trace` and `--trace-json FILE`: an [`engine::trace::Tracer`]
//! that prints each statement and each method entry and exit as it
//! happens, on stderr for people (`FILE:LINE:COL [thread N @ CLOCK s]
//! ...`) and as JSON Lines for tools (`file`, `line`, `col`, `thread`,
//! `clock`, `event`, and `class`, `method`, `text`, `args`, `result`,
//! `error`).

use std::collections::HashMap;
use std::io::Write;
use std::sync::Mutex;

use engine::trace::{TraceEvent, TraceKind, Tracer};

/// Where the events go.
pub struct Trace {
    /// Lines on stderr.
    pub stderr: bool,
    /// JSON Lines.
    pub json: Option<Mutex<std::io::BufWriter<std::fs::File>>>,
    /// The lines of the class files read, for the text of block
    /// statements (which the engine names `block construct`, as murano's
    /// stack traces do).
    lines: Mutex<HashMap<String, Vec<String>>>,
    /// `--break FILE:LINE`: where to stop, and the registry expressions
    /// typed there compile with.
    breaks: Vec<(String, u32)>,
    registry: Option<std::sync::Arc<runtime::registry::Registry>>,
    /// False once `:quit` (or the end of the input) said to stop no more.
    breaking: std::sync::atomic::AtomicBool,
}

/// `FILE:LINE` of `--break`.
pub fn parse_break(s: &str) -> Result<(String, u32), String> {
    let (file, line) = s
        .rsplit_once(':')
        .ok_or_else(|| format!("--break {s}: expected FILE:LINE"))?;
    let line = line
        .parse::<u32>()
        .map_err(|_| format!("--break {s}: `{line}` is not a line number"))?;
    if file.is_empty() {
        return Err(format!("--break {s}: expected FILE:LINE"));
    }
    Ok((file.to_string(), line))
}

/// The engine's text of a block statement (`If`, `For`, `Parallel`, ...).
const BLOCK: &str = "block construct";

impl Trace {
    /// A trace to stderr (`stderr`) and/or the JSON Lines file `json`.
    pub fn new(stderr: bool, json: Option<&std::path::Path>) -> Result<Trace, String> {
        let json = match json {
            Some(p) => {
                let f = std::fs::File::create(p).map_err(|e| format!("{}: {e}", p.display()))?;
                Some(Mutex::new(std::io::BufWriter::new(f)))
            }
            None => None,
        };
        Ok(Trace {
            stderr,
            json,
            lines: Mutex::new(HashMap::new()),
            breaks: Vec::new(),
            registry: None,
            breaking: std::sync::atomic::AtomicBool::new(true),
        })
    }

    /// Stops at the statements of `breaks` (file suffix, line) to read
    /// expressions from stdin, compiled with `registry` and evaluated in
    /// the statement's frame.
    pub fn with_breaks(
        mut self,
        breaks: Vec<(String, u32)>,
        registry: std::sync::Arc<runtime::registry::Registry>,
    ) -> Trace {
        self.breaks = breaks;
        self.registry = Some(registry);
        self
    }

    /// True when `e` is a statement at a breakpoint.
    fn stops_at(&self, e: &TraceEvent<'_>) -> bool {
        use std::sync::atomic::Ordering;
        let Some(at) = e.at.filter(|_| e.kind == TraceKind::Statement) else {
            return false;
        };
        self.breaking.load(Ordering::Relaxed)
            && (self.breaks.iter()).any(|(f, l)| *l == at.line && at.file.ends_with(f.as_str()))
    }

    /// A breakpoint: reads lines from stdin until an empty one, `:c` or
    /// `:q`; each other line is an expression evaluated in the frame
    /// (`:vars` lists its variables). Everything goes to stderr.
    fn pause(&self, e: &TraceEvent<'_>) {
        use std::io::BufRead;
        use std::sync::atomic::Ordering;
        let (Some((frame, env)), Some(registry)) = (e.frame, &self.registry) else {
            return;
        };
        eprintln!(
            "break: {} (empty line or :c goes on, :q stops breaking, :vars)",
            event_line(e, self.text(e).as_deref())
        );
        let stdin = std::io::stdin();
        loop {
            eprint!("break> ");
            let mut line = String::new();
            if stdin.lock().read_line(&mut line).unwrap_or(0) == 0 {
                self.breaking.store(false, Ordering::Relaxed);
                return;
            }
            let src = line.trim();
            match src {
                "" | ":c" | ":continue" => return,
                ":q" | ":quit" => {
                    self.breaking.store(false, Ordering::Relaxed);
                    return;
                }
                ":vars" => {
                    for (k, v) in &frame.vars {
                        eprintln!("${k} = {}", runtime::json::to_tagged_string(v));
                    }
                }
                _ => {
                    let opts = compiler::CompileOptions {
                        legacy: false,
                        murano: true,
                    };
                    let r = compiler::compile(src, registry, opts)
                        .and_then(|p| p.eval_in(env, frame))
                        .and_then(|v| stdlib::finalize(env, v));
                    match r {
                        Ok(v) => eprintln!("{}", runtime::json::to_tagged_string(&v)),
                        Err(err) => {
                            eprint!(
                                "{}",
                                lint::diag::Diagnostic::from_error(&err, Some(src)).render(false)
                            )
                        }
                    }
                }
            }
        }
    }

    /// Writes what is buffered.
    pub fn flush(&self) {
        if let Some(j) = &self.json {
            let _ = j.lock().unwrap_or_else(|e| e.into_inner()).flush();
        }
    }
}

fn tagged(v: &runtime::Value) -> serde_json::Value {
    serde_json::from_str(&runtime::json::to_tagged_string(v)).unwrap_or(serde_json::Value::Null)
}

impl Trace {
    /// A block statement's first source line (`For: i`), read from its
    /// file; other statements' text as the engine gives it.
    fn text(&self, e: &TraceEvent<'_>) -> Option<String> {
        let text = e.text?;
        let at = e.at.filter(|_| text == BLOCK);
        let Some(at) = at else {
            return Some(text.to_string());
        };
        let mut files = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        let lines = files.entry(at.file.to_string()).or_insert_with(|| {
            let t = std::fs::read_to_string(&*at.file).unwrap_or_default();
            t.lines().map(str::to_string).collect()
        });
        let line = lines.get((at.line as usize).saturating_sub(1))?;
        let line = line.trim().trim_start_matches("- ").trim();
        Some(if line.is_empty() {
            text.to_string()
        } else {
            line.to_string()
        })
    }
}

/// The event as one JSON object (`text`: the statement's text).
pub fn event_json(e: &TraceEvent<'_>, text: Option<&str>) -> serde_json::Value {
    let mut j = serde_json::json!({
        "file": e.at.map(|l| l.file.to_string()),
        "line": e.at.map(|l| l.line),
        "col": e.at.map(|l| l.col),
        "thread": e.thread,
        "clock": e.clock,
        "event": e.kind.name(),
        "class": e.class,
        "method": e.method,
    });
    if let Some(t) = text {
        j["text"] = t.into();
    }
    match (e.kind, e.value) {
        (TraceKind::Enter, Some(v)) => j["args"] = tagged(v),
        (TraceKind::Exit, Some(v)) => j["result"] = tagged(v),
        _ => {}
    }
    if let Some(err) = e.error {
        j["error"] = serde_json::json!({"kind": err.kind(), "message": err.message()});
    }
    j
}

/// The event as a line for people (`text`: the statement's text).
pub fn event_line(e: &TraceEvent<'_>, text: Option<&str>) -> String {
    let at = e.at.map_or_else(|| "?".to_string(), ToString::to_string);
    let what = match e.kind {
        TraceKind::Statement => text.unwrap_or("").to_string(),
        TraceKind::Enter => format!(
            "-> {}::{}({})",
            e.class,
            e.method,
            e.value
                .map(runtime::json::to_tagged_string)
                .unwrap_or_default()
        ),
        TraceKind::Exit => format!(
            "<- {}::{} = {}",
            e.class,
            e.method,
            e.value
                .map(runtime::json::to_tagged_string)
                .unwrap_or_default()
        ),
        TraceKind::Raise => format!(
            "!! {}::{} raises {}: {}",
            e.class,
            e.method,
            e.error.map_or("", |x| x.kind()),
            e.error.map_or("", |x| x.message())
        ),
    };
    let what = runtime::pyrepr::escape_controls(&what, false);
    format!("{at} [thread {} @ {:.3}s] {what}", e.thread, e.clock)
}

impl Tracer for Trace {
    fn wants_frame(&self) -> bool {
        !self.breaks.is_empty()
    }

    fn event(&self, e: &TraceEvent<'_>) {
        if self.stops_at(e) {
            self.pause(e);
        }
        if !self.stderr && self.json.is_none() {
            return;
        }
        let text = self.text(e);
        if self.stderr {
            eprintln!("trace: {}", event_line(e, text.as_deref()));
        }
        if let Some(j) = &self.json {
            let mut w = j.lock().unwrap_or_else(|e| e.into_inner());
            let _ = writeln!(w, "{}", event_json(e, text.as_deref()));
        }
    }
}
