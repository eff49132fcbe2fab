//! What a catalogue answers about its classes: which version of a class a
//! request names, its form schemas, and its static actions, each in a
//! session of its own.

use std::sync::Arc;

use engine::version::{parse_version, VersionSpec};
use engine::Executor;
use forms::schema::{self, Dialect};
use package::type_spec;
use runtime::{Error, ErrorKind, Value};

use crate::session::{Catalogue, Session};

impl Catalogue {
    /// The type string naming exactly the version of `class` that
    /// `version` (a version spec; murano's default `=0`, any 0.x) and
    /// `package` pick: the highest matching one. A bad spec is a
    /// `ValueError`; no match is `NoClassFound` (or `NoPackageFound`).
    pub fn pick_class(
        &self,
        class: &str,
        version: Option<&str>,
        package: Option<&str>,
    ) -> Result<String, Error> {
        pick_class(&self.session(), class, version, package)
    }

    /// The form schemas (JSON Schema, the specification's dialect) of
    /// `class` and its model builders, or of the named `methods` (an
    /// empty name is the class), in a session of their own; `version` and
    /// `package` pick the class as [`Catalogue::pick_class`] does. Returns
    /// the session with the outcome (its executor names the errors'
    /// classes), or the error of [`Catalogue::pick_class`].
    pub fn schemas(
        &self,
        class: &str,
        methods: Option<&[String]>,
        version: Option<&str>,
        package: Option<&str>,
    ) -> Result<(Session, Result<Vec<(String, Value)>, Error>), Error> {
        let session = self.session();
        let spec = pick_class(&session, class, version, package)?;
        // `spec` pins the package: no second lookup.
        let out = schema::generate_schema(session.executor(), &spec, methods, None, Dialect::Spec);
        Ok((session, out))
    }

    /// [`Catalogue::schemas`] without the session: the schemas, named,
    /// or the error; naming no class or method with a schema is a
    /// `NoMethodFound` error.
    pub fn schema(
        &self,
        class: &str,
        methods: Option<&[String]>,
        version: Option<&str>,
        package: Option<&str>,
    ) -> Result<Vec<(String, Value)>, Error> {
        let list = self
            .schemas(class, methods, version, package)
            .and_then(|(_session, out)| out)?;
        if list.is_empty() {
            return Err(Error::new(
                ErrorKind::NoMethodFound,
                format!("class {class} has no method of those names with a schema"),
            ));
        }
        Ok(list)
    }

    /// Runs the static action `method` of `class` (a public static
    /// method, `Usage: Action`) with named arguments, in a session of its
    /// own; `version` and `package` pick the class as
    /// [`Catalogue::pick_class`] does. Returns the session with the
    /// outcome (its executor names the errors' classes), or the error of
    /// [`Catalogue::pick_class`].
    pub fn static_action(
        &self,
        class: &str,
        method: &str,
        args: Vec<(Arc<str>, Value)>,
        version: Option<&str>,
        package: Option<&str>,
    ) -> Result<(Session, Result<Value, Error>), Error> {
        let session = self.session();
        let spec = pick_class(&session, class, version, package)?;
        let out = (session.executor()).call_static_action(&spec, package, method, args);
        Ok((session, out))
    }
}

fn pick_class(
    session: &Session,
    class: &str,
    version: Option<&str>,
    package: Option<&str>,
) -> Result<String, Error> {
    let ex: &Executor = session.executor();
    let text = version.filter(|v| !v.trim().is_empty()).unwrap_or("=0");
    let spec = VersionSpec::parse(Some(text))
        .map_err(|e| Error::new(ErrorKind::ValueError, format!("classVersion: {e}")))?;
    let providers: Vec<_> = (ex.packages().iter())
        .filter(|p| p.decls.contains_key(class))
        .collect();
    if let Some(p) = package {
        if !ex.packages().iter().any(|x| &*x.name == p) {
            let msg = format!("Package {p} is not found");
            return Err(Error::new(ErrorKind::NoPackageFound, msg));
        }
    }
    let chosen = (providers.iter())
        .filter(|p| package.is_none_or(|n| *p.name == *n))
        .filter_map(|p| Some((parse_version(&p.version).ok()?, p)))
        .filter(|(v, _)| spec.matches(v))
        .max_by(|a, b| a.0.cmp(&b.0));
    match chosen {
        Some((v, p)) => Ok(type_spec(class, Some(&format!("={v}")), Some(&p.name))),
        None => {
            let mut msg = format!("Class \"{class}\" is not found");
            if !providers.is_empty() {
                msg = format!("{msg} in a version matching \"{text}\"");
            }
            if let Some(p) = package {
                msg = format!("{msg} in package {p}");
            }
            Err(Error::new(ErrorKind::NoClassFound, msg))
        }
    }
}
