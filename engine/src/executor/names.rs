//! Class names as code gives them: resolved in the calling class's
//! namespaces, and the keys of objects' attributes.

use runtime::registry::Cx;
use runtime::{Error, Result, Value};

use super::state::Executor;
use crate::class::Class;

/// A class name argument (a type object, or a name resolved in the calling
/// class's namespaces) as a full name.
pub fn resolve_class_name(cx: &Cx, ex: &Executor, v: &Value) -> Result<String> {
    match v {
        Value::Type(t) => Ok(t.name.to_string()),
        Value::Str(s) => {
            let caller = ex.ctx_class(cx.ctx);
            let name = match &caller {
                Some(c) => ex.key_from(&c.resolve(s), Some(&c.package)),
                None => s.to_string(),
            };
            Ok(plugin_alias(ex, caller.as_deref(), name))
        }
        other => Err(Error::type_(format!(
            "bad type name {}",
            runtime::pyrepr::repr(other)
        ))),
    }
}

/// Plugin classes were once named `io.murano.extensions.<name>`: murano's
/// `MuranoPackage.find_class` still finds such a name by its short form in
/// the packages the caller requires (not in the caller's own package),
/// with a deprecation warning.
fn plugin_alias(ex: &Executor, caller: Option<&Class>, name: String) -> String {
    let Some(short) = name.strip_prefix("io.murano.extensions.") else {
        return name;
    };
    if ex.class(&name).is_ok() {
        return name;
    }
    match ex.class(short) {
        Ok(c) if caller.is_none_or(|k| k.package.name != c.package.name) => short.to_string(),
        _ => name,
    }
}

/// How an object keeps attribute `name` of class `owner`.
pub fn attr_slot(owner: &str, name: &Value) -> Value {
    Value::list(vec![Value::str(owner), name.clone()])
}
