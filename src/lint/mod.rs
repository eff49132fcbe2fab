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
mod refs;
mod report;

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::sync::Arc;

use engine::Executor;
use package::PackageFormat;

pub use report::{for_terminal, render_sarif, text_for_terminal, uri_of, LintFormat, RawPaths};

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
    /// The finding as a diagnostic with its snippet (the file's text from
    /// `texts`, which holds every class file the lints read); for a
    /// terminal (see [`for_terminal`]) when `terminal`.
    pub fn diagnostic(
        &self,
        texts: &HashMap<String, String>,
        terminal: bool,
    ) -> crate::diag::Diagnostic {
        let d = crate::diag::Diagnostic::error(self.lint.name(), &self.message);
        let text = texts.get(&self.file);
        let mut d = match text {
            Some(t) => d.at_span(&self.file, t, self.span.clone()),
            None => d.at(&self.file, 1, 1),
        };
        d.help = self.help.clone();
        let d = d.as_warning();
        match (terminal, text) {
            (false, _) => d,
            (true, Some(t)) => for_terminal(d, Some((t, self.span.clone()))),
            (true, None) => text_for_terminal(d),
        }
    }
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
            if let Some(text) = texts.get(&*decl.pos.file) {
                body::decl_warnings(decl, text, &mut findings);
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
