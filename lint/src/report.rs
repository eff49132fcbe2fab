//! How `package check` prints what it found: diagnostics for people, one
//! JSON document, or SARIF 2.1.0 for CI tools (GitHub code scanning and
//! the like).

use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use runtime::pyrepr::escape_controls;
use serde_json::{json, Value as J};

use crate::diag::Diagnostic;
use crate::finding::{line_starts, Finding, Lint};

/// `d` safe to print on a terminal: the package's text in it (class
/// and file names, YAQL, messages, the snippet) with its control
/// characters escaped as Python's `repr` escapes them, so that an escape
/// sequence in a package cannot drive the terminal. `source` is the text
/// of its file and the span its snippet underlines, when it shows one.
/// JSON and SARIF need none of this: JSON escapes controls itself.
pub fn for_terminal(mut d: Diagnostic, source: Option<(&str, Range<usize>)>) -> Diagnostic {
    if let (Some(file), Some((text, span))) = (d.file.clone(), source) {
        if let Some((safe, span)) = escape_snippet(text, span) {
            let line_col = d.line_col;
            d = d.at_span(&file, &safe, span);
            d.line_col = line_col;
        }
    }
    let esc = |s: &mut String| {
        if let std::borrow::Cow::Owned(e) = escape_controls(s, true) {
            *s = e;
        }
    };
    esc(&mut d.kind);
    esc(&mut d.message);
    (d.file.iter_mut())
        .chain(&mut d.input)
        .chain(&mut d.help)
        .chain(&mut d.trace)
        .for_each(|s| {
            if let std::borrow::Cow::Owned(e) = escape_controls(s, false) {
                *s = e;
            }
        });
    d
}

/// `d` without the text of its file (its snippet), as JSON and SARIF
/// print it: a diagnostic holds a copy of its file, and one big file may
/// have thousands of them.
pub fn lean(d: Diagnostic) -> Diagnostic {
    let mut l = Diagnostic::error(d.kind, d.message);
    l.warning = d.warning;
    l.file = d.file;
    l.line_col = d.line_col;
    l.trace = d.trace;
    l.help = d.help;
    l.input = d.input;
    l
}

/// How many lines the snippets of lint findings may be made of, all
/// together. A snippet is rendered from a text with a line break for each
/// line of its file before it (so that its lines keep their numbers), so
/// thousands of findings deep in one big file would take minutes to show;
/// past this they show their position alone.
const SNIPPET_BUDGET: usize = 64 << 20;

/// Diagnostics as `package check` keeps them: lean (see [`lean`]), and,
/// when they are for people, rendered with their snippets as they come
/// (so that no more than one file's text is held for them at a time).
#[derive(Default)]
pub struct Collected {
    terminal: bool,
    /// How many more lines snippets may be made of (see
    /// [`SNIPPET_BUDGET`]).
    snippet_budget: usize,
    /// The diagnostics, without snippets.
    pub diagnostics: Vec<Diagnostic>,
    /// Each diagnostic as people see it (escaped, with its snippet), when
    /// collected for a terminal.
    pub rendered: Vec<String>,
}

impl Collected {
    /// Diagnostics for a terminal (`terminal`), or for JSON and SARIF.
    pub fn new(terminal: bool) -> Collected {
        Collected {
            terminal,
            snippet_budget: SNIPPET_BUDGET,
            ..Collected::default()
        }
    }

    /// Adds `d`, with its snippet when it has one.
    fn push(&mut self, d: Diagnostic) {
        if self.terminal {
            self.rendered
                .push(d.show(crate::diag::MessageFormat::Human));
        }
        self.diagnostics.push(lean(d));
    }

    /// Adds a diagnostic of a message naming its position
    /// ([`Diagnostic::from_text`]).
    pub fn push_text(&mut self, d: Diagnostic) {
        let d = if self.terminal {
            text_for_terminal(d)
        } else {
            d
        };
        self.push(d);
    }

    /// Adds lint findings (sorted by file), their snippets from `texts`.
    pub fn push_findings(&mut self, findings: &[Finding], texts: &HashMap<String, String>) {
        let mut lines: Option<(&str, Vec<usize>)> = None;
        for f in findings {
            let text = texts.get(&f.file).map(String::as_str);
            if let Some(t) = text.filter(|_| lines.as_ref().is_none_or(|(n, _)| *n != f.file)) {
                lines = Some((f.file.as_str(), line_starts(t)));
            }
            let starts = lines.as_ref().map_or(&[][..], |(_, s)| s.as_slice());
            // A snippet is made of a line break for each line before it.
            let cost = text.map_or(0, |_| starts.partition_point(|&s| s <= f.span.start));
            let snippet = self.terminal && cost <= self.snippet_budget;
            self.snippet_budget = self.snippet_budget.saturating_sub(cost);
            let d = f.diagnostic(text.map(|t| (t, starts)), snippet);
            self.push(if self.terminal && !snippet {
                for_terminal(d, None)
            } else {
                d
            });
        }
    }
}

