//! The package-level lints: `Require` entries whose classes the package
//! never names, and classes of an application that nothing names.
//!
//! A class is named when its full name appears in a class file, a UI
//! definition or a resource of the package, or `alias:Name` (`Name` for
//! the `=` namespace) appears in a class file whose `Namespaces` map the
//! alias to the class's namespace. Text, not meaning: a mention in a
//! comment counts, which keeps both lints quiet when in doubt.

use std::collections::HashMap;

use super::{Finding, Input, Lint};

/// Files of the package other than class files that may name classes.
const OTHER_DIRS: [&str; 2] = ["UI", "Resources"];

/// The largest file searched for names.
const MAX_TEXT: usize = 4 << 20;

pub(super) fn lint_references(
    input: &Input<'_>,
    texts: &HashMap<String, String>,
    out: &mut Vec<Finding>,
) {
    let src = &input.root.base().source;
    let mut other = Vec::new();
    for dir in OTHER_DIRS {
        for f in src.list(dir) {
            if let Ok(Some(t)) = src.read_text(&format!("{dir}/{f}")) {
                if t.len() <= MAX_TEXT {
                    other.push(t);
                }
            }
        }
    }
    let corpus = Corpus {
        input,
        texts,
        other,
    };
    unused_requires(&corpus, out);
    if input.root.package_type() == "Application" {
        unreferenced_classes(&corpus, out);
    }
    unlisted_files(input, out);
    if let Ok(Some(text)) = src.read_text("manifest.yaml") {
        unknown_manifest_keys(&src.display("manifest.yaml"), &text, out);
    }
}

/// The manifest keys murano reads.
const MANIFEST_KEYS: &[&str] = &[
    "Format",
    "Type",
    "FullName",
    "Name",
    "Version",
    "Description",
    "Author",
    "Supplier",
    "Tags",
    "Classes",
    "Require",
    "Logo",
    "UI",
    "Meta",
];

/// Top-level manifest keys murano does not read.
fn unknown_manifest_keys(file: &str, text: &str, out: &mut Vec<Finding>) {
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let key = line
            .split_once(':')
            .map(|(k, _)| k)
            .filter(|k| k.starts_with(|c: char| c.is_ascii_alphabetic()))
            .filter(|k| k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
        if let Some(key) = key.filter(|k| !MANIFEST_KEYS.contains(k)) {
            out.push(Finding {
                lint: Lint::UnknownKey,
                message: format!("unknown key \"{key}\" in the manifest is ignored"),
                file: file.to_string(),
                span: at..at + key.len(),
                help: crate::diag::closest(key, MANIFEST_KEYS.iter().copied())
                    .map(|k| format!("did you mean `{k}`?")),
            });
        }
        at += line.len();
    }
}

/// Class files the manifest does not list: murano never reads them.
fn unlisted_files(input: &Input<'_>, out: &mut Vec<Finding>) {
    let base = input.root.base();
    if base.manifest.classes.is_empty() {
        return;
    }
    for f in base.source.list("Classes") {
        let listed = base.manifest.classes.iter().any(|(_, file)| *file == f);
        if listed || !(f.ends_with(".yaml") || f.ends_with(".yml")) {
            continue;
        }
        out.push(Finding {
            lint: Lint::UnreferencedClass,
            message: format!(
                "Classes/{f} is not listed in the manifest's Classes: murano never loads it"
            ),
            file: base.source.display(&format!("Classes/{f}")),
            span: 0..0,
            help: Some("list its class in the manifest, or remove the file".into()),
        });
    }
}

struct Corpus<'a> {
    input: &'a Input<'a>,
    /// Class file name to text.
    texts: &'a HashMap<String, String>,
    /// UI and resource texts.
    other: Vec<String>,
}

impl Corpus<'_> {
    /// Whether class `class` is named anywhere but in file `except`.
    fn names(&self, class: &str, except: Option<&str>) -> bool {
        let (ns, short) = class.rsplit_once('.').unwrap_or(("", class));
        if self.other.iter().any(|t| contains_word(t, class)) {
            return true;
        }
        let root_pkg = self.input.executor.packages().first().cloned();
        self.texts.iter().any(|(file, text)| {
            if Some(file.as_str()) == except {
                return false;
            }
            if contains_word(text, class) {
                return true;
            }
            // The aliases the classes of this file give the namespace.
            let Some(pkg) = &root_pkg else { return false };
            pkg.decls
                .values()
                .filter(|d| &*d.pos.file == file.as_str())
                .flat_map(|d| d.namespaces.iter())
                .filter(|(_, n)| n == ns)
                .any(|(alias, _)| {
                    if alias == "=" {
                        contains_word(text, short)
                    } else {
                        contains_word(text, &format!("{alias}:{short}"))
                    }
                })
        })
    }
}

