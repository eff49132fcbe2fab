//! A position in a MuranoPL source file, and errors made there.

use std::fmt;
use std::sync::Arc;

use runtime::{Error, Span};

/// A position in a source file: 1-based line and column (in characters) and
/// the 0-based byte offset. Displays as `file:line:col`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Pos {
    /// The file name as given to the loader.
    pub file: Arc<str>,
    /// Line, 1-based.
    pub line: u32,
    /// Column in characters, 1-based.
    pub col: u32,
    /// Byte offset into the file text.
    pub offset: u32,
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.col)
    }
}

impl Pos {
    /// Makes an error of `kind` at this position: its location is this
    /// position, its span starts at the byte offset, and its message is
    /// prefixed by `file:line:col` (as the reference's messages name the
    /// place).
    pub fn error(&self, kind: impl Into<runtime::ErrorKind>, msg: impl fmt::Display) -> Error {
        Error::new(kind, format!("{self}: {msg}"))
            .with_span(Span::new(self.offset as usize, self.offset as usize))
            .with_location(self.location())
    }

    /// This position as an error location.
    pub fn location(&self) -> runtime::Location {
        runtime::Location {
            file: self.file.clone(),
            line: self.line,
            col: self.col,
        }
    }
}