/// [`for_terminal`] for a diagnostic of a message naming its position
/// ([`Diagnostic::from_text`]): its snippet is the rest of that line of
/// its file, when the file can be read.
pub fn text_for_terminal(d: Diagnostic) -> Diagnostic {
    let text = (d.file.as_ref()).and_then(|f| std::fs::read_to_string(f).ok());
    let source = match (&text, d.line_col) {
        (Some(t), Some((line, col))) => crate::diag::offset(t, line, col).map(|start| {
            let line_end = t[start..].find('\n').map_or(t.len(), |i| start + i);
            (
                t.as_str(),
                start..start + t[start..line_end].trim_end().len(),
            )
        }),
        _ => None,
    };
    for_terminal(d, source)
}

/// `text` with its controls escaped and `span` moved to match, when it
/// has any (None when it is safe to show as it is).
pub fn escape_snippet(text: &str, span: Range<usize>) -> Option<(String, Range<usize>)> {
    let std::borrow::Cow::Owned(safe) = escape_source(text) else {
        return None;
    };
    let start = escape_source(text.get(..span.start).unwrap_or("")).len();
    let len = escape_source(text.get(span).unwrap_or("")).len();
    Some((safe, start..start + len))
}

/// Source text as a terminal may show it: controls escaped, line breaks
/// kept (`\r\n` as `\n`, as the snippet renderer shows it).
fn escape_source(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('\r') {
        return escape_controls(text, true);
    }
    std::borrow::Cow::Owned(escape_controls(&text.replace("\r\n", "\n"), true).into_owned())
}

/// The output of `package check`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum LintFormat {
    /// Diagnostics with snippets on stderr, a summary line on stdout.
    #[default]
    Human,
    /// One JSON document on stdout: the package, counts, errors and
    /// warnings (each as `--message-format json` prints a diagnostic).
    Json,
    /// A SARIF 2.1.0 log on stdout.
    Sarif,
}

/// The bytes of the paths diagnostics show as text, where the text lost
/// them: a path that is not UTF-8 shows U+FFFD for each bad byte, but a
/// SARIF `uri` percent-encodes the bytes themselves.
#[derive(Default)]
pub struct RawPaths {
    /// The package's directory or archive: its display and its path.
    pub root: Option<(String, PathBuf)>,
    /// Files by their display (those whose names are not UTF-8).
    pub files: HashMap<String, PathBuf>,
}

impl RawPaths {
    /// The paths of the package at `root`.
    pub fn of(root: &Path) -> RawPaths {
        RawPaths {
            root: Some((root.display().to_string(), root.to_path_buf())),
            files: HashMap::new(),
        }
    }

    /// The bytes of the path shown as `shown`.
    fn bytes(&self, shown: &str) -> Vec<u8> {
        if let Some(p) = self.files.get(shown) {
            return path_bytes(p);
        }
        if let Some((display, path)) = &self.root {
            let rest = shown.strip_prefix(display.as_str());
            if let Some(rest) = rest.filter(|r| r.is_empty() || r.starts_with(['/', '\\', '!'])) {
                let mut b = path_bytes(path);
                b.extend_from_slice(rest.as_bytes());
                return b;
            }
        }
        shown.as_bytes().to_vec()
    }
}

/// The bytes of a path (`/`-separated on Windows too).
fn path_bytes(p: &Path) -> Vec<u8> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        p.as_os_str().as_bytes().to_vec()
    }
    #[cfg(not(unix))]
    {
        p.to_string_lossy().replace('\\', "/").into_bytes()
    }
}

/// A path as a URI reference (RFC 3986): every byte but the unreserved
/// characters, the sub-delimiters, `@` and `/` percent-encoded (a space as
/// `%20`, `%` as `%25`, `:` too, which would make a first segment read as
/// a scheme, and non-ASCII as its bytes).
pub fn uri_of(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        let keep = b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=@/".contains(&b);
        if keep {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A SARIF 2.1.0 log of `diagnostics` (errors and warnings): one run of
/// the tool `muranopl`, a rule per lint and one for load errors; `paths`
/// gives the bytes of file names their text lost.
pub fn render_sarif(diagnostics: &[Diagnostic], paths: &RawPaths) -> J {
    let mut rules: Vec<J> = Lint::ALL
        .iter()
        .map(|l| {
            json!({
                "id": l.name(),
                "shortDescription": {"text": l.description()},
                "defaultConfiguration": {"level": "warning"},
            })
        })
        .collect();
    let mut extra: Vec<&str> = diagnostics
        .iter()
        .map(|d| d.kind.as_str())
        .filter(|k| Lint::from_name(k).is_none())
        .collect();
    extra.sort_unstable();
    extra.dedup();
    rules.extend(extra.into_iter().map(|k| {
        json!({
            "id": k,
            "shortDescription": {"text": format!("murano rejects the package: {k}")},
            "defaultConfiguration": {"level": "error"},
        })
    }));
    let results: Vec<J> = diagnostics.iter().map(|d| sarif_result(d, paths)).collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "muranopl",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": "https://opendev.org/openstack/murano",
                "rules": rules,
            }},
            "results": results,
        }],
    })
}

