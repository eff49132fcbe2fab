//! Errors: a kind named as the reference names it, a message and a span.

use std::borrow::Cow;
use std::fmt;

/// A half-open byte range in a source text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Span {
    /// First byte.
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
}

impl Span {
    /// Makes a span.
    pub fn new(start: usize, end: usize) -> Span {
        Span {
            start: start as u32,
            end: end as u32,
        }
    }
    /// The smallest span covering both.
    pub fn join(self, o: Span) -> Span {
        Span {
            start: self.start.min(o.start),
            end: self.end.max(o.end),
        }
    }
}

/// Line and column (both 1-based, column in characters) of a byte offset.
pub fn line_col(src: &str, offset: u32) -> (usize, usize) {
    let off = (offset as usize).min(src.len());
    let before = &src[..floor_char(src, off)];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

fn floor_char(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[derive(Debug, Clone)]
struct Inner {
    kind: Cow<'static, str>,
    message: String,
    span: Option<Span>,
    data: Option<crate::Value>,
    trace: Vec<String>,
}

/// An engine error. Its `kind` is the reference's exception class name
/// (`NoMatchingFunctionException`, `KeyError`, ...).
#[derive(Clone)]
pub struct Error(Box<Inner>);

/// Result with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Makes an error of `kind` with a message.
    pub fn new(kind: impl Into<Cow<'static, str>>, message: impl Into<String>) -> Error {
        Error(Box::new(Inner {
            kind: kind.into(),
            message: message.into(),
            span: None,
            data: None,
            trace: Vec::new(),
        }))
    }
    /// Attaches a payload (a MuranoPL exception object).
    pub fn with_data(mut self, v: crate::Value) -> Error {
        self.0.data = Some(v);
        self
    }
    /// The payload, if any.
    pub fn data(&self) -> Option<&crate::Value> {
        self.0.data.as_ref()
    }
    /// Appends a MuranoPL stack frame (`file:line:col` and method).
    pub fn push_frame(mut self, frame: String) -> Error {
        self.0.trace.push(frame);
        self
    }
    /// The MuranoPL stack trace, innermost frame first.
    pub fn trace(&self) -> &[String] {
        &self.0.trace
    }
    /// The error kind.
    pub fn kind(&self) -> &str {
        &self.0.kind
    }
    /// The message.
    pub fn message(&self) -> &str {
        &self.0.message
    }
    /// The source span, when known.
    pub fn span(&self) -> Option<Span> {
        self.0.span
    }
    /// Sets the span unless one is already set.
    pub fn with_span(mut self, span: Span) -> Error {
        if self.0.span.is_none() {
            self.0.span = Some(span);
        }
        self
    }
    /// Renders the error against its source with a caret line.
    pub fn render(&self, src: &str) -> String {
        let mut out = format!("{}: {}", self.kind(), self.message());
        if let Some(sp) = self.span() {
            let (line, col) = line_col(src, sp.start);
            out.push_str(&format!("\n  at line {line}, column {col}\n"));
            let text: Vec<char> = src.lines().nth(line - 1).unwrap_or("").chars().collect();
            let width = {
                let end = (sp.end as usize).min(src.len());
                let start = (sp.start as usize).min(end);
                src.get(start..end)
                    .map_or(1, |s| s.lines().next().unwrap_or("").chars().count().max(1))
            };
            // Show a window of the line around the error (long expressions).
            const WINDOW: usize = 100;
            let from = (col - 1).saturating_sub(WINDOW / 2);
            let to = (from + WINDOW).min(text.len());
            let shown: String = text[from.min(text.len())..to].iter().collect();
            let lead = if from > 0 { "..." } else { "" };
            let tail = if to < text.len() { "..." } else { "" };
            out.push_str(&format!("  {lead}{shown}{tail}\n  "));
            out.push_str(&" ".repeat(col - 1 - from + lead.len()));
            out.push_str(&"^".repeat(width.min(to.saturating_sub(col - 1)).max(1)));
        }
        out
    }

    /// `KeyError`.
    pub fn key(msg: impl Into<String>) -> Error {
        Error::new("KeyError", msg)
    }
    /// `IndexError`.
    pub fn index(msg: impl Into<String>) -> Error {
        Error::new("IndexError", msg)
    }
    /// `ValueError`.
    pub fn value(msg: impl Into<String>) -> Error {
        Error::new("ValueError", msg)
    }
    /// `TypeError`.
    pub fn type_(msg: impl Into<String>) -> Error {
        Error::new("TypeError", msg)
    }
    /// `CollectionTooLargeException`.
    pub fn too_large() -> Error {
        Error::new("CollectionTooLargeException", "Collection is too large")
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind(), self.message())?;
        if let Some(s) = self.span() {
            write!(f, " @{}..{}", s.start, s.end)?;
        }
        Ok(())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind(), self.message())
    }
}

impl std::error::Error for Error {}
