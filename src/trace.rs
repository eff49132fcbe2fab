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
        })
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
    fn event(&self, e: &TraceEvent<'_>) {
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
