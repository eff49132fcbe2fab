//! Generation of the object model: its options and outcome, the state
//! the forms are filled in ([`Gen`]; filling, validating and sampling
//! are its methods in `fill`, `validation` and `samples`), and the entry
//! points.

use std::collections::HashMap;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};

use compiler::Program;
use runtime::ctx::Frame;
use runtime::host::Host;
use runtime::{Dict, Env, Result, Value};

use package::{PackageFormat, PackageLoader};

use super::common::{COMPILE, MARK, WF_MANAGEMENT_NAME};
use super::definition::UiDefinition;
use super::host::{options, registry, IdGen, Tpl, UiHost};

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

pub(super) fn answer_for(answers: &Option<Value>, form: &str, field: &str) -> Option<Value> {
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
