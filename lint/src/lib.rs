//! `muranopl package check`'s lints: what murano accepts at load but a
//! package author wants to hear about, each a warning at its position.
//!
//! | lint | what |
//! | --- | --- |
//! | `unparsable-yaql` | a string that looks like YAQL (`$x`, `f(...)`) but does not parse, so murano keeps it as a string |
//! | `unknown-key` | a key murano ignores: at the top of the manifest, or in a class, property, method or argument declaration (a statement with an unknown key is an error: murano rejects it) |
//! | `undefined-variable` | a `$name` no path through the method assigns before it is read (murano reads it as null) |
//! | `unknown-method` | a call of a method the class of `$this` (or, on another receiver, any class loaded) does not declare and no function has |
//! | `unknown-property` | `$.name` / `$this.name` of a property the class and its parents do not declare |
//! | `default-violates-contract` | a constant `Default` its own `Contract` rejects |
//! | `unreachable-code` | statements after `Return`, `Throw`, `Rethrow`, `Break` or `Continue` |
//! | `unused-require` | a `Require` entry whose classes the package never names |
//! | `unreferenced-class` | a class of an application package that nothing names: not the package, its UI, nor another class; and a class file the manifest does not list (murano never loads it) |
//!
//! The lints read the declarations and lowered bodies only; nothing runs,
//! except contract checks of constant defaults.

mod body;
pub mod check;
pub mod diag;
mod refs;
mod report;

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::sync::Arc;

use engine::Executor;

use crate::diag::Diagnostic;
use package::PackageFormat;

pub use report::{
    for_terminal, lean, render_sarif, text_for_terminal, uri_of, Collected, LintFormat, RawPaths,
};

/// A lint: a kind of warning.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Lint {
    /// A YAQL-looking string that does not parse.
    UnparsableYaql,
    /// A key murano ignores.
    UnknownKey,
    /// A variable read before any assignment.
    UndefinedVariable,
    /// A call nothing declares.
    UnknownMethod,
    /// A property the class does not declare.
    UnknownProperty,
    /// A constant default its contract rejects.
    DefaultViolatesContract,
    /// Statements that never run.
    UnreachableCode,
    /// A requirement never used.
    UnusedRequire,
    /// A class nothing names.
    UnreferencedClass,
}

impl Lint {
    /// Every lint, in the order reports list them.
    pub const ALL: [Lint; 9] = [
        Lint::UnparsableYaql,
        Lint::UnknownKey,
        Lint::UndefinedVariable,
        Lint::UnknownMethod,
        Lint::UnknownProperty,
        Lint::DefaultViolatesContract,
        Lint::UnreachableCode,
        Lint::UnusedRequire,
        Lint::UnreferencedClass,
    ];

    /// The name diagnostics show (`warning[unknown-method]`).
    pub fn name(self) -> &'static str {
        match self {
            Lint::UnparsableYaql => "unparsable-yaql",
            Lint::UnknownKey => "unknown-key",
            Lint::UndefinedVariable => "undefined-variable",
            Lint::UnknownMethod => "unknown-method",
            Lint::UnknownProperty => "unknown-property",
            Lint::DefaultViolatesContract => "default-violates-contract",
            Lint::UnreachableCode => "unreachable-code",
            Lint::UnusedRequire => "unused-require",
            Lint::UnreferencedClass => "unreferenced-class",
        }
    }

    /// The lint named `name`.
    pub fn from_name(name: &str) -> Option<Lint> {
        Lint::ALL.into_iter().find(|l| l.name() == name)
    }

    /// One sentence on what it finds (SARIF's rule description).
    pub fn description(self) -> &'static str {
        match self {
            Lint::UnparsableYaql => {
                "A string looks like a YAQL expression but does not parse, so it stays a string."
            }
            Lint::UnknownKey => "A key that murano ignores.",
            Lint::UndefinedVariable => {
                "A variable is read where no path through the method has assigned it."
            }
            Lint::UnknownMethod => "A method or function that no class in scope declares.",
            Lint::UnknownProperty => "A property that the class and its parents do not declare.",
            Lint::DefaultViolatesContract => "A constant default that its own contract rejects.",
            Lint::UnreachableCode => "Statements after Return, Throw, Break or Continue.",
            Lint::UnusedRequire => "A required package whose classes the package never names.",
            Lint::UnreferencedClass => "A class of an application package that nothing names.",
        }
    }
}

