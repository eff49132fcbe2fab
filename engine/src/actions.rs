//! Static actions: what Murano's API calls as
//! `POST /actions {className, methodName, parameters}` (a public static
//! method of a class, called with named arguments).

use std::sync::Arc;

use runtime::{Error, ErrorKind, Result, Value};

use crate::executor::Executor;

impl Executor {
    /// Calls the static action `method` of the class `spec` names (a name
    /// or a type string `Name/version@package`), with named arguments. When
    /// `package` is given, the class must come from it. Errors:
    /// `NoClassFound`, `NoMethodFound`, `MethodNotExposed` (not a public
    /// static method), or whatever the action raises. The result is
    /// finalised (lazy sequences as lists).
    pub fn call_static_action(
        &self,
        spec: &str,
        package: Option<&str>,
        method: &str,
        named: Vec<(Arc<str>, Value)>,
    ) -> Result<Value> {
        let cls = self.class(spec)?;
        let class = &cls.name;
        if let Some(p) = package {
            if &*cls.package.name != p {
                return Err(Error::new(
                    ErrorKind::NoClassFound,
                    format!("class {class} is not found in package {p}"),
                ));
            }
        }
        let m = cls.find_method(method).ok_or_else(|| {
            Error::new(
                ErrorKind::NoMethodFound,
                format!("method {method} is not found in class {class}"),
            )
        })?;
        if !m.is_static() || !m.is_action() {
            return Err(Error::new(
                ErrorKind::MethodNotExposed,
                format!(
                    "method {method} of {class} is not a static action (Scope: Public, Usage: Static)"
                ),
            ));
        }
        let receiver = Value::Type(cls.type_ref.clone());
        let v = self.call(&receiver, method, Vec::new(), named, true)?;
        stdlib::finalize(self.env(false), v.unwrap_or(Value::Null))
    }
}
