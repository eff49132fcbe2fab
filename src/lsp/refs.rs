//! Find references and rename, within the package of the document: each
//! occurrence of the name in the package's class files whose meaning
//! (see [`Here::target`]) is the same class, property or method as the
//! one under the cursor, the declaration included; a `$variable`'s
//! occurrences in its method.

use std::collections::BTreeSet;
use std::ops::Range;
use std::path::{Path, PathBuf};

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

/// The occurrences of the target at `at` in the class files of the
/// package (`read` gives a file's text: the editor's or the saved one).
pub fn references(
    here: &Here<'_>,
    at: usize,
    read: &dyn Fn(&Path) -> Option<String>,
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
    let files: BTreeSet<PathBuf> = (ex.packages().first().into_iter())
        .flat_map(|p| p.decls.values())
        .map(|d| PathBuf::from(&*d.pos.file))
        .collect();
    let mut out = Vec::new();
    for file in files {
        let Some(text) = read(&file) else {
            continue;
        };
        let there = Here {
            text: &text,
            file: &file,
            ex: here.ex,
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
