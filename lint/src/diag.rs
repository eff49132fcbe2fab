//! One renderer for the errors of every command:
//!
//! ```text
//! error[KeyError]: 'b'
//!  --> <expr>:1:1
//!   |
//! 1 | $.b
//!   | ^^^
//!   |
//!   = help: ...
//! ```
//!
//! `error[KIND]: message`, the file position, the source line with the
//! span underlined (a YAML file read back at the error's position, or the
//! expression), the MuranoPL stack as notes and `help:` where a suggestion
//! is known. Rendered by codespan-reporting: its ASCII layout is the
//! rustc one users know, it renders the same diagnostic plain (tests,
//! pipes) or coloured (terminals), and its files database takes the
//! expression and YAML files alike. [`Diagnostic::to_json`] is the same
//! diagnostic for tools (`--message-format json`).

use std::ops::Range;

use codespan_reporting::diagnostic::{self as cs, Label};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::{self, termcolor, Chars, Config};

/// How diagnostics are printed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum MessageFormat {
    /// For people: source snippets, colour on a terminal.
    #[default]
    Human,
    /// One JSON object per line: file, line, col, kind, message, trace.
    Json,
}

/// An error or warning with where it happened.
#[derive(Clone, Debug, Default)]
pub struct Diagnostic {
    /// A warning rather than an error.
    pub warning: bool,
    /// The kind: the reference's exception class, or a lint's name.
    pub kind: String,
    /// What went wrong.
    pub message: String,
    /// The file (or `<expr>` for an expression given on the command line).
    pub file: Option<String>,
    /// 1-based line and column (in characters) in `file`.
    pub line_col: Option<(usize, usize)>,
    /// The text of `file`, when it could be read, and the span in it.
    source: Option<(String, Range<usize>)>,
    /// The MuranoPL stack, innermost first.
    pub trace: Vec<String>,
    /// A suggestion.
    pub help: Option<String>,
    /// The input being worked on (`FILE:LINE` of a JSON Lines input).
    pub input: Option<String>,
}

/// The name an expression given on the command line is shown under.
pub const EXPR: &str = "<expr>";

