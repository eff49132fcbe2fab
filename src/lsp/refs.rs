//! Find references and rename: each occurrence of the name in the class
//! files of the document's package, of the files declaring the target
//! (a library's) and of the other packages the server checked (those
//! using a library), whose meaning (see [`Here::target`]) is the same
//! class, property or method as the one under the cursor, the
//! declaration included; a `$variable`'s occurrences in its method.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use compiler::murano::ClassDecl;
use engine::Executor;

use super::navigate::{Here, Target};
use super::text;

/// What a target is, to compare occurrences with.
#[derive(PartialEq, Eq)]
enum Key {
    Class(String),
    Property(String, String),
    Method(BTreeSet<(String, String)>),
}

fn key(t: &Target) -> Option<Key> {
    match t {
        Target::Class(d) => Some(Key::Class(d.name.clone())),
        Target::Property(d, i) => {
            Some(Key::Property(d.name.clone(), d.properties[*i].name.clone()))
        }
        Target::Method(ms) => Some(Key::Method(
            ms.iter()
                .map(|(d, i)| (d.name.clone(), d.methods[*i].name.clone()))
                .collect(),
        )),
        _ => None,
    }
}

/// True when an occurrence meaning `other` refers to `want`: the same
/// class or property, or a method call some of whose candidates is one
/// of `want`'s.
fn same(want: &Key, other: &Key) -> bool {
    match (want, other) {
        (Key::Method(a), Key::Method(b)) => a.intersection(b).next().is_some(),
        _ => want == other,
    }
}

/// One occurrence: the file and the byte span of the name in its text.
pub struct Occurrence {
    /// The file.
    pub file: PathBuf,
    /// The span of the name.
    pub span: Range<usize>,
    /// The file's text (the editor's when open).
    pub text: String,
}

/// The name the target at `at` has, and whether it may be renamed (a
/// property or method: classes are named in manifests and UI too).
pub fn name_at(here: &Here<'_>, at: usize) -> Option<(String, bool)> {
    let (t, span) = here.target(at)?;
    let renamable = matches!(t, Target::Property(..) | Target::Method(..));
    key(&t)?;
    Some((here.text[span].to_string(), renamable))
}

/// The folder of the package declaring the class, property or method
/// at `at`, when its file is known.
pub fn declaring_dir(here: &Here<'_>, at: usize) -> Option<PathBuf> {
    let (t, _) = here.target(at)?;
    let d = match &t {
        Target::Class(d) | Target::Property(d, _) => d,
        Target::Method(ms) => &ms.first()?.0,
        _ => return None,
    };
    super::text::package_dir(Path::new(&*d.pos.file))
}

/// The occurrences of the target at `at` in the class files of the
/// package (`read` gives a file's text: the editor's or the saved one).
pub fn references(
    here: &Here<'_>,
    at: usize,
    read: &dyn Fn(&Path) -> Option<String>,
    others: &[&Arc<Executor>],
) -> Vec<Occurrence> {
    let Some((target, span)) = here.target(at) else {
        return Vec::new();
    };
    if let Target::Variable(name) = &target {
        return (variable_spans(here, name, at).into_iter())
            .map(|span| Occurrence {
                file: here.file.to_path_buf(),
                span,
                text: here.text.to_string(),
            })
            .collect();
    }
    let Some(want) = key(&target) else {
        return Vec::new();
    };
    let name = here.text[span.clone()].to_string();
    // The last part of a type name is what occurrences are found by.
    let word = name.rsplit([':', '.']).next().unwrap_or(&name).to_string();
    let Some(ex) = here.ex else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (file, ex) in files_to_search(ex, &target, others) {
        let Some(text) = read(&file) else {
            continue;
        };
        let there = Here {
            text: &text,
            file: &file,
            ex: Some(ex),
        };
        let mut spans = Vec::new();
        for (i, _) in text.match_indices(word.as_str()) {
            let Some((w, s)) = text::word_at(&text, i) else {
                continue;
            };
            if w != word || s.start != i {
                continue;
            }
            let Some((t, tspan)) = there.target(i) else {
                continue;
            };
            if key(&t).is_some_and(|k| same(&want, &k)) {
                spans.push(if matches!(t, Target::Class(_)) {
                    tspan
                } else {
                    s
                });
            }
        }
        spans.dedup_by(|a, b| a.start == b.start);
        out.extend(spans.into_iter().map(|span| Occurrence {
            file: file.clone(),
            span,
            text: text.clone(),
        }));
    }
    out
}

/// The class files where occurrences of `target` are looked for, each
/// with the executor whose catalogue reads it: those of the package
/// checked by `ex`, the files declaring the target (a library's, for a
/// method called from this package), and the files of the packages the
/// other executors checked (`others`: packages that use a library see its
/// classes and methods too). An occurrence counts only when it means the
/// same class, property or method.
fn files_to_search<'e>(
    ex: &'e Arc<Executor>,
    target: &Target,
    others: &[&'e Arc<Executor>],
) -> BTreeMap<PathBuf, &'e Arc<Executor>> {
    let mut files: BTreeMap<PathBuf, &Arc<Executor>> = BTreeMap::new();
    let own = |ex: &Arc<Executor>| -> Vec<PathBuf> {
        (ex.packages().first().into_iter())
            .flat_map(|p| p.decls.values())
            .map(|d| PathBuf::from(&*d.pos.file))
            .collect()
    };
    for f in own(ex) {
        files.entry(f).or_insert(ex);
    }
    let declared: Vec<&Arc<ClassDecl>> = match target {
        Target::Class(d) | Target::Property(d, _) => vec![d],
        Target::Method(ms) => ms.iter().map(|(d, _)| d).collect(),
        _ => Vec::new(),
    };
    for d in declared {
        let f = PathBuf::from(&*d.pos.file);
        if f.is_absolute() {
            files.entry(f).or_insert(ex);
        }
    }
    for other in others.iter().filter(|o| !Arc::ptr_eq(o, ex)) {
        for f in own(other) {
            files.entry(f).or_insert(other);
        }
    }
    files
}

/// Where variable `name` occurs in the method around `at` (a variable is
/// the method's own): each `$name`, a `For:`/`As:` binding of it and the
/// argument of that name, by the span of the name.
fn variable_spans(here: &Here<'_>, name: &str, at: usize) -> Vec<Range<usize>> {
    let Some((c, i)) = here.method_at(at) else {
        return Vec::new();
    };
    let m = &c.methods[i];
    let from = (m.pos.offset as usize).min(here.text.len());
    // The method ends where the next one in the file starts.
    let to = (c.methods.iter())
        .map(|m| m.pos.offset as usize)
        .filter(|&o| o > from)
        .min()
        .unwrap_or(here.text.len())
        .min(here.text.len());
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut out: Vec<Range<usize>> = (m.arguments.iter())
        .filter(|a| a.name == name)
        .map(|a| a.pos.offset as usize..a.pos.offset as usize + name.len())
        .collect();
    for (k, _) in here.text[from..to].match_indices(name) {
        let (start, end) = (from + k, from + k + name.len());
        let before = &here.text[..start];
        if here.text[end..].chars().next().is_some_and(ident) {
            continue;
        }
        if before.ends_with('$') || before.ends_with("For: ") || before.ends_with("As: ") {
            out.push(start..end);
        }
    }
    out.sort_by_key(|r| r.start);
    out.dedup_by_key(|r| r.start);
    out
}
