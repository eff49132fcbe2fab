//! Object definitions as models give them: the header (`?`: type, id,
//! name, metadata), the snippet forms, and the class spec a header names.
//! Parsing only: loading them is `model.rs`'s.

use runtime::{Dict, Value};

use crate::class::Class;
use crate::executor::Executor;

/// A parsed object definition.
pub(crate) struct Def {
    /// The class spec (a name or a type string).
    pub(crate) class: String,
    pub(crate) id: Option<String>,
    /// The `name` of the header.
    pub(crate) name: Value,
    pub(crate) metadata: Value,
    /// The properties given.
    pub(crate) props: Dict,
    /// `destroyed: true` in the header: an object of a previous
    /// deployment that was destroyed.
    pub(crate) destroyed: bool,
    /// The header's keys that start with `_` (the dashboard's own, murano's
    /// designer attributes), kept to be written back with the model.
    pub(crate) designer: Dict,
}

/// The designer attributes of a header: its keys that start with `_`
/// (murano's `ObjectStore` keeps them apart and its serializer writes them
/// back into the object's `?`).
fn designer_attributes(h: &Dict) -> Dict {
    (h.iter())
        .filter(|(k, _)| k.as_str().is_some_and(|k| k.starts_with('_')))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

pub(crate) fn header_keys() -> [&'static str; 4] {
    ["id", "name", "metadata", "destroyed"]
}

/// Recognises an object definition: `{"?": {type, id}, props...}` or the
/// snippet form `{":Type": {props}, "id": ...}` / `{"full.Type": {...}}`.
pub(crate) fn parse_def(
    ex: &Executor,
    resolver: Option<&Class>,
    v: &Value,
    default: Option<&str>,
) -> Option<Def> {
    let Value::Dict(d) = v else { return None };
    if let Some(Value::Dict(h)) = d.get(&Value::str("?")) {
        // Without a version or package, a nested object's type is the
        // version its owner's package requires.
        let ty = match (def_type(h)?, resolver) {
            (t, Some(c)) if !t.contains(['/', '@']) => ex.key_from(&t, Some(&c.package)),
            (t, _) => t,
        };
        let mut props = (**d).clone();
        props.shift_remove(&Value::str("?"));
        return Some(Def {
            class: ty,
            id: h
                .get(&Value::str("id"))
                .and_then(|i| i.as_str())
                .map(str::to_string),
            name: h.get(&Value::str("name")).cloned().unwrap_or(Value::Null),
            metadata: h
                .get(&Value::str("metadata"))
                .cloned()
                .unwrap_or(Value::Null),
            props,
            destroyed: h.get(&Value::str("destroyed")).is_some_and(Value::truthy),
            designer: designer_attributes(h),
        });
    }
    // Snippet form: exactly one key that names a type, with a dict value.
    let mut type_key = None;
    for (k, x) in d.iter() {
        if let Value::Type(t) = k {
            if type_key.is_some() {
                return None;
            }
            type_key = Some((t.name.to_string(), x.clone()));
            continue;
        }
        let Some(ks) = k.as_str() else { continue };
        if header_keys().contains(&ks) {
            continue;
        }
        if matches!(x, Value::Dict(_) | Value::Null)
            && (ks.starts_with(':')
                || ks.contains('.')
                || ks.contains(':')
                || class_exists(ex, resolver, ks))
        {
            if type_key.is_some() {
                return None;
            }
            type_key = Some((ks.to_string(), x.clone()));
        } else {
            return default.map(|dft| Def {
                class: dft.to_string(),
                id: None,
                name: Value::Null,
                metadata: Value::Null,
                props: (**d).clone(),
                destroyed: false,
                designer: Dict::default(),
            });
        }
    }
    match type_key {
        Some((k, x)) => {
            let class = match resolver {
                Some(c) if k.contains(':') || !k.contains('.') => {
                    ex.key_from(&c.resolve(&k), Some(&c.package))
                }
                Some(c) => ex.key_from(k.trim_start_matches(':'), Some(&c.package)),
                _ => k.trim_start_matches(':').to_string(),
            };
            Some(Def {
                class,
                id: d
                    .get(&Value::str("id"))
                    .and_then(|i| i.as_str())
                    .map(str::to_string),
                name: d.get(&Value::str("name")).cloned().unwrap_or(Value::Null),
                metadata: d
                    .get(&Value::str("metadata"))
                    .cloned()
                    .unwrap_or(Value::Null),
                props: match x {
                    Value::Dict(ref p) => (**p).clone(),
                    _ => Dict::default(),
                },
                destroyed: d.get(&Value::str("destroyed")).is_some_and(Value::truthy),
                designer: Dict::default(),
            })
        }
        None => default.map(|dft| Def {
            class: dft.to_string(),
            id: None,
            name: Value::Null,
            metadata: Value::Null,
            props: (**d).clone(),
            destroyed: false,
            designer: Dict::default(),
        }),
    }
}

/// The class spec of an object header (`?`): its `type`, with
/// `classVersion` and `package` filling in what the type string leaves out;
/// `None` without a type.
pub(crate) fn def_type(h: &Dict) -> Option<String> {
    Some(match h.get(&Value::str("type"))? {
        Value::Type(t) => t.name.to_string(),
        t => {
            // `Name/version@package`; the executor picks the loaded version
            // they name (see `Executor::class`).
            let (name, ver, pkg) = crate::version::parse_type_string(t.as_str()?);
            let field = |k: &str| {
                h.get(&Value::str(k))
                    .filter(|v| !v.is_null())
                    .map(runtime::pyrepr::to_str)
                    .map(|v| v.trim().to_string())
                    .filter(|v| !v.is_empty())
            };
            crate::version::type_spec(
                &name,
                ver.or_else(|| field("classVersion")).as_deref(),
                pkg.or_else(|| field("package")).as_deref(),
            )
        }
    })
}

pub(crate) fn class_exists(ex: &Executor, resolver: Option<&Class>, name: &str) -> bool {
    let full = match resolver {
        Some(c) => c.resolve(name),
        None => name.to_string(),
    };
    ex.class(&full).is_ok()
}
