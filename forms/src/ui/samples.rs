//! Deterministic samples for fields without an answer or `initial`,
//! and applications made for application-typed fields.

use runtime::{Dict, ErrorKind, Result, Value};

use crate::cloud::{FLAVORS, IMAGES};

use super::common::MAX_APP_NESTING;
use super::definition::{Field, FieldType};
use super::model::{insert_ids, package_model, Gen, ModelOptions};

fn string_candidates(field: &Field) -> Vec<String> {
    let n = field.name.to_ascii_lowercase();
    let mut c: Vec<String> = Vec::new();
    if field.ty == FieldType::Password || n.contains("pass") {
        c.extend(["P@ssw0rd1", "Passw0rd1", "passw0rd1", "Password1"].map(String::from));
    }
    if n.contains("mail") {
        c.push("admin@example.com".into());
    }
    if n.contains("domain") {
        c.extend(["acme.local", "example.com"].map(String::from));
    }
    if n.contains("auth") {
        c.push("http://keystone.example.com:5000/v3".into());
    }
    if n.contains("osimage") {
        c.push("ubuntu16.04-x64".into());
    }
    if n.contains("url") || n.contains("repo") || n.contains("uri") {
        c.extend(
            [
                "https://git.example.com/app.git",
                "http://example.com/",
                "http://10.0.0.2:5000",
            ]
            .map(String::from),
        );
    }
    if field.ty == FieldType::ClusterIp
        || n.ends_with("ip")
        || n.contains("address")
        || n.contains("host")
    {
        c.extend(["10.0.0.10", "host-1"].map(String::from));
    }
    if n.contains("port") {
        c.push("8080".into());
    }
    if n.contains("user") || n.contains("login") {
        c.extend(["admin", "user1"].map(String::from));
    }
    if n.contains("key") {
        c.push("key-1234567890".into());
    }
    let base: String = field
        .name
        .chars()
        .filter(|ch| ch.is_ascii_alphanumeric())
        .collect();
    if !base.is_empty() {
        c.push(base.clone());
        c.push(format!("{base}1"));
    }
    c.extend(
        [
            "sample",
            "sample1",
            "Sample1",
            "sample-1",
            "a",
            "abc",
            "a1",
            "A1",
            "P@ssw0rd1",
            "example.com",
            "10.0.0.10",
            "1",
        ]
        .map(String::from),
    );
    c
}

