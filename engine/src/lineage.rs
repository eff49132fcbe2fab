//! A class's lineage when its ancestors come from several versions of one
//! package: murano's parent remapping (one version where the requirements
//! allow it), the method resolution order over the remapped parents, and
//! the version conflicts left when they do not.
//!
//! As murano/dsl/murano_type.py `MuranoClass._build_parent_remappings`
//! and `_remap_package`: every requirement met on the way from a class to
//! its ancestors (a class's package's `Require` on its parent's package,
//! murano/dsl/murano_package.py `requirements`) is gathered per package;
//! a version some requirement on the same package accepts a higher loaded
//! version for is replaced by that version, for this class's view of its
//! ancestors only (`parents(origin)`). What no requirement reconciles
//! stays: the class then has the same class in two versions among its
//! ancestors, and the members they both declare are ambiguous
//! (`_choose_symbol`: `AmbiguousMethodName`, `AmbiguousPropertyNameError`
//! when an object of it sets the property in `MuranoObject.set_property`,
//! murano/dsl/murano_object.py).

use std::collections::HashSet;
use std::sync::Arc;

use runtime::Result;

use crate::class::{parents_of, Class, VersionConflict};
use crate::package::Package;
use crate::version::{parse_version, VersionSpec};

/// True when `a` and `b` are the same package version.
fn same(a: &Package, b: &Package) -> bool {
    a.name == b.name && a.version == b.version
}

/// The spec package `from` requires package `to` with: its `Require`
/// entry, or (murano's implicit requirements) `==major` of its own
/// version for its own package's other versions; `None` when it names no
/// spec for it.
fn requirement(from: &Package, to: &Package) -> Option<VersionSpec> {
    if let Some((_, s)) = from.requires.iter().find(|(n, _)| **n == *to.name) {
        return Some(s.clone());
    }
    if from.name == to.name {
        let v = parse_version(&from.version).ok()?;
        return VersionSpec::parse(Some(&format!("=={}", v.major))).ok();
    }
    None
}

/// murano's `_build_parent_remappings`: for the class of package `pkg`
/// with declared parents `parents`, the ancestors to replace (by key) and
/// the package version each one's class is taken from instead; `class_in`
/// builds the class of a name in a package.
pub(crate) fn remappings(
    pkg: &Arc<Package>,
    own_key: &str,
    parents: &[Arc<Class>],
    class_in: &mut dyn FnMut(&str, &Package) -> Result<Option<Arc<Class>>>,
) -> Result<Vec<(Arc<str>, Arc<Class>)>> {
    // Within one package no other version of anything is met: nothing to
    // remap (a long chain of classes must not walk its ancestry again for
    // each class).
    let one_package = parents
        .iter()
        .all(|p| same(&p.package, pkg) && p.ancestors.iter().all(|a| same(&a.package, pkg)));
    if one_package {
        return Ok(Vec::new());
    }
    // Package name -> (package version, requirement on it).
    let mut aggregation: Vec<(Arc<str>, Vec<(Arc<Package>, VersionSpec)>)> = Vec::new();
    let mut add = |p: &Arc<Package>, s: VersionSpec| {
        let i = match aggregation.iter().position(|(n, _)| *n == p.name) {
            Some(i) => i,
            None => {
                aggregation.push((p.name.clone(), Vec::new()));
                aggregation.len() - 1
            }
        };
        let list = &mut aggregation[i].1;
        if !list.iter().any(|(q, t)| same(q, p) && *t == s) {
            list.push((p.clone(), s));
        }
    };
    if let Ok(own) = VersionSpec::parse(Some(&format!("=={}", pkg.version))) {
        add(pkg, own);
    }
    let mut seen: HashSet<(Arc<str>, Arc<str>)> = HashSet::new();
    let mut queue: std::collections::VecDeque<(Arc<str>, Arc<Package>, Arc<Class>)> = parents
        .iter()
        .map(|p| (Arc::from(own_key), pkg.clone(), p.clone()))
        .collect();
    let mut all: Vec<Arc<Class>> = Vec::new();
    let mut in_all: HashSet<Arc<str>> = HashSet::new();
    while let Some((child, child_pkg, parent)) = queue.pop_front() {
        if !seen.insert((child, parent.key.clone())) {
            continue;
        }
        if in_all.insert(parent.key.clone()) {
            all.push(parent.clone());
        }
        if !same(&child_pkg, &parent.package) {
            if let Some(s) = requirement(&child_pkg, &parent.package) {
                add(&parent.package, s);
            }
        }
        for anc in &parent.parents {
            queue.push_back((parent.key.clone(), parent.package.clone(), anc.clone()));
        }
    }
    let mut bindings: Vec<(Arc<Package>, Arc<Package>)> = Vec::new();
    for (_, versions) in aggregation {
        bindings.extend(remap_package(versions));
    }
    let mut out = Vec::new();
    for c in all {
        let Some((_, to)) = bindings.iter().find(|(from, _)| same(from, &c.package)) else {
            continue;
        };
        if same(to, &c.package) {
            continue;
        }
        if let Some(c2) = class_in(&c.name, to)? {
            out.push((c.key.clone(), c2));
        }
    }
    Ok(out)
}

