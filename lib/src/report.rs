//! Contract validation of object models: a model's report and its
//! violations, sorted by JSON path.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use engine::{model, Catalog};

use crate::session::{Catalogue, Limits};

/// The outcome of one model.
pub struct Report {
    /// The model file.
    pub file: PathBuf,
    /// Objects loaded.
    pub objects: usize,
    /// The contract violations, sorted by path.
    pub violations: Vec<Violation>,
    /// A load error that stopped validation.
    pub error: Option<String>,
    /// A streamed model's phases.
    pub phases: engine::stream::Phases,
    /// Of a streamed model: objects read in place from their text
    /// ([`engine::stream::Stats::in_place`]).
    pub in_place: u64,
    /// The model could not be read or is not JSON (`error` says why).
    pub unreadable: bool,
    /// Of a streamed model, where the text of each violation's object is,
    /// by (object path, property): the byte offset of the piece of text
    /// that holds it and that piece's JSON path
    /// ([`engine::model::Validation::places`]).
    pub places: std::collections::HashMap<(String, String), (u64, String)>,
}

impl Report {
    /// The report of a model that could not be read or parsed.
    pub fn failed(file: &Path, error: String) -> Report {
        Report {
            file: file.to_path_buf(),
            objects: 0,
            violations: Vec::new(),
            error: Some(error),
            phases: Vec::new(),
            in_place: 0,
            unreadable: true,
            places: Default::default(),
        }
    }

    /// The report of a model whose validation panicked (a bug).
    pub fn panicked(file: &Path) -> Report {
        Report {
            unreadable: false,
            ..Report::failed(file, "internal error (panic)".into())
        }
    }
}

/// Validates one object model (JSON text: `{"Objects": ...}` or a bare
/// object) against the classes of `catalog`, in an execution of its own.
/// The report's `file` is empty.
pub fn validate_text(catalog: &Arc<Catalog>, text: &str) -> Report {
    match runtime::json::from_tagged_str(text) {
        Ok(data) => report_of(model::validate(catalog, &data)),
        Err(e) => Report::failed(Path::new(""), e.message().to_string()),
    }
}

/// A contract violation in a model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// The JSON path of the object (`$.Objects.servers[9]`).
    pub path: String,
    /// The property whose value violates its contract.
    pub property: String,
    /// What is wrong, and the contract's position.
    pub message: String,
    /// Where the contract is (`FILE:LINE:COL`), when known.
    pub position: Option<String>,
}

impl Violation {
    /// The violation of `property` of the object at `path` that `e`
    /// reports, with the position of the contract it broke.
    pub fn new(path: String, property: String, e: &runtime::Error) -> Violation {
        let position = e.location().map(|l| l.to_string()).or_else(|| {
            // A contract check names its contract's place last:
            // "... (contract at FILE:LINE:COL)".
            let (_, pos) = e.message().rsplit_once("(contract at ")?;
            Some(pos.strip_suffix(')')?.to_string())
        });
        Violation {
            path,
            property,
            message: e.message().to_string(),
            position,
        }
    }
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}: {}", self.path, self.property, self.message)
    }
}

/// A JSON path's steps, array indices as numbers: `[10]` sorts after `[9]`.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
enum Step<'a> {
    Index(u64),
    Key(&'a str),
}

fn steps(path: &str) -> Vec<Step<'_>> {
    path.split(['.', '['])
        .filter(|s| !s.is_empty())
        .map(|s| match s.strip_suffix(']').and_then(|i| i.parse().ok()) {
            Some(i) => Step::Index(i),
            None => Step::Key(s),
        })
        .collect()
}

/// Sorts violations by JSON path, then property (a stable sort: several
/// violations of one property keep the order they were found in).
pub fn sort_violations(v: &mut [Violation]) {
    v.sort_by(|a, b| violation_order(&a.path, &a.property, &b.path, &b.property));
}

/// The order of two violations, given as (JSON path, property): by path,
/// indices as numbers, then by property.
pub fn violation_order(
    path_a: &str,
    prop_a: &str,
    path_b: &str,
    prop_b: &str,
) -> std::cmp::Ordering {
    steps(path_a)
        .cmp(&steps(path_b))
        .then_with(|| prop_a.cmp(prop_b))
}