impl Gen<'_> {
    pub(super) fn sample(&mut self, form: &str, field: &Field, required: bool) -> Result<Value> {
        let note = |s: &mut Vec<String>, v: &Value| {
            s.push(format!(
                "{form}.{}: sample {} ({})",
                field.name,
                runtime::json::to_tagged_string(v),
                field.ty.name()
            ))
        };
        let v = match &field.ty {
            FieldType::Boolean | FieldType::FloatingIp => return Ok(Value::Bool(false)),
            FieldType::Integer => {
                if !required {
                    return Ok(Value::Null);
                }
                let mut i = field
                    .min_value
                    .unwrap_or(1)
                    .max(field.min_value.unwrap_or(0));
                if let Some(m) = field.max_value {
                    i = i.min(m);
                }
                Value::Int(i)
            }
            FieldType::Flavor => {
                let f = FLAVORS
                    .iter()
                    .find(|f| f.meets(&field.requirements))
                    .unwrap_or(&FLAVORS[FLAVORS.len() - 1]);
                Value::str(f.name)
            }
            FieldType::Image => {
                let wanted = field.image_type.as_deref();
                match IMAGES.iter().find(|i| i.offered_for(wanted)) {
                    Some(i) => Value::str(i.name),
                    None if !required => return Ok(Value::str("")),
                    None => {
                        return Err(field.pos.error(
                            ErrorKind::UiValidationError,
                            format!(
                                "{form}.{}: no image of type {} in the simulated cloud (the \
                                 dashboard offers none); answer one with --answers",
                                field.name,
                                wanted.unwrap_or("")
                            ),
                        ))
                    }
                }
            }
            FieldType::Keypair => Value::str("default"),
            FieldType::Azone => Value::str("nova"),
            FieldType::SecurityGroup => Value::str("default"),
            FieldType::Volume => {
                if !required {
                    return Ok(Value::str(""));
                }
                Value::str("volume-1")
            }
            FieldType::Network => {
                if field.allow_auto {
                    return Ok(Value::list(vec![Value::Null, Value::Null]));
                }
                match self.network_choices(field)?.first() {
                    Some((n, sub)) => {
                        Value::list(vec![Value::str(*n), sub.map_or(Value::Null, Value::str)])
                    }
                    None => {
                        return Err(field.pos.error(
                            ErrorKind::UiValidationError,
                            format!(
                                "{form}.{}: no network of the simulated cloud matches the \
                                 field; answer one with --answers",
                                field.name
                            ),
                        ))
                    }
                }
            }
            FieldType::Choice => field.choices[0].0.clone(),
            FieldType::DatabaseList => {
                if !required {
                    return Ok(Value::list(vec![]));
                }
                Value::list(vec![Value::str("db1")])
            }
            FieldType::Instance => return Ok(Value::Null),
            FieldType::App(types) => return self.app_sample(form, field, types, required, None),
            FieldType::String
            | FieldType::Text
            | FieldType::Password
            | FieldType::ClusterIp
            | FieldType::Domain => {
                if !required {
                    return Ok(Value::str(""));
                }
                let mut chosen = None;
                for c in string_candidates(field) {
                    let v = Value::str(&c);
                    if self.validate(field, &v, true)?.is_ok() {
                        chosen = Some(v);
                        break;
                    }
                }
                match chosen {
                    Some(v) => v,
                    None => {
                        let v = Value::str("sample");
                        self.notes.push(format!(
                            "{form}.{}: no sample satisfies its validators; using \"sample\" ({})",
                            field.name, field.pos
                        ));
                        v
                    }
                }
            }
        };
        note(&mut self.notes, &v);
        Ok(v)
    }

    /// Adds `app` to the environment, as the dashboard's "+" beside an
    /// application field does (`make_select_cls` in
    /// muranodashboard/dynamic_ui/fields.py adds it through the catalogue's
    /// add view, and the field's choice is then its id). Returns that id.
    fn add_application(&mut self, app: Value) -> Value {
        let app = {
            let mut g = self.host.ids.lock().unwrap_or_else(|e| e.into_inner());
            insert_ids(app, &mut g)
        };
        let id = match &app {
            Value::Dict(d) => match d.get(&Value::str("?")) {
                Some(Value::Dict(q)) => q.get(&Value::str("id")).cloned(),
                _ => None,
            },
            _ => None,
        };
        self.added.push(app);
        id.unwrap_or(Value::Null)
    }

    /// A new application for an application field, from its package's UI
    /// with `answers` (see [`ModelOptions::answers`]): added to the
    /// environment, the field's value is its id.
    pub(super) fn app_sample(
        &mut self,
        form: &str,
        field: &Field,
        types: &[String],
        required: bool,
        answers: Option<Value>,
    ) -> Result<Value> {
        // The dashboard leaves an optional application field empty unless
        // the user picks or adds an application for it.
        if !required && answers.is_none() {
            self.notes.push(format!(
                "{form}.{}: optional application of type {} left empty",
                field.name,
                types.join(" or ")
            ));
            return Ok(Value::Null);
        }
        let Some(loader) = self.opts.loader else {
            if required {
                self.notes.push(format!(
                    "{form}.{}: needs an application of type {}; no search path (-L) to make one",
                    field.name,
                    types.join(" or ")
                ));
            }
            return Ok(Value::Null);
        };
        if self.opts.nesting >= MAX_APP_NESTING {
            self.notes.push(format!(
                "{form}.{}: applications nest too deeply; left null",
                field.name
            ));
            return Ok(Value::Null);
        }
        // The requirements of the package whose UI this is: an embedded
        // application comes from the version that `run` resolves too.
        let requirements: Vec<(String, package::VersionSpec)> = loader
            .found
            .values()
            .flatten()
            .find(|f| f.package.full_name() == self.opts.package)
            .map(|f| f.package.requirements().to_vec())
            .unwrap_or_default();
        for t in types {
            let mut candidates: Vec<_> = loader
                .found
                .values()
                .flatten()
                .filter(|f| {
                    f.package.full_name() == t || f.package.classes().iter().any(|c| c == t)
                })
                .collect();
            // Highest version first, then keep those the requirement allows.
            candidates.sort_by(|a, b| b.package.version().cmp(a.package.version()));
            let found = candidates
                .iter()
                .find(|f| {
                    requirements
                        .iter()
                        .find(|(n, _)| n == f.package.full_name())
                        .is_none_or(|(_, spec)| spec.matches(f.package.version()))
                })
                .or(candidates.first())
                .copied();
            let Some(found) = found else { continue };
            let pkg = found.package.clone();
            let nested = ModelOptions {
                package: pkg.full_name().to_string(),
                answers: answers.clone(),
                loader: self.opts.loader,
                ids: Some(self.host.ids.clone()),
                nesting: self.opts.nesting + 1,
            };
            match package_model(&*pkg, &nested) {
                Ok(Some(out)) => {
                    let mut model = out.model;
                    // The field names the class; keep it when the package's
                    // application is another class of it.
                    if let Value::Dict(d) = &model {
                        let ty = d
                            .get(&Value::str("?"))
                            .and_then(|q| match q {
                                Value::Dict(q) => q.get(&Value::str("type")).cloned(),
                                _ => None,
                            })
                            .and_then(|v| v.as_str().map(str::to_string));
                        if ty.as_deref() != Some(t.as_str()) {
                            let mut q = Dict::default();
                            q.insert(Value::str("type"), Value::str(t));
                            let mut d2 = Dict::default();
                            d2.insert(Value::str("?"), Value::dict(q));
                            model = Value::dict(d2);
                        }
                    }
                    self.notes.push(format!(
                        "{form}.{}: a new {t} application (from package {})",
                        field.name,
                        pkg.full_name()
                    ));
                    for n in out.notes {
                        self.notes.push(format!("  {t}: {n}"));
                    }
                    self.added.extend(out.added);
                    return Ok(self.add_application(model));
                }
                Ok(None) => {
                    let mut q = Dict::default();
                    q.insert(Value::str("type"), Value::str(t));
                    let mut d = Dict::default();
                    d.insert(Value::str("?"), Value::dict(q));
                    self.notes.push(format!(
                        "{form}.{}: a new {t} application (package {} has no UI: no properties set)",
                        field.name,
                        pkg.full_name()
                    ));
                    return Ok(self.add_application(Value::dict(d)));
                }
                // Answers the user gave for it must fit.
                Err(e) if answers.is_some() => return Err(e),
                Err(e) => {
                    self.notes.push(format!(
                        "{form}.{}: could not make a {t} application: {}",
                        field.name,
                        e.message()
                    ));
                }
            }
        }
        if required {
            self.notes.push(format!(
                "{form}.{}: no package on the search path provides {}; left null",
                field.name,
                types.join(" or ")
            ));
        }
        Ok(Value::Null)
    }
}
