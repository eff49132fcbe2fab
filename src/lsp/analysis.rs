//! Checking a package as `package check` does, with the editor's unsaved
//! files in place of the saved ones, and its findings as LSP diagnostics
//! by file.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use engine::Executor;
use lsp_types::{Diagnostic, DiagnosticSeverity, NumberOrString, Position, Range};
use package::{FormatRegistry, PackageFormat, Source};

use super::text;

/// What the server knows of one package after checking it.
pub struct Analysis {
    /// The executor that compiled its classes (none when the package
    /// did not load or its requirements did not resolve).
    pub executor: Option<Arc<Executor>>,
    /// The diagnostics of each file of the package that has any.
    pub diagnostics: BTreeMap<PathBuf, Vec<Diagnostic>>,
}

/// The `source` of the diagnostics `package check` makes.
pub const SOURCE: &str = "muranopl";
/// The `source` of the extra diagnostics at the exact column of a YAQL
/// syntax error inside a string.
pub const YAQL_SOURCE: &str = "muranopl yaql";

/// The package in `dir` with `edited` (relative path to text) in place of
/// those files, loaded; `None` when it does not load.
pub fn load_edited(
    dir: &Path,
    edited: &BTreeMap<String, String>,
) -> Option<Arc<dyn PackageFormat>> {
    let files = (edited.iter())
        .map(|(k, v)| (k.clone(), v.clone().into_bytes()))
        .collect();
    let source = Source::Edited {
        dir: dir.to_path_buf(),
        files,
    };
    FormatRegistry::builtin().load_source(source).ok()
}

/// Checks the package in `dir` with `edited` (relative path to text) in
/// place of those files, its requirements found on `libs`, where the
/// packages of `unsaved` (other packages with the editor's unsaved
/// files) stand in for their saved copies.
pub fn analyse(
    dir: &Path,
    edited: BTreeMap<String, String>,
    (libs, unsaved): (&[PathBuf], &[Arc<dyn PackageFormat>]),
    jit: compiler::jit::Mode,
) -> Analysis {
    let files: BTreeMap<String, Vec<u8>> = (edited.iter())
        .map(|(k, v)| (k.clone(), v.clone().into_bytes()))
        .collect();
    let mut texts: HashMap<String, String> = (edited.into_iter())
        .map(|(rel, t)| (dir.join(rel).display().to_string(), t))
        .collect();
    let manifest = dir.join("manifest.yaml");
    let source = Source::Edited {
        dir: dir.to_path_buf(),
        files,
    };
    let opts = lint::check::CheckOptions {
        jit,
        messages: lint::diag::MessageFormat::Json,
        format: lint::LintFormat::Json,
        allow: Default::default(),
        deny_warnings: false,
    };
    let checked = FormatRegistry::builtin()
        .load_source(source)
        .map_err(|e| e.message().to_string())
        .and_then(|root| lint::check::check_and_lint_loaded(root, dir, libs, unsaved, &opts));
    let mut out = Analysis {
        executor: None,
        diagnostics: BTreeMap::new(),
    };
    let (diags, spans) = match checked {
        Ok(c) => {
            out.executor = c.report.compiled.as_ref().map(|(_, ex)| ex.clone());
            for (k, v) in c.texts {
                texts.entry(k).or_insert(v);
            }
            (c.diagnostics, c.spans)
        }
        Err(e) => {
            let mut d = lint::diag::Diagnostic::from_text("PackageLoadError", &e);
            if d.file.is_none() {
                d.file = Some(dir.display().to_string());
            }
            (vec![lint::lean(d)], vec![None])
        }
    };
    let mut reader = Texts { texts };
    for (d, span) in diags.iter().zip(spans) {
        // A diagnostic without a file, or naming the package folder, is
        // the manifest's.
        let file = d
            .file
            .as_deref()
            .map(PathBuf::from)
            .filter(|f| f.as_path() != dir)
            .unwrap_or_else(|| manifest.clone());
        let text = reader.get(&file);
        let lsp = to_lsp(d, text, span.clone());
        if d.kind == lint::Lint::UnparsableYaql.name() {
            if let Some(extra) = span.and_then(|s| yaql_error_at(text, s)) {
                out.diagnostics.entry(file.clone()).or_default().push(extra);
            }
        }
        out.diagnostics.entry(file).or_default().push(lsp);
    }
    out
}