impl std::fmt::Display for Lint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One warning.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    /// Which lint.
    pub lint: Lint,
    /// What is wrong.
    pub message: String,
    /// The file, as positions name it.
    pub file: String,
    /// The byte range in the file.
    pub span: Range<usize>,
    /// A suggestion.
    pub help: Option<String>,
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
        let (lines, span) = match report::escape_snippet(lines, span.clone()) {
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

/// The offsets of the starts of the lines of `text`.
pub fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect()
}

/// What the lints look at: a package that loaded, with the executor its
/// classes were compiled by.
pub struct Input<'a> {
    /// The package.
    pub root: &'a dyn PackageFormat,
    /// Its classes that compiled (others were reported as errors).
    pub classes: &'a [String],
    /// The executor holding the package and its requirements.
    pub executor: &'a Arc<Executor>,
    /// Class files already read, by name (others are read as needed).
    pub texts: &'a HashMap<String, String>,
}

/// The lints' findings, sorted by file and position, and the class files'
/// texts (for snippets).
pub struct Lints {
    /// The findings.
    pub findings: Vec<Finding>,
    /// File name to text, for every class file read.
    pub texts: HashMap<String, String>,
    /// The paths of files findings name whose names are not UTF-8, by
    /// their display (which shows U+FFFD for the bad bytes).
    pub raw_files: HashMap<String, std::path::PathBuf>,
}

impl Lints {
    /// The number of findings of each lint, in [`Lint::ALL`] order, zeros
    /// left out.
    pub fn counts(&self) -> Vec<(Lint, usize)> {
        Lint::ALL
            .into_iter()
            .map(|l| (l, self.findings.iter().filter(|f| f.lint == l).count()))
            .filter(|(_, n)| *n > 0)
            .collect()
    }
}

/// Runs every lint over `input`, leaving out those in `allow`.
pub fn lint(input: &Input<'_>, allow: &HashSet<Lint>) -> Lints {
    let mut texts = HashMap::new();
    // The starts of the lines of files with ignored keys, found once.
    let mut starts: HashMap<String, Vec<usize>> = HashMap::new();
    let mut findings = Vec::new();
    if let Some(pkg) = input.executor.packages().first() {
        for (name, decl) in &pkg.decls {
            // A file holding several classes is read once.
            if !texts.contains_key(&*decl.pos.file) {
                if let Some((file, text)) = input.texts.get_key_value(&*decl.pos.file) {
                    texts.insert(file.clone(), text.clone());
                } else if let Ok(src) = input.root.get_class(name) {
                    texts.entry(src.file).or_insert(src.text);
                }
            }
            if let Some(text) = texts
                .get(&*decl.pos.file)
                .filter(|_| !decl.warnings.is_empty())
            {
                let starts =
                    (starts.entry(decl.pos.file.to_string())).or_insert_with(|| line_starts(text));
                body::decl_warnings(decl, text, starts, &mut findings);
            }
        }
    }
    let names = body::Names::new(input.executor);
    for c in input.classes {
        if let Ok(class) = input.executor.class(c) {
            body::lint_class(&class, &names, &texts, input.executor, &mut findings);
        }
    }
    let mut raw_files = HashMap::new();
    refs::lint_references(input, &texts, &mut findings, &mut raw_files);
    let source = &input.root.base().source;
    if let Ok(Some(manifest)) = source.read_text("manifest.yaml") {
        texts.insert(source.display("manifest.yaml"), manifest);
    }
    findings.retain(|f| !allow.contains(&f.lint));
    findings.sort_by(|a, b| (&a.file, a.span.start, a.lint).cmp(&(&b.file, b.span.start, b.lint)));
    findings.dedup();
    Lints {
        findings,
        texts,
        raw_files,
    }
}
