//! Errors: a kind named as the reference names it, a message and a span.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

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

macro_rules! error_kinds {
    ($($name:ident,)*) => {
        /// The kind of an error: the reference's exception class name as
        /// data. Every known kind is a variant; [`ErrorKind::Other`] holds
        /// the rest (exceptions MuranoPL code throws by name, kinds a host
        /// invents). [`ErrorKind::name`] and `Display` give the reference
        /// name, so output stays what the reference prints.
        #[derive(Clone, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum ErrorKind {
            $(
                #[allow(missing_docs)]
                $name,
            )*
            /// Any other name.
            Other(Cow<'static, str>),
        }

        impl ErrorKind {
            /// The reference's name of the kind.
            pub fn name(&self) -> &str {
                match self {
                    $(ErrorKind::$name => stringify!($name),)*
                    ErrorKind::Other(name) => name,
                }
            }

            /// The known kind of that name (`None` for any other name).
            pub fn known(name: &str) -> Option<ErrorKind> {
                match name {
                    $(stringify!($name) => Some(ErrorKind::$name),)*
                    _ => None,
                }
            }
        }
    };
}

error_kinds! {
        // YAQL (yaql.language.exceptions)
        NoMatchingFunctionException,
        NoMatchingMethodException,
        NoFunctionRegisteredException,
        NoMethodRegisteredException,
        YaqlGrammarException,
        YaqlLexicalException,
        CollectionTooLargeException,
        MemoryQuotaExceededException,
        // Python built-in exceptions the reference raises
        KeyError,
        IndexError,
        ValueError,
        TypeError,
        AttributeError,
        LookupError,
        OverflowError,
        ZeroDivisionError,
        RuntimeError,
        StopIteration,
        MemoryError,
        RecursionError,
        TimeoutError,
        AssertionError,
        UnicodeDecodeError,
        // MuranoPL (murano.dsl.exceptions)
        ContractViolationException,
        NoWriteAccessError,
        UninitializedPropertyAccessError,
        PropertyReadError,
        PropertyWriteError,
        NoPropertyFound,
        NoClassFound,
        NoObjectFoundError,
        ObjectDestroyedError,
        DslInvalidOperationError,
        DslContractSyntaxError,
        DslSyntaxError,
        MethodNotExposed,
        AmbiguousMethodName,
        NoMethodFound,
        AmbiguousClassName,
        CircularExpressionDependenciesError,
        AmbiguousPropertyNameError,
        InvalidInheritanceError,
        NoPackageFound,
        // Packages and the dynamic UI
        PackageFormatError,
        PackageLoadError,
        PackageClassLoadError,
        ResourceNotFound,
        UiDefinitionError,
        UiValidationError,
        // YAML (PyYAML's error classes)
        ScannerError,
        ParserError,
        ComposerError,
        ConstructorError,
        // Engine functions and the simulated cloud
        NeutronClientException,
        JsonPatchConflict,
        JsonPatchTestFailed,
        InvalidJsonPatch,
        JsonPointerException,
        // Limits and internal failures
        ExecutionLimitExceeded,
        DeadlockError,
        InternalError,
}

impl ErrorKind {
    /// The Python module of the reference's exception class, for the kinds
    /// MuranoPL code sees qualified (`murano.dsl.exceptions.NoClassFound`);
    /// `None` for the rest.
    pub fn module(&self) -> Option<&'static str> {
        use ErrorKind::*;
        match self {
            ContractViolationException
            | NoWriteAccessError
            | UninitializedPropertyAccessError
            | PropertyReadError
            | PropertyWriteError
            | NoPropertyFound
            | NoClassFound
            | NoObjectFoundError
            | ObjectDestroyedError
            | DslInvalidOperationError
            | DslContractSyntaxError
            | MethodNotExposed
            | AmbiguousMethodName
            | NoMethodFound
            | AmbiguousClassName
            | CircularExpressionDependenciesError
            | AmbiguousPropertyNameError
            | InvalidInheritanceError
            | DslSyntaxError => Some("murano.dsl.exceptions"),
            NoMatchingMethodException
            | NoMethodRegisteredException
            | NoFunctionRegisteredException
            | NoMatchingFunctionException
            | YaqlGrammarException
            | YaqlLexicalException => Some("yaql.language.exceptions"),
            _ => None,
        }
    }

    /// The kind of a name: a known kind, or [`ErrorKind::Other`].
    pub fn from_name(name: impl Into<Cow<'static, str>>) -> ErrorKind {
        let name = name.into();
        ErrorKind::known(&name).unwrap_or(ErrorKind::Other(name))
    }
}