/// murano's `_remap_package`: over the versions of one package met with
/// the requirements on them, lowest first, each is bound to the highest
/// other version its requirement accepts (and what was bound to it
/// follows).
fn remap_package(versions: Vec<(Arc<Package>, VersionSpec)>) -> Vec<(Arc<Package>, Arc<Package>)> {
    let ver = |p: &Package| parse_version(&p.version).ok();
    let mut list = versions;
    list.sort_by_key(|(p, _)| ver(p));
    let mut result: Vec<(Arc<Package>, Arc<Package>)> = Vec::new();
    let mut reverse: Vec<(Arc<Package>, Vec<Arc<Package>>)> = Vec::new();
    let mut i = 0;
    while i < list.len() {
        let (p1, req1) = list[i].clone();
        let mut dst: Option<Arc<Package>> = None;
        for (j, (p2, _)) in list.iter().enumerate() {
            if i == j {
                continue;
            }
            let accepted = ver(p2).is_some_and(|v| req1.matches(&v));
            if accepted && dst.as_ref().is_none_or(|d| ver(d) < ver(p2)) {
                dst = Some(p2.clone());
            }
        }
        let Some(dst) = dst else {
            i += 1;
            continue;
        };
        let bind = |result: &mut Vec<(Arc<Package>, Arc<Package>)>, from: &Arc<Package>| {
            result.retain(|(f, _)| !same(f, from));
            result.push((from.clone(), dst.clone()));
        };
        bind(&mut result, &p1);
        let followers = reverse
            .iter()
            .find(|(d, _)| same(d, &p1))
            .map(|(_, v)| v.clone())
            .unwrap_or_default();
        for f in &followers {
            bind(&mut result, f);
        }
        match reverse.iter_mut().find(|(d, _)| same(d, &dst)) {
            Some((_, v)) => v.push(p1.clone()),
            None => reverse.push((dst.clone(), vec![p1.clone()])),
        }
        list.remove(i);
    }
    result
}

/// The ancestors of a class with parents `parents` under `remap`, in
/// method resolution order (C3); `None` when they cannot be linearized.
pub(crate) fn linearize(
    parents: &[&Arc<Class>],
    remap: &[(Arc<str>, Arc<Class>)],
) -> Option<Vec<Arc<Class>>> {
    let mut seqs: Vec<Vec<Arc<Class>>> = Vec::new();
    for p in parents {
        let mut v = vec![(*p).clone()];
        if remap.is_empty() {
            v.extend(p.ancestors.iter().cloned());
        } else {
            v.extend(linearize(&parents_of(p, remap), remap)?);
        }
        seqs.push(v);
    }
    if let [one] = seqs.as_slice() {
        return Some(one.clone());
    }
    seqs.push(parents.iter().map(|p| (*p).clone()).collect());
    c3(seqs)
}

