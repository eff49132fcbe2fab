//! Class versions in object models: the versions an object model asks
//! for checked against the packages loaded, and the packages of the
//! search path it needs.

use std::sync::Arc;

use engine::version::{parse_type_string, VersionSpec};
use runtime::{Dict, Result, Value};

use crate::error::load_error;
use crate::format::PackageFormat;
use crate::loader::{PackageLoader, CORE_PACKAGE};

fn version_text(v: &Value) -> Option<String> {
    match v {
        Value::Str(s) if s.trim().is_empty() => None,
        Value::Str(s) => Some(s.trim().to_string()),
        Value::Int(i) => Some(i.to_string()),
        Value::Float(f) => Some(f.to_string()),
        _ => None,
    }
}

/// Checks the class versions an object model asks for (`?.classVersion`,
/// the version in a `type` string `Name/1.2.3@pkg`, and `?.package` /
/// `@pkg`) against the packages loaded to run it. A spec no loaded
/// version of the providing package satisfies is an error naming the
/// object, the class, the spec and the loaded version(s). Classes no
/// loaded package provides (the core library's, or unknown ones the
/// executor reports) are not checked here.
pub fn check_model_versions(model: &Value, packages: &[Arc<dyn PackageFormat>]) -> Result<()> {
    let mut errors = Vec::new();
    for_each_header(model, &mut |h| check_header(h, packages, &mut errors));
    if errors.is_empty() {
        Ok(())
    } else {
        Err(load_error(errors.join("\n")))
    }
}

/// What an object header (`?`) asks for: the class, the version in its
/// `type` string, its `classVersion`, and the package (`@pkg` or
/// `package`).
struct HeaderType {
    class: String,
    type_ver: Option<String>,
    class_ver: Option<String>,
    pkg: Option<String>,
}

fn header_type(h: &Dict) -> Option<HeaderType> {
    let t = h.get(&Value::str("type")).and_then(|t| t.as_str())?;
    let (class, type_ver, type_pkg) = parse_type_string(t);
    let class_ver = h.get(&Value::str("classVersion")).and_then(version_text);
    let pkg = type_pkg.or_else(|| {
        h.get(&Value::str("package"))
            .and_then(|p| p.as_str())
            .map(|p| p.trim().to_string())
            .filter(|p| !p.is_empty())
    });
    Some(HeaderType {
        class,
        type_ver,
        class_ver,
        pkg,
    })
}

/// Calls `f` on every object header (`?`) of a model.
fn for_each_header(v: &Value, f: &mut dyn FnMut(&Dict)) {
    match v {
        Value::List(items) => items.iter().for_each(|i| for_each_header(i, f)),
        Value::Dict(d) => {
            if let Some(Value::Dict(h)) = d.get(&Value::str("?")) {
                f(h);
            }
            for (k, x) in d.iter() {
                if k.as_str() != Some("?") {
                    for_each_header(x, f);
                }
            }
        }
        _ => {}
    }
}

impl HeaderType {
    /// True when `p` can provide the object's class.
    fn provided_by(&self, p: &dyn PackageFormat) -> bool {
        let versions = [&self.type_ver, &self.class_ver];
        self.pkg.as_deref().is_none_or(|n| p.full_name() == n)
            && p.classes().contains(&self.class)
            && versions.iter().all(|v| match v {
                None => true,
                Some(v) => VersionSpec::parse(Some(v)).is_ok_and(|s| s.matches(p.version())),
            })
    }
}

impl PackageLoader {
    /// The packages of the search path an object model needs beyond
    /// `loaded`: for each object whose class (at the version and from the
    /// package its header asks for) no loaded package provides, the
    /// highest version on the search path that does, with what it
    /// requires. The reference loads model types from the whole catalogue
    /// (`load_class_package` in murano/engine/package_loader.py), not only
    /// from the application's requirements.
    pub fn model_packages(
        &self,
        model: &Value,
        loaded: &[Arc<dyn PackageFormat>],
    ) -> Result<Vec<Arc<dyn PackageFormat>>> {
        let mut wanted: Vec<HeaderType> = Vec::new();
        for_each_header(model, &mut |h| wanted.extend(header_type(h)));
        let mut out: Vec<Arc<dyn PackageFormat>> = Vec::new();
        for w in wanted {
            if w.pkg.as_deref() == Some(CORE_PACKAGE)
                || loaded.iter().chain(&out).any(|p| w.provided_by(&**p))
            {
                continue;
            }
            // `found` lists each package's versions highest first.
            let Some(f) = self
                .found
                .values()
                .flatten()
                .filter(|f| w.provided_by(&*f.package))
                .max_by(|a, b| a.version.cmp(&b.version))
            else {
                continue;
            };
            out.push(f.package.clone());
            for d in self.resolve(&f.package)? {
                let have = |p: &Arc<dyn PackageFormat>| {
                    p.full_name() == d.full_name() && p.version() == d.version()
                };
                if !loaded.iter().chain(&out).any(have) {
                    out.push(d);
                }
            }
        }
        Ok(out)
    }
}

fn check_header(h: &Dict, packages: &[Arc<dyn PackageFormat>], errors: &mut Vec<String>) {
    let Some(HeaderType {
        class,
        type_ver,
        class_ver,
        pkg,
    }) = header_type(h)
    else {
        return;
    };
    let id = h
        .get(&Value::str("id"))
        .and_then(|i| i.as_str())
        .map(|i| format!("object {i} ({class})"))
        .unwrap_or_else(|| format!("an object of class {class}"));
    if pkg.as_deref() == Some(CORE_PACKAGE) {
        return;
    }
    let providers: Vec<&Arc<dyn PackageFormat>> = packages
        .iter()
        .filter(|p| p.classes().iter().any(|c| c == &class))
        .collect();
    if let Some(pn) = &pkg {
        let named: Vec<&Arc<dyn PackageFormat>> =
            packages.iter().filter(|p| p.full_name() == pn).collect();
        if !named.is_empty() && !providers.iter().any(|p| p.full_name() == pn) {
            errors.push(format!(
                "{id}: package {pn} ({}) does not provide class {class}",
                named
                    .iter()
                    .map(|p| p.version().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            return;
        }
        if named.is_empty() && !providers.is_empty() {
            errors.push(format!(
                "{id}: the model asks for class {class} from package {pn}, which is not loaded \
                 (the class is provided by {})",
                providers
                    .iter()
                    .map(|p| format!("{}/{}", p.full_name(), p.version()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            return;
        }
    }
    let providers: Vec<&Arc<dyn PackageFormat>> = providers
        .into_iter()
        .filter(|p| pkg.as_deref().is_none_or(|n| p.full_name() == n))
        .collect();
    if providers.is_empty() {
        return;
    }
    for (what, ver) in [("type", type_ver), ("classVersion", class_ver)] {
        let Some(ver) = ver else { continue };
        let spec = match VersionSpec::parse(Some(&ver)) {
            Ok(s) => s,
            Err(e) => {
                errors.push(format!("{id}: invalid {what} version {ver:?}: {e}"));
                continue;
            }
        };
        if !providers.iter().any(|p| spec.matches(p.version())) {
            errors.push(format!(
                "{id}: {what} asks for class {class} version {ver} ({spec}), but the loaded \
                 package provides {}",
                providers
                    .iter()
                    .map(|p| format!("{}/{}", p.full_name(), p.version()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
}