impl Diagnostic {
    /// An error of `kind`.
    pub fn error(kind: impl Into<String>, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            kind: kind.into(),
            message: message.into(),
            ..Diagnostic::default()
        }
    }

    /// An engine error: its position in the expression `expr` (when it
    /// arose there) or in its file, and its MuranoPL stack.
    pub fn from_error(e: &runtime::Error, expr: Option<&str>) -> Diagnostic {
        let mut d = Diagnostic::error(e.kind(), e.message());
        d.trace = stack(e);
        if let (Some(src), Some(sp)) = (expr, e.span()) {
            let end = (sp.end as usize).clamp(sp.start as usize, src.len());
            d = d.at_span(EXPR, src, sp.start as usize..end);
        } else if let Some(loc) = e.location() {
            d = d.at(&loc.file, loc.line as usize, loc.col as usize);
        } else {
            d = d.at_position_in_message();
        }
        d.help = suggestion(e);
        d
    }

    /// A message that may name a `file:line:col` (as load errors do): the
    /// position becomes the diagnostic's.
    pub fn from_text(kind: impl Into<String>, text: &str) -> Diagnostic {
        Diagnostic::error(kind, text).at_position_in_message()
    }

    /// Points at `span` of `text`, shown as `file`.
    pub fn at_span(mut self, file: &str, text: &str, span: Range<usize>) -> Diagnostic {
        let (line, col) = line_col(text, span.start);
        self.file = Some(file.to_string());
        self.line_col = Some((line, col));
        self.source = Some((text.to_string(), span));
        self
    }

    /// Points at line `line`, column `col` (in characters) of `file`; the
    /// snippet is the rest of that line when the file can be read.
    pub fn at(mut self, file: &str, line: usize, col: usize) -> Diagnostic {
        self.strip_position(&format!("{file}:{line}:{col}"));
        let text = std::fs::read_to_string(file).ok();
        match text
            .as_deref()
            .and_then(|t| offset(t, line, col).map(|o| (t, o)))
        {
            Some((t, start)) => {
                let line_end = t[start..].find('\n').map_or(t.len(), |i| start + i);
                let end = start + t[start..line_end].trim_end().len();
                self.at_span(file, t, start..end)
            }
            None => {
                self.file = Some(file.to_string());
                self.line_col = Some((line, col));
                self
            }
        }
    }

    /// Takes the first `file:line:col` the message names as the position.
    fn at_position_in_message(self) -> Diagnostic {
        match find_position(&self.message) {
            Some((file, line, col)) => self.at(&file, line, col),
            None => self,
        }
    }

    /// Drops the position from the message where it labels what follows
    /// (`F:L:C: text`): the `-->` line shows it. A position inside a
    /// sentence (`... (contract at F:L:C)`) stays.
    fn strip_position(&mut self, pos: &str) {
        if self.message.starts_with(pos) && self.message[pos.len()..].starts_with(':') {
            self.message = self.message[pos.len() + 1..].trim_start().to_string();
        } else if let Some(i) = self.message.find(&format!("{pos}: ")) {
            self.message.replace_range(i..i + pos.len() + 2, "");
        }
    }

    /// The same diagnostic as a warning.
    pub fn as_warning(self) -> Diagnostic {
        Diagnostic {
            warning: true,
            ..self
        }
    }

    /// Malformed JSON in `file` (text `text`), pointing at where serde_json
    /// stopped (`... at line L column C`).
    pub fn bad_json(file: &str, text: &str, e: &runtime::Error) -> Diagnostic {
        let msg = e.message().to_string();
        let at = msg.rsplit_once(" at line ").and_then(|(_, pos)| {
            let (line, col) = pos.split_once(" column ")?;
            Some((line.parse::<usize>().ok()?, col.parse::<usize>().ok()?))
        });
        let d = Diagnostic::error(e.kind(), msg);
        match at {
            Some((line, col)) => {
                let at = offset(text, line, col).unwrap_or(text.len());
                let end = at + text[at..].chars().next().map_or(0, char::len_utf8);
                d.at_span(file, text, at..end)
            }
            None => Diagnostic {
                file: Some(file.to_string()),
                ..d
            },
        }
    }

    /// Names the input being worked on.
    pub fn with_input(mut self, input: Option<String>) -> Diagnostic {
        self.input = input;
        self
    }

    /// The text for people; coloured when `color`.
    pub fn render(&self, color: bool) -> String {
        let severity = if self.warning {
            cs::Severity::Warning
        } else {
            cs::Severity::Error
        };
        let mut d = cs::Diagnostic::new(severity)
            .with_code(&self.kind)
            .with_message(&self.message);
        let file = match (&self.file, &self.source) {
            (Some(f), Some((text, span))) => {
                d = d.with_labels(vec![Label::primary((), span.clone())]);
                SimpleFile::new(f.as_str(), text.as_str())
            }
            (Some(f), None) => {
                let (line, col) = self.line_col.unwrap_or((1, 1));
                d = d.with_notes(vec![format!("at {f}:{line}:{col}")]);
                SimpleFile::new(f.as_str(), "")
            }
            _ => SimpleFile::new("", ""),
        };
        let mut notes: Vec<String> = self.trace.iter().map(|t| format!("in {t}")).collect();
        if let Some(i) = &self.input {
            notes.push(format!("input: {i}"));
        }
        if let Some(h) = &self.help {
            notes.push(format!("help: {h}"));
        }
        d.notes.extend(notes);
        let config = Config {
            chars: Chars::ascii(),
            ..Config::default()
        };
        let out = if color {
            let mut buf = termcolor::Buffer::ansi();
            term::emit_to_write_style(&mut buf, &config, &file, &d)
                .map(|()| String::from_utf8_lossy(buf.as_slice()).into_owned())
        } else {
            term::emit_into_string(&config, &file, &d)
        };
        out.unwrap_or_else(|_| format!("error[{}]: {}\n", self.kind, self.message))
    }

    /// The diagnostic for tools: `{"severity", "kind", "message", "file",
    /// "line", "col", "trace", "help"}`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "severity": if self.warning { "warning" } else { "error" },
            "kind": self.kind,
            "message": self.message,
            "file": self.file,
            "line": self.line_col.map(|p| p.0),
            "col": self.line_col.map(|p| p.1),
            "trace": self.trace,
            "help": self.help,
            "input": self.input,
        })
    }

    /// The text `format` prints (colour when stderr is a terminal),
    /// ending in a newline.
    pub fn show(&self, format: MessageFormat) -> String {
        use std::io::IsTerminal;
        match format {
            MessageFormat::Json => format!("{}\n", self.to_json()),
            MessageFormat::Human => {
                let color = std::io::stderr().is_terminal()
                    && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
                self.render(color)
            }
        }
    }

    /// Prints the diagnostic to stderr in `format`.
    pub fn eprint(&self, format: MessageFormat) {
        eprint!("{}", self.show(format));
    }
}