fn unused_requires(c: &Corpus<'_>, out: &mut Vec<Finding>) {
    let root = c.input.root;
    let manifest_file = root.base().source.display("manifest.yaml");
    let manifest = root
        .base()
        .source
        .read_text("manifest.yaml")
        .ok()
        .flatten()
        .unwrap_or_default();
    for (name, _) in root.requirements() {
        if name == "io.murano" {
            continue;
        }
        let Some(pkg) = c
            .input
            .executor
            .packages()
            .iter()
            .find(|p| &*p.name == name.as_str())
        else {
            continue;
        };
        if pkg.decls.is_empty() || pkg.decls.keys().any(|k| c.names(k, None)) {
            continue;
        }
        let span = manifest
            .find(&format!("{name}:"))
            .map_or(0..0, |i| i..i + name.len());
        out.push(Finding {
            lint: Lint::UnusedRequire,
            message: format!(
                "the package requires `{name}` but names none of its {} classes",
                pkg.decls.len()
            ),
            file: manifest_file.clone(),
            span,
            help: Some("remove the entry, unless the package needs it for another reason".into()),
        });
    }
}

fn unreferenced_classes(c: &Corpus<'_>, out: &mut Vec<Finding>) {
    let root = c.input.root;
    // A class the manifest does not list was warned about already.
    let listed = root.classes();
    for class in c.input.classes {
        if class == root.full_name() || !listed.contains(class) {
            continue;
        }
        let Ok(k) = c.input.executor.class(class) else {
            continue;
        };
        // Test fixtures are run by `muranopl test`, not named.
        if k.is_a("io.murano.test.TestFixture") {
            continue;
        }
        let file = k.decl.pos.file.to_string();
        if c.names(class, Some(&file)) || names_in_own_file(c, class, &file) {
            continue;
        }
        // At its `Name:` entry.
        let at = k.decl.pos.offset as usize;
        let at = c
            .texts
            .get(&file)
            .and_then(|t| t.get(at..)?.find("Name:").map(|i| at + i))
            .unwrap_or(at);
        out.push(Finding {
            lint: Lint::UnreferencedClass,
            message: format!(
                "class `{class}` is not named by the package's UI, resources or other classes"
            ),
            file,
            span: at..at + "Name:".len(),
            help: Some("an application's classes are reached from its main class or UI; remove it or use it".into()),
        });
    }
}

/// Whether another class declared in the same file names `class` (a file
/// may hold several).
fn names_in_own_file(c: &Corpus<'_>, class: &str, file: &str) -> bool {
    let short = class.rsplit('.').next().unwrap_or(class);
    let Some(text) = c.texts.get(file) else {
        return false;
    };
    let Some(pkg) = c.input.executor.packages().first() else {
        return false;
    };
    let others = pkg
        .decls
        .values()
        .filter(|d| &*d.pos.file == file && d.name != class)
        .count();
    // Its own `Name:` line is one mention; a second is a use.
    others > 0 && text.matches(short).count() > 1
}

/// Whether `word` occurs in `text` not inside a longer name.
fn contains_word(text: &str, word: &str) -> bool {
    let is_name = |c: char| c.is_alphanumeric() || c == '_' || c == '.';
    text.match_indices(word).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        !before.is_some_and(is_name) && !after.is_some_and(|c| is_name(c) && c != '.')
    })
}

#[cfg(test)]
mod tests {
    use super::contains_word;

    #[test]
    fn names_match_whole_words() {
        assert!(contains_word("Extends: com.ex.Base\n", "com.ex.Base"));
        assert!(contains_word("new(res:Instance, x)", "res:Instance"));
        assert!(!contains_word("com.ex.BaseTwo", "com.ex.Base"));
        assert!(!contains_word("org.com.ex.Base", "com.ex.Base"));
        assert!(contains_word("type: com.ex.Base.\n", "com.ex.Base"));
    }
}
