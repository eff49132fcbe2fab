//! The package-level lints: `Require` entries whose classes the package
//! never names, and classes of an application that nothing names.
//!
//! A class is named when its full name appears in a class file, a UI
//! definition or a resource of the package, or `alias:Name` (`Name` for
//! the `=` namespace) appears in a class file whose `Namespaces` map the
//! alias to the class's namespace. Text, not meaning: a mention in a
//! comment counts, which keeps both lints quiet when in doubt.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use package::Source;

use crate::finding::{Finding, Input, Lint};

/// Files of the package other than class files that may name classes.
const OTHER_DIRS: [&str; 2] = ["UI", "Resources"];

/// The largest file searched for names.
const MAX_TEXT: usize = 4 << 20;

/// The package-level lints; `raw` gets the paths of the files they name
/// whose names are not UTF-8 (by their display).
pub(super) fn lint_references(
    input: &Input<'_>,
    texts: &HashMap<String, String>,
    out: &mut Vec<Finding>,
    raw: &mut HashMap<String, PathBuf>,
) {
    let src = &input.root.base().source;
    let application = input.root.package_type() == "Application";
    let requires = (input.root.requirements().iter()).any(|(n, _)| n != "io.murano");
    if application || requires {
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
        let corpus = Corpus::new(input, texts, &other);
        unused_requires(&corpus, out);
        if application {
            unreferenced_classes(&corpus, out);
        }
    }
    unlisted_files(input, out, raw);
    if let Ok(Some(text)) = src.read_text("manifest.yaml") {
        unknown_manifest_keys(&src.display("manifest.yaml"), &text, out);
    }
}

/// The manifest keys murano reads.
pub const MANIFEST_KEYS: &[&str] = &[
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
fn unlisted_files(input: &Input<'_>, out: &mut Vec<Finding>, raw: &mut HashMap<String, PathBuf>) {
    let base = input.root.base();
    if base.manifest.classes.is_empty() {
        return;
    }
    let listed: HashSet<&str> = (base.manifest.classes.iter())
        .map(|(_, file)| file.as_str())
        .collect();
    let mut raw_names = None;
    for f in base.source.list("Classes") {
        let listed = listed.contains(f.as_str());
        if listed || !(f.ends_with(".yaml") || f.ends_with(".yml")) {
            continue;
        }
        let file = base.source.display(&format!("Classes/{f}"));
        // A name that is not UTF-8 is listed with U+FFFD for its bad
        // bytes: find its own.
        if let (true, Source::Dir(dir) | Source::Edited { dir, .. }) =
            (f.contains('\u{fffd}'), &base.source)
        {
            let classes = dir.join("Classes");
            let names = raw_names.get_or_insert_with(|| names_not_utf8(&classes));
            if let Some(p) = names.get(&f) {
                raw.insert(file.clone(), p.clone());
            }
        }
        out.push(Finding {
            lint: Lint::UnreferencedClass,
            message: format!(
                "Classes/{f} is not listed in the manifest's Classes: murano never loads it"
            ),
            file,
            span: 0..0,
            help: Some("list its class in the manifest, or remove the file".into()),
        });
    }
}

/// The files under `dir` whose names are not UTF-8, by the name
/// [`Source::list`] gives them (relative, U+FFFD for each bad byte).
fn names_not_utf8(dir: &Path) -> HashMap<String, PathBuf> {
    let mut out = HashMap::new();
    let mut seen = HashSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        if !d.canonicalize().is_ok_and(|real| seen.insert(real)) {
            continue;
        }
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let (None, Ok(rel)) = (e.file_name().to_str(), p.strip_prefix(dir)) {
                out.insert(rel.to_string_lossy().replace('\\', "/"), p.clone());
            }
        }
    }
    out
}

/// Where names are mentioned: every maximal name (letters, digits, `_`,
/// `.`) of each text and each of its prefixes that ends before a `.`
/// (`a.b.C.d` names `a.b.C`), and, in a class file, the full names its
/// aliases make (`res:Instance`, or `Instance` for the `=` namespace).
/// Built once, so that asking about every class of a big package costs a
/// lookup each, not a scan of every text.
struct Corpus<'a> {
    input: &'a Input<'a>,
    /// Class file name to text.
    texts: &'a HashMap<String, String>,
    /// Names as they are written, with the texts that write them.
    words: HashMap<&'a str, Seen>,
    /// Full names that aliases make, with the texts that make them.
    aliased: HashMap<String, Seen>,
    /// Class file name to its number in `words` and `aliased`.
    file_ids: HashMap<&'a str, usize>,
    /// Class file name to the number of classes it declares.
    decls_in: HashMap<&'a str, usize>,
    /// For each class file declaring several classes, how often each
    /// part of a name (split at `.` and `:` too) occurs in it.
    parts_in: HashMap<&'a str, HashMap<&'a str, usize>>,
}

/// The texts that mention a name: the first, and whether there are others.
#[derive(Clone, Copy)]
struct Seen {
    first: usize,
    more: bool,
}

impl Seen {
    /// Notes that text `id` mentions `key`.
    fn note<K: std::hash::Hash + Eq>(map: &mut HashMap<K, Seen>, key: K, id: usize) {
        map.entry(key)
            .and_modify(|s| s.more |= s.first != id)
            .or_insert(Seen {
                first: id,
                more: false,
            });
    }

    /// Whether a text other than `except` mentions the name.
    fn outside(&self, except: Option<usize>) -> bool {
        self.more || Some(self.first) != except
    }
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '.'
}