impl From<&'static str> for ErrorKind {
    fn from(name: &'static str) -> ErrorKind {
        ErrorKind::from_name(name)
    }
}

impl From<String> for ErrorKind {
    fn from(name: String) -> ErrorKind {
        ErrorKind::from_name(name)
    }
}

impl From<Cow<'static, str>> for ErrorKind {
    fn from(name: Cow<'static, str>) -> ErrorKind {
        ErrorKind::from_name(name)
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl PartialEq<str> for ErrorKind {
    fn eq(&self, other: &str) -> bool {
        self.name() == other
    }
}

impl PartialEq<&str> for ErrorKind {
    fn eq(&self, other: &&str) -> bool {
        self.name() == *other
    }
}

#[derive(Debug, Clone)]
struct Inner {
    kind: ErrorKind,
    message: String,
    span: Option<Span>,
    data: Option<crate::Value>,
    trace: Vec<TraceEntry>,
    location: Option<Location>,
}

/// One entry of an error's MuranoPL stack trace, innermost first: each
/// statement the error left, then the method it left that statement of.
#[derive(Clone, Debug, PartialEq)]
pub enum TraceEntry {
    /// A statement: where it is and its text (the YAQL expression, or
    /// `block construct` for a block, as murano's `InstructionStub` titles
    /// macros).
    Statement {
        /// Its position.
        at: Location,
        /// Its text.
        instruction: Arc<str>,
    },
    /// A method: its declaring type and name.
    Method {
        /// The declaring type.
        type_name: Arc<str>,
        /// The method.
        method: Arc<str>,
    },
}

impl fmt::Display for TraceEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TraceEntry::Statement { at, .. } => at.fmt(f),
            TraceEntry::Method { type_name, method } => write!(f, "{type_name}::{method}"),
        }
    }
}

/// A frame as murano's `io.murano.StackTrace` holds it: the statement
/// running in a method (murano/dsl/principal_objects/stack_trace.py,
/// `compose_stack_frame`).
#[derive(Clone, Debug, PartialEq)]
pub struct StackFrame {
    /// The statement's position and text, when the error left one.
    pub statement: Option<(Location, Arc<str>)>,
    /// The method's declaring type and name, when known.
    pub method: Option<(Arc<str>, Arc<str>)>,
}

/// Where in a file an error arose: the file as the loader was given it,
/// line and column (1-based, the column in characters).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Location {
    /// The file.
    pub file: Arc<str>,
    /// Line.
    pub line: u32,
    /// Column.
    pub col: u32,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.col)
    }
}

/// An engine error. Its `kind` is the reference's exception class name
/// (`NoMatchingFunctionException`, `KeyError`, ...).
#[derive(Clone)]
pub struct Error(Box<Inner>);