/// The texts of files, read once.
struct Texts {
    texts: HashMap<String, String>,
}

impl Texts {
    fn get(&mut self, file: &Path) -> &str {
        let key = file.display().to_string();
        self.texts
            .entry(key)
            .or_insert_with(|| std::fs::read_to_string(file).unwrap_or_default())
    }
}

/// A `package check` diagnostic for an editor: where it is (its line and
/// column, to the end of its span or of the line), its kind as the code,
/// its help after the message and in `data`.
pub fn to_lsp(
    d: &lint::diag::Diagnostic,
    text: &str,
    span: Option<std::ops::Range<usize>>,
) -> Diagnostic {
    let starts = text::line_starts(text);
    let range = match d.line_col {
        Some((line, col)) => {
            let start = text::line_col_offset(text, line, col);
            let end = span
                .map(|s| s.end)
                .filter(|&e| e > start)
                .unwrap_or_else(|| text::line_end(text, start));
            text::range(text, &starts, start..end)
        }
        None => Range::new(Position::new(0, 0), Position::new(0, 0)),
    };
    let mut message = d.message.clone();
    if let Some(h) = &d.help {
        message.push_str("\nhelp: ");
        message.push_str(h);
    }
    Diagnostic {
        range,
        severity: Some(if d.warning {
            DiagnosticSeverity::WARNING
        } else {
            DiagnosticSeverity::ERROR
        }),
        code: Some(NumberOrString::String(d.kind.clone())),
        source: Some(SOURCE.into()),
        message,
        data: d.help.as_ref().map(|h| serde_json::json!({ "help": h })),
        ..Diagnostic::default()
    }
}

/// For an `unparsable-yaql` finding whose string is the rest of its line
/// (`span` in `text`): the parse error at its column in the string.
fn yaql_error_at(text: &str, span: std::ops::Range<usize>) -> Option<Diagnostic> {
    let src = text.get(span.clone())?;
    let opts = compiler::yaql::lexer::LexOptions {
        legacy: false,
        murano: true,
    };
    let e = compiler::yaql::parse(src, opts).err()?;
    let sp = e.span()?;
    let starts = text::line_starts(text);
    let start = span.start + (sp.start as usize).min(src.len());
    let end = (span.start + sp.end as usize).clamp(start, span.end);
    let end = if end == start {
        (start + 1).min(span.end)
    } else {
        end
    };
    Some(Diagnostic {
        range: text::range(text, &starts, start..end),
        severity: Some(DiagnosticSeverity::WARNING),
        code: Some(NumberOrString::String("yaql-syntax".into())),
        source: Some(YAQL_SOURCE.into()),
        message: e.message().to_string(),
        ..Diagnostic::default()
    })
}

/// The diagnostics of a standalone `.yaql` file: its syntax error, at its
/// column.
pub fn yaql_file(text: &str) -> Vec<Diagnostic> {
    let opts = compiler::yaql::lexer::LexOptions {
        legacy: false,
        murano: false,
    };
    let src = text.trim_end();
    if src.trim().is_empty() {
        return Vec::new();
    }
    let Err(e) = compiler::yaql::parse(src, opts) else {
        return Vec::new();
    };
    let starts = text::line_starts(text);
    let sp = e.span().map_or(0..src.len(), |s| {
        let start = (s.start as usize).min(src.len());
        start..(s.end as usize).clamp(start, src.len()).max(start + 1)
    });
    vec![Diagnostic {
        range: text::range(text, &starts, sp),
        severity: Some(DiagnosticSeverity::ERROR),
        code: Some(NumberOrString::String(e.kind().to_string())),
        source: Some(YAQL_SOURCE.into()),
        message: e.message().to_string(),
        ..Diagnostic::default()
    }]
}
