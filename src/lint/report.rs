//! How `package check` prints what it found: diagnostics for people, one
//! JSON document, or SARIF 2.1.0 for CI tools (GitHub code scanning and
//! the like).

use std::ops::Range;

use runtime::pyrepr::escape_controls;
use serde_json::{json, Value as J};

use super::Lint;
use crate::diag::Diagnostic;

/// `d` safe to print on a terminal: the package's text in it (class
/// and file names, YAQL, messages, the snippet) with its control
/// characters escaped as Python's `repr` escapes them, so that an escape
/// sequence in a package cannot drive the terminal. `source` is the text
/// of its file and the span its snippet underlines, when it shows one.
/// JSON and SARIF need none of this: JSON escapes controls itself.
pub fn for_terminal(mut d: Diagnostic, source: Option<(&str, Range<usize>)>) -> Diagnostic {
    if let (Some(file), Some((text, span))) = (d.file.clone(), source) {
        let safe = escape_source(text);
        if safe != text {
            // The snippet is the escaped text, its span moved to match.
            let start = escape_source(text.get(..span.start).unwrap_or("")).len();
            let len = escape_source(text.get(span).unwrap_or("")).len();
            let line_col = d.line_col;
            d = d.at_span(&file, &safe, start..start + len);
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

/// Source text as a terminal may show it: controls escaped, line breaks
/// kept (`\r\n` as `\n`, as the snippet renderer shows it).
fn escape_source(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('\r') {
        return escape_controls(text, true);
    }
    std::borrow::Cow::Owned(escape_controls(&text.replace("\r\n", "\n"), true).into_owned())
}

/// The output of `package check`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
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

/// A SARIF 2.1.0 log of `diagnostics` (errors and warnings): one run of
/// the tool `muranopl`, a rule per lint and one for load errors.
pub fn render_sarif(diagnostics: &[Diagnostic]) -> J {
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
    let results: Vec<J> = diagnostics.iter().map(sarif_result).collect();
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

fn sarif_result(d: &Diagnostic) -> J {
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
        let mut loc = json!({"artifactLocation": {"uri": file}});
        if let Some((line, col)) = d.line_col {
            loc["region"] = json!({"startLine": line, "startColumn": col});
        }
        r["locations"] = json!([{"physicalLocation": loc}]);
    }
    r
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
        let log = render_sarif(&[w, e]);
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
}