/// The MuranoPL stack, innermost frame first: `Type::method at F:L:C`.
fn stack(e: &runtime::Error) -> Vec<String> {
    let frames = e.stack_frames();
    frames
        .iter()
        .rev()
        .map(|f| match (&f.method, &f.statement) {
            (Some((t, m)), Some((at, _))) => format!("{t}::{m} at {at}"),
            (Some((t, m)), None) => format!("{t}::{m}"),
            (None, Some((at, _))) => at.to_string(),
            (None, None) => String::new(),
        })
        .collect()
}

/// 1-based line and column (in characters) of byte `at` of `text`.
pub fn line_col(text: &str, at: usize) -> (usize, usize) {
    let at = at.min(text.len());
    let at = (0..=at)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let col = before[before.rfind('\n').map_or(0, |i| i + 1)..]
        .chars()
        .count()
        + 1;
    (line, col)
}

/// The byte offset of line `line`, column `col` (1-based, in characters).
pub fn offset(text: &str, line: usize, col: usize) -> Option<usize> {
    let start = if line <= 1 {
        0
    } else {
        text.match_indices('\n').nth(line - 2)?.0 + 1
    };
    let rest = &text[start..];
    let line_text = &rest[..rest.find('\n').unwrap_or(rest.len())];
    let in_line = line_text
        .char_indices()
        .nth(col.saturating_sub(1))
        .map_or(line_text.len(), |(i, _)| i);
    Some(start + in_line)
}

/// The first `FILE:LINE:COL` in `text` whose file has a YAML or JSON name.
fn find_position(text: &str) -> Option<(String, usize, usize)> {
    let bytes = text.as_bytes();
    for (i, _) in text.match_indices(':') {
        let file_start = text[..i]
            .rfind(|c: char| c.is_whitespace() || "\"'(`".contains(c))
            .map_or(0, |s| s + 1);
        let file = &text[file_start..i];
        if !(file.ends_with(".yaml") || file.ends_with(".yml") || file.ends_with(".json")) {
            continue;
        }
        let digits = |from: usize| {
            let n = bytes[from..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
            text[from..from + n]
                .parse::<usize>()
                .ok()
                .map(|v| (v, from + n))
        };
        if let Some((line, after)) = digits(i + 1) {
            if bytes.get(after) == Some(&b':') {
                if let Some((col, _)) = digits(after + 1) {
                    return Some((file.to_string(), line, col));
                }
            }
        }
    }
    None
}

/// The name between the first pair of `open`/`close` quotes after
/// `prefix` in `message`.
fn quoted_after<'a>(message: &'a str, prefix: &str) -> Option<&'a str> {
    let rest = &message[message.find(prefix)? + prefix.len()..];
    let q = rest.chars().next().filter(|c| matches!(c, '"' | '\''))?;
    rest[1..].split(q).next()
}

/// The class an error message names after `in class ` (quoted or not).
fn class_after(message: &str) -> Option<&str> {
    let rest = &message[message.find("in class ")? + "in class ".len()..];
    let rest = rest.trim_start_matches(['"', '\'']);
    rest.split(|c: char| c == '"' || c == '\'' || c.is_whitespace())
        .next()
        .filter(|c| !c.is_empty())
}

impl Diagnostic {
    /// Adds `help:` naming the closest class, method or property that the
    /// catalogue has, for an error about one it does not (a mistyped
    /// `Extends`, `new()`, method call or property), unless there is one.
    pub fn with_catalog_help(mut self, catalog: &engine::Catalog) -> Diagnostic {
        if self.help.is_none() {
            self.help = catalog_suggestion(&self.message, catalog);
        }
        self
    }
}

fn catalog_suggestion(message: &str, catalog: &engine::Catalog) -> Option<String> {
    let decls = || catalog.packages().iter().flat_map(|p| p.decls.values());
    let classes = || decls().map(|d| d.name.as_str());
    let mro_of = |class: &str| catalog.class(class).ok();
    let (name, best) = if let Some(class) = quoted_after(message, "Class ") {
        (class, closest(class, classes()))
    } else if let Some(method) = quoted_after(message, "No method ")
        .or_else(|| message.strip_prefix("Method ")?.split(' ').next())
    {
        let own: Option<Vec<String>> = class_after(message)
            .and_then(mro_of)
            .map(|c| c.mro().flat_map(|k| k.methods.keys().cloned()).collect());
        let best = match own {
            Some(names) => closest(method, names.iter().map(String::as_str)),
            None => closest(
                method,
                decls().flat_map(|d| d.methods.iter().map(|m| m.name.as_str())),
            ),
        };
        (method, best)
    } else if let Some(prop) =
        quoted_after(message, "property ").or_else(|| quoted_after(message, "Property "))
    {
        let class = mro_of(class_after(message)?)?;
        let names: Vec<String> = class
            .mro()
            .flat_map(|k| k.props.iter().map(|p| p.name.to_string()))
            .collect();
        (prop, closest(prop, names.iter().map(String::as_str)))
    } else {
        return None;
    };
    best.filter(|b| b != name)
        .map(|b| format!("did you mean `{b}`?"))
}

