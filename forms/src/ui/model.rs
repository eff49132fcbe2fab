//! Generation of the object model: the forms filled in order, the
//! form validators, then the `Application` section with ids.

use super::*;

/// What [`generate`] needs besides the definition.
pub struct ModelOptions<'a> {
    /// The package's full name (seeds the ids; its last part is the
    /// default application name).
    pub package: String,
    /// Answers: `{form: {field: value}}` (or `{"form.field": value}`).
    pub answers: Option<Value>,
    /// Where application-typed fields find their packages.
    pub loader: Option<&'a PackageLoader>,
    /// Shared id generator (nested applications use their parent's).
    pub ids: Option<Arc<Mutex<IdGen>>>,
    /// Nesting depth of application-typed fields.
    pub nesting: usize,
}

/// The result of [`generate`].
pub struct Outcome {
    /// The application's object model.
    pub model: Value,
    /// The cleaned form data (`$`).
    pub data: Value,
    /// Which fields took samples, warnings.
    pub notes: Vec<String>,
    /// The applications made for application fields, in the order they
    /// were made (an application's own additions before it): the
    /// dashboard adds each to the environment beside this one, and the
    /// fields hold their ids.
    pub added: Vec<Value>,
}

fn answer_for(answers: &Option<Value>, form: &str, field: &str) -> Option<Value> {
    let Some(Value::Dict(a)) = answers else {
        return None;
    };
    if let Some(Value::Dict(f)) = a.get(&Value::str(form)) {
        if let Some(v) = f.get(&Value::str(field)) {
            return Some(v.clone());
        }
    }
    a.get(&Value::str(format!("{form}.{field}"))).cloned()
}

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

pub(super) struct Gen<'a> {
    pub(super) ui: &'a UiDefinition,
    pub(super) opts: &'a ModelOptions<'a>,
    pub(super) env: Env,
    pub(super) host: Arc<UiHost>,
    pub(super) regex_prog: Program,
    pub(super) notes: Vec<String>,
    pub(super) added: Vec<Value>,
}

impl Gen<'_> {
    pub(super) fn ctx(&self, data: &Dict) -> Arc<Frame> {
        let mut f = Frame::default();
        f.args.push(Value::dict(data.clone()));
        for (name, _) in &self.ui.templates {
            f.vars
                .push((name.as_str().into(), Value::str(format!("{MARK}{name}"))));
        }
        Arc::new(f)
    }

    pub(super) fn eval(&self, t: &Tpl, ctx: &Arc<Frame>) -> Result<Value> {
        self.host.eval(&self.env, t, ctx)
    }

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

/// Gives every `?` mapping an `id` (where it has none), in document order.
pub fn insert_ids(v: Value, ids: &mut IdGen) -> Value {
    match v {
        Value::Dict(ref d) => {
            let mut out = Dict::default();
            for (k, x) in d.iter() {
                if k.as_str() == Some("?") {
                    if let Value::Dict(q) = x {
                        let mut q = (**q).clone();
                        if !q.contains_key(&Value::str("id")) {
                            q.insert(Value::str("id"), Value::str(ids.uuid()));
                        }
                        out.insert(k.clone(), Value::dict(q));
                        continue;
                    }
                }
                out.insert(k.clone(), insert_ids(x.clone(), ids));
            }
            Value::dict(out)
        }
        Value::List(ref l) => Value::list(l.iter().map(|x| insert_ids(x.clone(), ids)).collect()),
        other => other,
    }
}

/// Fills the forms and evaluates the Application section.
pub fn generate(ui: &UiDefinition, opts: &ModelOptions) -> Result<Outcome> {
    let ids = opts
        .ids
        .clone()
        .unwrap_or_else(|| Arc::new(Mutex::new(IdGen::new(&opts.package))));
    let default_name = opts
        .package
        .rsplit('.')
        .next()
        .unwrap_or(&opts.package)
        .to_string();
    let app_name = match answer_for(&opts.answers, WF_MANAGEMENT_NAME, "application_name") {
        Some(v) => runtime::pyrepr::to_str(&v),
        None => default_name,
    };
    let host = Arc::new(UiHost {
        templates: ui.templates.iter().cloned().collect(),
        app_name,
        ids,
        refs: Mutex::new(HashMap::new()),
        depth: AtomicUsize::new(0),
    });
    let h: Arc<dyn Host> = host.clone();
    let env = Env::with_host(registry(), options(), h);
    let regex_prog = compiler::compile("$v =~ $p", &registry(), COMPILE)?;
    let g = Gen {
        ui,
        opts,
        env,
        host,
        regex_prog,
        notes: Vec::new(),
        added: Vec::new(),
    };
    g.run()
}

/// The object model of a package's UI (`None` when it has no UI).
pub fn package_model(pkg: &dyn PackageFormat, opts: &ModelOptions) -> Result<Option<Outcome>> {
    let Some(text) = pkg.ui()? else {
        return Ok(None);
    };
    let file = pkg
        .base()
        .source
        .display(&format!("UI/{}", pkg.base().manifest.ui));
    let ui = UiDefinition::parse(&text, &file)?;
    generate(&ui, opts).map(Some)
}