/// The violations a validation found (JSON path, property, error), sorted
/// as [`sort_violations`] sorts them.
pub fn sorted_violations(found: Vec<(String, String, runtime::Error)>) -> Vec<Violation> {
    let mut violations: Vec<Violation> = found
        .into_iter()
        .map(|(path, property, e)| Violation::new(path, property, &e))
        .collect();
    sort_violations(&mut violations);
    violations
}

/// What validating one object model found ([`Catalogue::check`]).
pub struct Checked {
    /// Objects loaded.
    pub objects: usize,
    /// The contract violations, sorted by path.
    pub violations: Vec<Violation>,
}

impl Catalogue {
    /// Validates an object model (`{"Objects": ...}` or a bare object)
    /// against the catalogue's contracts, in an execution of its own on an
    /// engine-owned stack (a deeply nested model does not overflow the
    /// caller's), within `limits` (time and memory). A model that cannot
    /// be loaded at all (an unknown class, no root object) is the error.
    ///
    /// ```
    /// use muranopl::{json, Catalogue, Limits};
    /// let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/validate");
    /// let cat = Catalogue::load(&[dir.into()], &[], true).unwrap();
    /// let model = json::from_tagged_str(r#"{"?": {"id": "s1", "type": "com.example.Server"},
    ///     "name": "a", "port": 70000, "tags": [], "enabled": true,
    ///     "settings": {"timeout": 1, "label": "x"}}"#).unwrap();
    /// let found = cat.check(&model, Limits::default()).unwrap();
    /// assert_eq!(found.violations[0].property, "port");
    /// assert!(found.violations[0].position.as_deref().unwrap().contains("Server.yaml:"));
    /// ```
    pub fn check(&self, model: &runtime::Value, limits: Limits) -> Result<Checked, runtime::Error> {
        let v = vm::coro::on_big_stack(|| {
            let _budget = limits.start();
            self.validate(model)
        });
        if let Some(e) = v.error {
            return Err(e);
        }
        Ok(Checked {
            objects: v.objects,
            violations: sorted_violations(v.violations),
        })
    }
}

/// The report of a validation (its `file` empty).
pub fn report_of(v: model::Validation) -> Report {
    let places = (v.violations.iter())
        .zip(v.places)
        .map(|((path, prop, _), place)| ((path.clone(), prop.clone()), place))
        .collect();
    let violations = sorted_violations(v.violations);
    Report {
        file: PathBuf::new(),
        objects: v.objects,
        violations,
        error: v.error.map(|e| format!("{}: {}", e.kind(), e.message())),
        phases: Vec::new(),
        in_place: 0,
        unreadable: false,
        places,
    }
}

/// Runs `f` on a thread with a large stack (deeply nested models must not
/// overflow), or on this thread when no thread can be made; a panic in `f`
/// comes back as the error.
pub fn on_big_stack<T: Send>(f: impl Fn() -> T + Sync) -> std::thread::Result<T> {
    std::thread::scope(|s| {
        let spawned = std::thread::Builder::new()
            .stack_size(256 << 20)
            .spawn_scoped(s, &f);
        match spawned {
            Ok(h) => h.join(),
            Err(_) => Ok(f()),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(path: &str, property: &str, message: &str) -> Violation {
        Violation {
            path: path.into(),
            property: property.into(),
            message: message.into(),
            position: None,
        }
    }

    #[test]
    fn violations_sort_by_path_with_indices_as_numbers() {
        let mut got = vec![
            v("$.Objects.servers[10]", "port", "a"),
            v("$.Objects.servers[9].settings", "x", "b"),
            v("$.Objects.servers[9]", "port", "c"),
            v("$.Objects", "name", "d"),
            v("$.Objects.servers[9]", "name", "e"),
            v("$.Objects.servers[9]", "name", "f"),
        ];
        sort_violations(&mut got);
        let order: String = got.iter().map(|v| v.message.as_str()).collect();
        assert_eq!(order, "defcba");
        assert_eq!(got[0].to_string(), "$.Objects.name: d");
    }
}