/// Result with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Makes an error of `kind` with a message (an empty one becomes the
    /// kind's name: no error goes without words).
    pub fn new(kind: impl Into<ErrorKind>, message: impl Into<String>) -> Error {
        let kind = kind.into();
        let mut message = message.into();
        if message.is_empty() {
            message = kind.name().to_string();
        }
        Error(Box::new(Inner {
            kind,
            message,
            span: None,
            data: None,
            trace: Vec::new(),
            location: None,
        }))
    }
    /// An error of the same kind whose message `f` rewrites, and nothing
    /// else (no span, payload, trace or location): made in place when the
    /// error has none of those, so that an error reworded as it rises
    /// (a contract violation gaining its path and property) is one
    /// allocation.
    pub fn reworded(mut self, f: impl FnOnce(&mut String)) -> Error {
        let inner = &mut *self.0;
        let bare = inner.span.is_none()
            && inner.data.is_none()
            && inner.trace.is_empty()
            && inner.location.is_none();
        if bare {
            f(&mut inner.message);
            if inner.message.is_empty() {
                inner.message = inner.kind.name().to_string();
            }
            return self;
        }
        let mut message = std::mem::take(&mut inner.message);
        f(&mut message);
        Error::new(inner.kind.clone(), message)
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
    /// Records that the error left a statement; its position becomes the
    /// error's location unless one is set already.
    pub fn leave_statement(mut self, at: Location, instruction: Arc<str>) -> Error {
        if self.0.location.is_none() {
            self.0.location = Some(at.clone());
        }
        self.0.trace.push(TraceEntry::Statement { at, instruction });
        self
    }
    /// Records that the error left a method.
    pub fn leave_method(mut self, type_name: Arc<str>, method: Arc<str>) -> Error {
        self.0.trace.push(TraceEntry::Method { type_name, method });
        self
    }
    /// The MuranoPL stack trace as text (`file:line:col` of statements,
    /// `Type::method` of methods), innermost entry first.
    pub fn trace(&self) -> Vec<String> {
        self.0.trace.iter().map(ToString::to_string).collect()
    }
    /// The MuranoPL stack trace, innermost entry first.
    pub fn trace_entries(&self) -> &[TraceEntry] {
        &self.0.trace
    }
    /// The trace as frames, outermost first as murano's `StackTrace`
    /// lists them: each method with the statement it was running.
    pub fn stack_frames(&self) -> Vec<StackFrame> {
        let mut frames = Vec::new();
        let mut statement = None;
        for e in &self.0.trace {
            match e {
                TraceEntry::Statement { at, instruction } => {
                    if let Some(s) = statement.replace((at.clone(), instruction.clone())) {
                        frames.push(StackFrame {
                            statement: Some(s),
                            method: None,
                        });
                    }
                }
                TraceEntry::Method { type_name, method } => frames.push(StackFrame {
                    statement: statement.take(),
                    method: Some((type_name.clone(), method.clone())),
                }),
            }
        }
        if let Some(s) = statement {
            frames.push(StackFrame {
                statement: Some(s),
                method: None,
            });
        }
        frames.reverse();
        frames
    }
    /// The name of the error kind (the reference's exception class).
    pub fn kind(&self) -> &str {
        self.0.kind.name()
    }
    /// The error kind.
    pub fn error_kind(&self) -> &ErrorKind {
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
    /// The file position of the error, when it arose in a file.
    pub fn location(&self) -> Option<&Location> {
        self.0.location.as_ref()
    }
    /// Sets the file position unless one is already set.
    pub fn with_location(mut self, loc: Location) -> Error {
        if self.0.location.is_none() {
            self.0.location = Some(loc);
        }
        self
    }

    /// Renders the error against the expression text it arose in, with a
    /// caret line (see [`Error::report`]).
    pub fn render(&self, src: &str) -> String {
        self.report(Some(src))
    }

    /// Renders the error as every command prints it: `Kind: message`; the
    /// file position when the message does not already start with it; a
    /// caret line under the span when `src` (the expression text) is
    /// given; the MuranoPL stack trace, innermost frame first.
    pub fn report(&self, src: Option<&str>) -> String {
        let mut out = format!("{}: {}", self.kind(), self.message());
        if let Some(loc) = self.location() {
            if !self.message().starts_with(&loc.to_string()) {
                out.push_str(&format!("\n  --> {loc}"));
            }
        }
        if let Some(src) = src {
            self.caret(src, &mut out);
        }
        for frame in &self.0.trace {
            out.push_str(&format!("\n  at {frame}"));
        }
        out
    }

    fn caret(&self, src: &str, out: &mut String) {
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
    }

    /// `KeyError`.
    pub fn key(msg: impl Into<String>) -> Error {
        Error::new(ErrorKind::KeyError, msg)
    }
    /// `IndexError`.
    pub fn index(msg: impl Into<String>) -> Error {
        Error::new(ErrorKind::IndexError, msg)
    }
    /// `ValueError`.
    pub fn value(msg: impl Into<String>) -> Error {
        Error::new(ErrorKind::ValueError, msg)
    }
    /// `TypeError`.
    pub fn type_(msg: impl Into<String>) -> Error {
        Error::new(ErrorKind::TypeError, msg)
    }
    /// `CollectionTooLargeException`.
    pub fn too_large() -> Error {
        Error::new(
            ErrorKind::CollectionTooLargeException,
            "Collection is too large",
        )
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_data_that_print_the_reference_names() {
        let e = Error::new("NoClassFound", "x");
        assert_eq!(*e.error_kind(), ErrorKind::NoClassFound);
        assert_eq!(e.kind(), "NoClassFound");
        assert_eq!(ErrorKind::NoClassFound.to_string(), "NoClassFound");
        assert_eq!(
            ErrorKind::NoClassFound.module(),
            Some("murano.dsl.exceptions")
        );
        assert_eq!(ErrorKind::KeyError.module(), None);
        // A name the engine does not know (a MuranoPL exception thrown by
        // name) is kept as it is.
        let e = Error::new(String::from("com.example.Failure"), "y");
        assert_eq!(
            *e.error_kind(),
            ErrorKind::Other("com.example.Failure".into())
        );
        assert_eq!(e.kind(), "com.example.Failure");
        assert_eq!(ErrorKind::from_name("KeyError"), ErrorKind::KeyError);
    }

    #[test]
    fn one_report_for_every_command() {
        let loc = Location {
            file: "Classes/App.yaml".into(),
            line: 7,
            col: 9,
        };
        let e = Error::new(ErrorKind::DslSyntaxError, "bad statement")
            .leave_statement(loc.clone(), "$.x()".into())
            .leave_method("App".into(), "deploy".into());
        assert_eq!(e.location(), Some(&loc));
        assert_eq!(
            e.report(None),
            "DslSyntaxError: bad statement\n  --> Classes/App.yaml:7:9\n  at Classes/App.yaml:7:9\n  at App::deploy"
        );
        // As frames: each method with the statement it was running.
        let frames = e.stack_frames();
        assert_eq!(frames.len(), 1);
        assert_eq!(frames[0].statement, Some((loc.clone(), "$.x()".into())));
        assert_eq!(frames[0].method, Some(("App".into(), "deploy".into())));
        // A message that already names the place is not repeated.
        let e =
            Error::new(ErrorKind::DslSyntaxError, "Classes/App.yaml:7:9: bad").with_location(loc);
        assert_eq!(e.report(None), "DslSyntaxError: Classes/App.yaml:7:9: bad");
        // With the expression text, a caret under the span.
        let e = Error::new(ErrorKind::KeyError, "'b'").with_span(Span::new(2, 3));
        assert_eq!(
            e.report(Some("$.b")),
            "KeyError: 'b'\n  at line 1, column 3\n  $.b\n    ^"
        );
    }

    #[test]
    fn rewording_keeps_the_kind_and_drops_what_a_new_error_would_not_have() {
        let e = Error::new(ErrorKind::ContractViolationException, "bad");
        let e = e.reworded(|m| {
            m.insert_str(0, "[x] ");
            m.push_str(" (at 1:2)");
        });
        assert_eq!(e.kind(), "ContractViolationException");
        assert_eq!(e.message(), "[x] bad (at 1:2)");
        // An error with a span or payload becomes a plain one, as
        // `Error::new` with the new words would be.
        let e = Error::new(ErrorKind::ValueError, "v")
            .with_span(Span::new(1, 2))
            .with_data(crate::Value::Int(1))
            .reworded(|m| m.push('!'));
        assert_eq!((e.message(), e.span(), e.data()), ("v!", None, None));
        // No error goes without words.
        let e = Error::new(ErrorKind::KeyError, "k").reworded(String::clear);
        assert_eq!(e.message(), "KeyError");
    }
}
