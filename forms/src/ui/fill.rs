//! Filling the forms in order (an answer, else `initial`, else a
//! sample), the form validators, then the `Application` section with ids.

use runtime::{Dict, ErrorKind, Result, Value};

use super::common::{ui_error, DASHBOARD_ATTRS_KEY, WF_MANAGEMENT_NAME};
use super::definition::{Check, Field, FieldType, Form, UiDefinition, UiVersion};
use super::model::{answer_for, insert_ids, Gen, Outcome};
use super::validation::is_empty;

fn check_answers(answers: &Option<Value>, ui: &UiDefinition) -> Result<()> {
    let Some(a) = answers else { return Ok(()) };
    let Value::Dict(a) = a else {
        return Err(ui_error(
            "answers must be a mapping of form names to {field: value} mappings",
        ));
    };
    // A password field that confirms its input also has the dashboard's
    // `<name>-clone` field (muranodashboard/dynamic_ui/forms.py).
    let is_field = |x: &Field, field: &str| {
        x.name == field
            || (x.ty == FieldType::Password
                && x.confirm_input
                && field.strip_suffix("-clone") == Some(x.name.as_str()))
    };
    let has = |form: &str, field: &str| {
        (form == WF_MANAGEMENT_NAME && field == "application_name")
            || ui
                .forms
                .iter()
                .any(|f| f.name == form && f.fields.iter().any(|x| is_field(x, field)))
    };
    for (k, v) in a.iter() {
        let k = runtime::pyrepr::to_str(k);
        match v {
            Value::Dict(fields) if !k.contains('.') => {
                if k != WF_MANAGEMENT_NAME && !ui.forms.iter().any(|f| f.name == k) {
                    return Err(ui_error(format!(
                        "answers: no form {k} in {} (forms: {})",
                        ui.file,
                        ui.forms
                            .iter()
                            .map(|f| f.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )));
                }
                for f in fields.keys() {
                    let f = runtime::pyrepr::to_str(f);
                    if !has(&k, &f) {
                        return Err(ui_error(format!("answers: form {k} has no field {f}")));
                    }
                }
            }
            _ => match k.split_once('.') {
                Some((form, field)) if has(form, field) => {}
                _ => {
                    return Err(ui_error(format!(
                        "answers: `{k}` is not a form (mapping) or a `form.field` key"
                    )))
                }
            },
        }
    }
    Ok(())
}

impl Gen<'_> {
    fn field_value(&mut self, form: &Form, field: &Field, data: &Dict) -> Result<Value> {
        let ctx = self.ctx(data);
        let required = self.eval(&field.required, &ctx)?.truthy()
            && !matches!(field.ty, FieldType::Boolean | FieldType::FloatingIp);
        let fail = |msg: String| {
            field.pos.error(
                ErrorKind::UiValidationError,
                format!("{}.{}: {msg}", form.name, field.name),
            )
        };
        if let Some(a) = answer_for(&self.opts.answers, &form.name, &field.name) {
            // An application field answered with a mapping of forms (not an
            // object model): the answers for the application made for it.
            if let (FieldType::App(types), Value::Dict(d)) = (&field.ty, &a) {
                if !d.contains_key(&Value::str("?")) {
                    return self.app_sample(&form.name, field, types, required, Some(a.clone()));
                }
            }
            let clone = format!("{}-clone", field.name);
            if let Some(c) = answer_for(&self.opts.answers, &form.name, &clone) {
                if field.ty == FieldType::Password && c != a {
                    return Err(fail("Passwords do not match".into()));
                }
            }
            let v = self.coerce(field, a).map_err(fail)?;
            if let FieldType::App(_) = field.ty {
                return Ok(v);
            }
            self.validate(field, &v, required)?.map_err(fail)?;
            return Ok(v);
        }
        if let Some(init) = &field.initial {
            let raw = self.eval(init, &ctx)?;
            if !raw.is_null() || !matches!(field.ty, FieldType::App(_)) {
                let v = self.coerce(field, raw).map_err(fail)?;
                let empty_required = required && is_empty(&v);
                if !empty_required {
                    if let Err(m) = self.validate(field, &v, required)? {
                        self.notes.push(format!(
                            "{}.{}: its initial value is invalid: {m}",
                            form.name, field.name
                        ));
                    }
                    return Ok(v);
                }
            }
        }
        self.sample(&form.name, field, required)
    }

    pub(super) fn run(mut self) -> Result<Outcome> {
        check_answers(&self.opts.answers, self.ui)?;
        let mut data = Dict::default();
        for form in &self.ui.forms {
            let mut fd = Dict::default();
            data.insert(Value::str(&form.name), Value::dict(fd.clone()));
            for field in &form.fields {
                let v = self.field_value(form, field, &data)?;
                fd.insert(Value::str(&field.name), v);
                data.insert(Value::str(&form.name), Value::dict(fd.clone()));
            }
            let ctx = self.ctx(&data);
            for val in &form.validators {
                let ok = match &val.check {
                    Check::Yaql(t) => self.eval(t, &ctx)?.truthy(),
                    Check::Regexp(_) => true,
                };
                if !ok {
                    return Err(val.pos.error(
                        ErrorKind::UiValidationError,
                        format!(
                            "form {}: {}",
                            form.name,
                            val.message.as_deref().unwrap_or("validation failed")
                        ),
                    ));
                }
            }
        }
        let default_name = self
            .opts
            .package
            .rsplit('.')
            .next()
            .unwrap_or(&self.opts.package)
            .to_string();
        let app_name = match answer_for(&self.opts.answers, WF_MANAGEMENT_NAME, "application_name")
        {
            Some(v) => runtime::pyrepr::to_str(&v),
            None => default_name,
        };
        let mut wf = Dict::default();
        wf.insert(Value::str("application_name"), Value::str(&app_name));
        data.insert(Value::str(WF_MANAGEMENT_NAME), Value::dict(wf));
        let ctx = self.ctx(&data);
        let model = self.eval(&self.ui.application, &ctx)?;
        let Value::Dict(md) = &model else {
            return Err(self.ui.pos.error(
                ErrorKind::UiDefinitionError,
                "the Application section must evaluate to a mapping",
            ));
        };
        if !matches!(md.get(&Value::str("?")), Some(Value::Dict(q)) if q.contains_key(&Value::str("type")))
        {
            return Err(self.ui.pos.error(
                ErrorKind::UiDefinitionError,
                "the Application section needs `?: {type: <class>}`",
            ));
        }
        let mut model = model;
        if self.ui.version >= (UiVersion { major: 2, minor: 2 }) {
            model = set_app_name(model, &app_name);
        }
        let ids = self.host.ids.clone();
        let model = {
            let mut g = ids.lock().unwrap_or_else(|e| e.into_inner());
            insert_ids(model, &mut g)
        };
        Ok(Outcome {
            model,
            data: Value::dict(data),
            notes: self.notes,
            added: self.added,
        })
    }
}

fn set_app_name(model: Value, name: &str) -> Value {
    let Value::Dict(ref d) = model else {
        return model;
    };
    let mut d = (**d).clone();
    let mut q = match d.get(&Value::str("?")) {
        Some(Value::Dict(q)) => (**q).clone(),
        _ => Dict::default(),
    };
    q.insert(Value::str("name"), Value::str(name));
    let mut storage = Dict::default();
    storage.insert(Value::str("name"), Value::str(name));
    q.insert(Value::str(DASHBOARD_ATTRS_KEY), Value::dict(storage));
    d.insert(Value::str("?"), Value::dict(q));
    Value::dict(d)
}