/// `help:` for a name the engine does not know: the closest it does.
fn suggestion(e: &runtime::Error) -> Option<String> {
    use runtime::ErrorKind as K;
    let what = match e.error_kind() {
        K::NoFunctionRegisteredException => "function",
        K::NoMethodRegisteredException => "method",
        _ => return None,
    };
    let name = e.message().split('"').nth(1)?;
    let registry = stdlib::env(runtime::Options::default()).registry().clone();
    let names = registry
        .names()
        .filter(|n| !n.starts_with('#') && !n.starts_with('*'));
    let best = closest(name, names)?;
    Some(format!("a {what} with a similar name exists: `{best}`"))
}

/// The candidate closest to `name` by edit distance (transpositions
/// count once): at most 1 edit for names under 4 characters, else a third
/// of the length, between 2 and 3. `name` itself is no suggestion.
pub fn closest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<String> {
    let len = name.chars().count();
    let limit = if len < 4 { 1 } else { (len / 3).clamp(2, 3) };
    candidates
        .filter(|c| *c != name)
        .map(|c| (strsim::damerau_levenshtein(name, c), c))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, c)| c.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closest_names_are_near_ones() {
        let c = ["deploy", "destroy", "report", "len"];
        assert_eq!(
            closest("deplyo", c.iter().copied()).as_deref(),
            Some("deploy")
        );
        assert_eq!(closest("lenn", c.iter().copied()).as_deref(), Some("len"));
        assert_eq!(closest("xyz", c.iter().copied()), None);
        assert_eq!(closest("deploy", c.iter().copied()), None);
    }

    #[test]
    fn the_catalogue_suggests_classes_methods_and_properties() {
        let class =
            "Namespaces: {=: ex}\nName: Server\nProperties:\n  port:\n    Contract: $.int()\n\
                     Methods:\n  deploy:\n    Body:\n      - Return: 1\n";
        let files = [("Server.yaml".to_string(), class.to_string())];
        let pkg = engine::Package::new("ex", "1.0.0", "1.4", &files).unwrap();
        let catalog = engine::Catalog::new(vec![pkg]);
        let help = |m: &str| Diagnostic::error("E", m).with_catalog_help(&catalog).help;
        assert_eq!(
            help("Class \"ex.Sever\" is not found in ex/1.0.0").as_deref(),
            Some("did you mean `ex.Server`?")
        );
        assert_eq!(
            help("Method deplyo is not found in class ex.Server").as_deref(),
            Some("did you mean `deploy`?")
        );
        assert_eq!(
            help("Access to uninitialized property \"prot\" in class \"ex.Server\" is forbidden")
                .as_deref(),
            Some("did you mean `port`?")
        );
        assert_eq!(help("Class \"zzz.Qqq\" is not found in ex/1.0.0"), None);
        assert_eq!(help("division by zero"), None);
    }

    #[test]
    fn positions_map_between_bytes_and_lines() {
        let text = "a: 1\nbé: $x +\n";
        assert_eq!(line_col(text, 0), (1, 1));
        assert_eq!(line_col(text, 9), (2, 4));
        assert_eq!(offset(text, 2, 4), Some(9));
        assert_eq!(offset(text, 9, 1), None);
        assert_eq!(
            find_position("class X: SyntaxError: pkg/C.yaml:11:9: bad"),
            Some(("pkg/C.yaml".into(), 11, 9))
        );
        assert_eq!(find_position("at 10:20:30 nothing"), None);
    }

    #[test]
    fn a_leading_position_moves_from_the_message_to_the_arrow() {
        let mut d = Diagnostic::error("SyntaxError", "C.yaml:3:4: Syntax is incorrect");
        d.strip_position("C.yaml:3:4");
        assert_eq!(d.message, "Syntax is incorrect");
        let mut d = Diagnostic::error("E", "class C: SyntaxError: C.yaml:3:4: Syntax is incorrect");
        d.strip_position("C.yaml:3:4");
        assert_eq!(d.message, "class C: SyntaxError: Syntax is incorrect");
        let mut d = Diagnostic::error("X", "bad value (contract at C.yaml:3:4)");
        d.strip_position("C.yaml:3:4");
        assert_eq!(d.message, "bad value (contract at C.yaml:3:4)");
    }
}
