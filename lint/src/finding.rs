//! What a lint is and what it finds: the kinds of warning, a finding with
//! its place, and what the lints read.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use engine::Executor;
use package::PackageFormat;

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