/// The maximal names of `text`, each with whether a `:` joins it to the
/// next one (`res:Instance`, not `res: Instance`).
fn names_of(text: &str) -> Vec<(&str, bool)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        match (is_name_char(c), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                let joined = text[i..].strip_prefix(':').and_then(|r| r.chars().next());
                out.push((&text[s..i], joined.is_some_and(is_name_char)));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((&text[s..], false));
    }
    out
}

/// `name` and each prefix of it that ends before a `.`.
fn dot_prefixes(name: &str) -> impl Iterator<Item = &str> {
    (name.match_indices('.').map(move |(i, _)| &name[..i])).chain(std::iter::once(name))
}

impl<'a> Corpus<'a> {
    fn new(input: &'a Input<'a>, texts: &'a HashMap<String, String>, other: &'a [String]) -> Self {
        let mut c = Corpus {
            input,
            texts,
            words: HashMap::new(),
            aliased: HashMap::new(),
            file_ids: HashMap::new(),
            decls_in: HashMap::new(),
            parts_in: HashMap::new(),
        };
        // The aliases each class file's classes give namespaces.
        let mut aliases: HashMap<&str, Vec<(&str, &str)>> = HashMap::new();
        if let Some(pkg) = input.executor.packages().first() {
            for d in pkg.decls.values() {
                let Some((file, _)) = texts.get_key_value(&*d.pos.file) else {
                    continue;
                };
                *c.decls_in.entry(file.as_str()).or_default() += 1;
                let list = aliases.entry(file.as_str()).or_default();
                for (alias, ns) in &d.namespaces {
                    if !list.contains(&(alias.as_str(), ns.as_str())) {
                        list.push((alias.as_str(), ns.as_str()));
                    }
                }
            }
        }
        for (id, (file, text)) in texts.iter().enumerate() {
            c.file_ids.insert(file.as_str(), id);
            if c.decls_in.get(file.as_str()).is_some_and(|&n| n > 1) {
                let mut parts: HashMap<&str, usize> = HashMap::new();
                for p in text.split(|ch: char| !(ch.is_alphanumeric() || ch == '_')) {
                    *parts.entry(p).or_default() += 1;
                }
                c.parts_in.insert(file.as_str(), parts);
            }
            c.add_text(
                id,
                text,
                aliases.get(file.as_str()).map_or(&[], Vec::as_slice),
            );
        }
        for (i, text) in other.iter().enumerate() {
            c.add_text(texts.len() + i, text, &[]);
        }
        c
    }

    /// Indexes the names text `id` mentions, with the aliases its classes
    /// declare (alias, namespace).
    fn add_text(&mut self, id: usize, text: &'a str, aliases: &[(&str, &str)]) {
        let names = names_of(text);
        for (name, _) in &names {
            for w in dot_prefixes(name) {
                Seen::note(&mut self.words, w, id);
            }
        }
        if aliases.is_empty() {
            return;
        }
        let mut made = HashSet::new();
        for (i, (name, colon)) in names.iter().enumerate() {
            // A short name is the first part of a name (`Name.x` names
            // `Name`), after `alias:` or, for the `=` namespace, alone.
            let first = |n: &str| n.split('.').next().unwrap_or("").to_string();
            for (alias, ns) in aliases {
                if *alias == "=" {
                    made.insert(format!("{ns}.{}", first(name)));
                } else if *colon && name == alias {
                    if let Some((next, _)) = names.get(i + 1) {
                        made.insert(format!("{ns}.{}", first(next)));
                    }
                }
            }
        }
        for w in made {
            Seen::note(&mut self.aliased, w, id);
        }
    }

    /// Whether class `class` is named anywhere but in class file `except`.
    fn names(&self, class: &str, except: Option<&str>) -> bool {
        let except = except.and_then(|f| self.file_ids.get(f).copied());
        let seen = |s: Option<&Seen>| s.is_some_and(|s| s.outside(except));
        seen(self.words.get(class)) || seen(self.aliased.get(class))
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
    let listed: HashSet<String> = root.classes().into_iter().collect();
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
/// may hold several): its short name is a part of a name there (`Name`,
/// `x.Name`, `ns:Name`) more than once (its own `Name:` line is one).
fn names_in_own_file(c: &Corpus<'_>, class: &str, file: &str) -> bool {
    let short = class.rsplit('.').next().unwrap_or(class);
    (c.parts_in.get(file)).is_some_and(|parts| parts.get(short).is_some_and(|&n| n > 1))
}

#[cfg(test)]
mod tests {
    use super::{dot_prefixes, names_of};

    /// Whether `text` mentions `word` as the index records it.
    fn mentions(text: &str, word: &str) -> bool {
        names_of(text)
            .iter()
            .any(|(n, _)| dot_prefixes(n).any(|p| p == word))
    }

    #[test]
    fn names_match_whole_words() {
        assert!(mentions("Extends: com.ex.Base\n", "com.ex.Base"));
        assert!(!mentions("com.ex.BaseTwo", "com.ex.Base"));
        assert!(!mentions("org.com.ex.Base", "com.ex.Base"));
        assert!(mentions("type: com.ex.Base.\n", "com.ex.Base"));
        assert!(mentions("x: com.ex.Base.method()", "com.ex.Base"));
        assert_eq!(
            names_of("new(res:Instance, x)"),
            [
                ("new", false),
                ("res", true),
                ("Instance", false),
                ("x", false)
            ]
        );
    }
}