/// The C3 merge of `seqs` (classes compared by key: two versions of one
/// class are two classes).
fn c3(mut seqs: Vec<Vec<Arc<Class>>>) -> Option<Vec<Arc<Class>>> {
    let mut out: Vec<Arc<Class>> = Vec::new();
    loop {
        seqs.retain(|s| !s.is_empty());
        if seqs.is_empty() {
            return Some(out);
        }
        let cand = seqs.iter().find_map(|s| {
            let h = &s[0];
            let in_tail = seqs.iter().any(|t| t[1..].iter().any(|x| x.key == h.key));
            (!in_tail).then(|| h.clone())
        })?;
        for s in seqs.iter_mut() {
            if s[0].key == cand.key {
                s.remove(0);
            }
        }
        out.push(cand);
    }
}

/// The classes among `ancestors` present in several versions, each with
/// the chain from the class `name` (of package `pkg`, parents `parents`)
/// to each version and the requirement that chose it.
pub(crate) fn conflicts(
    name: &str,
    parents: &[&Arc<Class>],
    ancestors: &[Arc<Class>],
    remap: &[(Arc<str>, Arc<Class>)],
    pkg: &Arc<Package>,
) -> Vec<VersionConflict> {
    let mut out: Vec<VersionConflict> = Vec::new();
    // One package version holds one class of a name.
    if ancestors.iter().all(|a| same(&a.package, pkg)) {
        return out;
    }
    // Only a name met twice can be a conflict (one pass to find them: a
    // long chain of classes has none, and must not cost its square).
    let mut met: rustc_hash::FxHashSet<&str> = Default::default();
    let twice: rustc_hash::FxHashSet<&str> = (ancestors.iter())
        .filter(|a| !met.insert(&a.name))
        .map(|a| &*a.name)
        .collect();
    for c in ancestors {
        if !twice.contains(&*c.name) || out.iter().any(|x| x.class == c.name) {
            continue;
        }
        let versions: Vec<&Arc<Class>> = ancestors.iter().filter(|a| a.name == c.name).collect();
        if versions.len() < 2 {
            continue;
        }
        let described: Vec<String> = versions
            .iter()
            .map(|v| describe(name, pkg, parents, remap, v))
            .collect();
        out.push(VersionConflict {
            class: c.name.clone(),
            keys: versions.iter().map(|v| v.key.clone()).collect(),
            message: format!(
                "{name} needs {} in {} versions that no requirement reconciles: {}",
                c.name,
                versions.len(),
                described.join("; ")
            ),
        });
    }
    out
}

/// `NAME/VERSION through A -> B (B/1.0 requires NAME SPEC)`: the first
/// chain (breadth first) from the class to `target`.
fn describe(
    name: &str,
    pkg: &Arc<Package>,
    parents: &[&Arc<Class>],
    remap: &[(Arc<str>, Arc<Class>)],
    target: &Arc<Class>,
) -> String {
    let mut queue: std::collections::VecDeque<(Vec<Arc<Class>>, &Arc<Class>)> =
        parents.iter().map(|p| (Vec::new(), *p)).collect();
    let mut chain: Vec<Arc<Class>> = Vec::new();
    while let Some((path, c)) = queue.pop_front() {
        let mut path = path;
        path.push(c.clone());
        if c.key == target.key {
            chain = path;
            break;
        }
        if path.len() > 64 {
            continue;
        }
        for p in parents_of(c, remap) {
            queue.push_back((path.clone(), p));
        }
    }
    let by = match chain.len() {
        0 | 1 => pkg.clone(),
        n => chain[n - 2].package.clone(),
    };
    let names: Vec<&str> = std::iter::once(name)
        .chain(chain.iter().map(|c| &*c.name))
        .collect();
    let why = match requirement(&by, &target.package) {
        Some(s) => format!(
            "{}/{} requires {} {}",
            by.name, by.version, target.package.name, s.text
        ),
        None => format!("{}/{} names no version of it", by.name, by.version),
    };
    format!(
        "{}/{} through {} ({why})",
        target.name,
        target.package.version,
        names.join(" -> ")
    )
}
