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
mod finding;
mod refs;
mod report;
pub mod tier;

use std::collections::{HashMap, HashSet};

pub use finding::{line_starts, Finding, Input, Lint};
pub use refs::MANIFEST_KEYS;
pub use report::{
    for_terminal, lean, render_sarif, text_for_terminal, uri_of, Collected, LintFormat, RawPaths,
};

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
