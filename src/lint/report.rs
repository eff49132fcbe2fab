//! How `package check` prints what it found: diagnostics for people, one
//! JSON document, or SARIF 2.1.0 for CI tools (GitHub code scanning and
//! the like).

use serde_json::{json, Value as J};

use super::Lint;
use crate::diag::Diagnostic;

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