fn sarif_result(d: &Diagnostic, paths: &RawPaths) -> J {
    let mut text = d.message.clone();
    if let Some(h) = &d.help {
        text.push_str(&format!(" (help: {h})"));
    }
    let mut r = json!({
        "ruleId": d.kind,
        "level": if d.warning { "warning" } else { "error" },
        "message": {"text": text},
    });
    if let Some(file) = &d.file {
        let mut loc = json!({"artifactLocation": {"uri": uri_of(&paths.bytes(file))}});
        if let Some((line, col)) = d.line_col {
            loc["region"] = json!({"startLine": line, "startColumn": col});
        }
        r["locations"] = json!([{"physicalLocation": loc}]);
    }
    r
}

impl Finding {
    /// The finding as a diagnostic. `text` is its file's text and the
    /// offsets its lines start at (see [`line_starts`]), when the lints
    /// read it. With `terminal`, the diagnostic shows a snippet, escaped
    /// (see [`for_terminal`]); it holds only the finding's lines (and a
    /// line break for each line before them, so that lines keep their
    /// numbers), not a copy of the file: one file may have thousands of
    /// findings.
    pub fn diagnostic(&self, text: Option<(&str, &[usize])>, terminal: bool) -> Diagnostic {
        let mut d = Diagnostic::error(self.lint.name(), &self.message).as_warning();
        d.help = self.help.clone();
        let Some((text, starts)) = text else {
            let d = d.at(&self.file, 1, 1);
            return if terminal { text_for_terminal(d) } else { d };
        };
        let at = |i: usize| {
            let i = i.min(text.len());
            (0..=i)
                .rev()
                .find(|&i| text.is_char_boundary(i))
                .unwrap_or(0)
        };
        let (start, end) = (at(self.span.start), at(self.span.end.max(self.span.start)));
        let line = starts.partition_point(|&s| s <= start).max(1);
        let line_start = starts.get(line - 1).copied().unwrap_or(0).min(start);
        let col = text[line_start..start].chars().count() + 1;
        if !terminal {
            d.file = Some(self.file.clone());
            d.line_col = Some((line, col));
            return d;
        }
        let line_end = text[end..].find('\n').map_or(text.len(), |i| end + i);
        let lines = &text[line_start..line_end];
        let span = start - line_start..end - line_start;
        let (lines, span) = match escape_snippet(lines, span.clone()) {
            Some((safe, span)) => (std::borrow::Cow::Owned(safe), span),
            None => (std::borrow::Cow::Borrowed(lines), span),
        };
        let pad = line - 1;
        let window = "\n".repeat(pad) + &lines;
        let mut d = d.at_span(&self.file, &window, span.start + pad..span.end + pad);
        d.line_col = Some((line, col));
        for_terminal(d, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sarif_names_rules_levels_and_regions() {
        let w = Diagnostic::error("unknown-method", "class `C` has no method `x`").as_warning();
        let mut w = w;
        w.file = Some("Classes/C.yaml".into());
        w.line_col = Some((7, 11));
        let e = Diagnostic::error("SyntaxError", "bad");
        let log = render_sarif(&[w, e], &RawPaths::default());
        let run = &log["runs"][0];
        assert_eq!(log["version"], "2.1.0");
        let ids: Vec<&str> = run["tool"]["driver"]["rules"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_str().unwrap())
            .collect();
        assert!(ids.contains(&"unknown-method") && ids.contains(&"SyntaxError"));
        let r = &run["results"][0];
        assert_eq!(r["level"], "warning");
        assert_eq!(
            r["locations"][0]["physicalLocation"]["region"]["startLine"],
            7
        );
        assert_eq!(
            r["locations"][0]["physicalLocation"]["region"]["startColumn"],
            11
        );
        assert_eq!(run["results"][1]["level"], "error");
        assert!(run["results"][1].get("locations").is_none());
    }

    #[test]
    fn uris_are_percent_encoded() {
        assert_eq!(uri_of(b"a/Classes/A.yaml"), "a/Classes/A.yaml");
        assert_eq!(
            uri_of("my pkg/100%/caf\u{e9}#?.yaml".as_bytes()),
            "my%20pkg/100%25/caf%C3%A9%23%3F.yaml"
        );
        assert_eq!(uri_of(b"caf\xe9:x.zip!/A.yaml"), "caf%E9%3Ax.zip!/A.yaml");
    }
}
