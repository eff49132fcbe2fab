//! MuranoPL forms: JSON Schema for a class (its `In`/`InOut` properties)
//! and for its model builders (their arguments), as murano's
//! `schema_generator.generate_schema` produces it.
//!
//! Contracts are not run: their IR is translated ([`contract`]). Lists
//! become `array` schemas (integer items, the length bounds, are dropped),
//! dicts `object` schemas (an expression key gives
//! `additionalProperties`), and a chain of contract methods builds the
//! schema from `{}` link by link, as the contracts' `generate_schema` do.
//! `check()` predicates are split at `and` and the known patterns (`$ >
//! c`, `$ in list`, `$.matches(re)`), which the IR recognises, become
//! `minimum`/`maximum`/`enum`/`pattern`; their constants are evaluated in
//! the class's static context.
//!
//! Type names in contracts are resolved in the namespaces of the requested
//! class, inherited contracts included, as the reference does.
//!
//! Results are plain values (dicts in insertion order); `default` is the
//! declaration's raw `Default` with expressions written as their source.

use runtime::ErrorKind;
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, OnceLock};

use compiler::murano::meta::{merge_providers, Attached};
use compiler::murano::{MetaDecl, MetaTarget, PropertyUsage, Template, TemplateKind};
use compiler::CompileOptions;
use runtime::{Dict, Error, Result, Value};

use compiler::murano::ir::{
    self, CmpOp, ContractKind, DictKey, Link, LinkKind, Operand, OperandForm, Predicate, Subject,
};
use compiler::murano::LoadOptions;
use engine::exec::CTemplate;
use engine::{model, Class, Executor, Package};

const SCHEMA_URL: &str = "http://json-schema.org/draft-04/schema#";

/// The form meta-classes of murano's core library
/// (`io.murano.metadata.forms.*`, `io.murano.metadata.Position`).
const FORMS_YAML: &str = r#"Namespaces:
  =: io.murano.metadata.forms
Name: Hidden
Usage: Meta
Applies: [Property, Argument]
Inherited: true
Properties:
  visible:
    Contract: $.bool().notNull()
    Default: false
---
Namespaces:
  =: io.murano.metadata.forms
Name: Position
Usage: Meta
Applies: [Property, Argument]
Inherited: true
Properties:
  index:
    Contract: $.int()
    Default: null
  section:
    Contract: $.string()
    Default: null
---
Namespaces:
  =: io.murano.metadata.forms
Name: Section
Usage: Meta
Cardinality: Many
Applies: [Type, Method]
Inherited: true
Properties:
  name:
    Contract: $.string().notNull()
  title:
    Contract: $.string()
    Default: $.name
  index:
    Contract: $.int()
    Default: null
---
Namespaces:
  =: io.murano.metadata
Name: Position
Usage: Meta
Applies: [Property, Argument]
Inherited: true
Properties:
  index:
    Contract: $.int()
    Default: null
  section:
    Contract: $.string()
    Default: null
"#;

/// Meta-classes of murano's core library that are `Inherited: true` there.
const INHERITED_META: [&str; 8] = [
    "io.murano.metadata.Title",
    "io.murano.metadata.Description",
    "io.murano.metadata.HelpText",
    "io.murano.metadata.ModelBuilder",
    "io.murano.metadata.Position",
    "io.murano.metadata.forms.Hidden",
    "io.murano.metadata.forms.Position",
    "io.murano.metadata.forms.Section",
];

/// A package with the form meta-classes the core library lacks (add it
/// after the packages of a request), or `None` when it has them all.
pub fn forms_package() -> Option<Package> {
    // What the embedded core library lacks never changes: computed once.
    static MISSING: OnceLock<Vec<String>> = OnceLock::new();
    let missing = MISSING.get_or_init(|| {
        let probe = Executor::new(Vec::new());
        [
            "io.murano.metadata.forms.Hidden",
            "io.murano.metadata.forms.Position",
            "io.murano.metadata.forms.Section",
            "io.murano.metadata.Position",
        ]
        .iter()
        .filter(|n| probe.class(n).is_err())
        .map(|n| n.to_string())
        .collect()
    });
    if missing.is_empty() {
        return None;
    }
    let docs: Vec<&str> = FORMS_YAML
        .split("\n---\n")
        .filter(|d| {
            missing.iter().any(|m| {
                let (ns, name) = m.rsplit_once('.').unwrap_or(("", m));
                d.contains(&format!("=: {ns}\n")) && d.contains(&format!("Name: {name}\n"))
            })
        })
        .collect();
    let text = docs.join("\n---\n");
    Package::new(
        "io.murano.forms",
        "0.0.0",
        "1.4",
        &[("forms.yaml".to_string(), text)],
    )
    .ok()
}

// ---- small value helpers ---------------------------------------------------

fn key(s: &str) -> Value {
    Value::str(s)
}

fn dict_of(pairs: Vec<(&str, Value)>) -> Dict {
    let mut d = Dict::default();
    for (k, v) in pairs {
        d.insert(key(k), v);
    }
    d
}

fn type_value(base: &str, not_null: bool) -> Value {
    if not_null {
        Value::str(base)
    } else {
        Value::list(vec![Value::str(base), Value::str("null")])
    }
}

fn no_schema(msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::ValueError, msg)
}

// ---- meta ------------------------------------------------------------------

/// One attached meta object, with the class whose declaration carries it.
#[derive(Clone)]
struct MetaItem {
    owner: Arc<str>,
    meta: Attached<Value>,
}

/// Which schemas [`generate_schema`] produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// Exactly what murano's `schema_generator` answers (the conformance
    /// harness): type names and constants in every contract, inherited
    /// ones included, are resolved in the requested class (so an inherited
    /// contract naming a prefix the class does not declare fails with
    /// `KeyError`); only model builders by name, with all their arguments.
    Reference,
    /// The forms spec in full (the HTTP API and the forms page): contracts
    /// resolved in the class that declares them; `muranoObject` with the
    /// `version` to find its type with and a `context` schema from
    /// `check()`s on the object's properties; `len()` bounds as
    /// `minLength`/`maxLength` (`minItems`/`maxItems` for lists); the
    /// title defaulting to the property or argument name; model builders
    /// without their first argument (the object model); any public static
    /// method by name.
    Spec,
}

/// The generator: one executor, the requested class, caches.
struct Gen<'a> {
    ex: &'a Arc<Executor>,
    cls: Arc<Class>,
    dialect: Dialect,
    weights: HashMap<Arc<str>, i64>,
    metas: HashMap<String, Vec<Attached<Value>>>,
    /// What the contract translated last has that no schema keyword
    /// says (the specification's dialect): the part, and why.
    dropped: std::cell::RefCell<Vec<(String, String)>>,
}

/// The metas the specification's forms read (murano's generator reads
/// all but `io.murano.metadata.Position`).
const FORM_METAS: &[&str] = &[
    "io.murano.metadata.Title",
    "io.murano.metadata.Description",
    "io.murano.metadata.HelpText",
    "io.murano.metadata.forms.Hidden",
    "io.murano.metadata.forms.Position",
    "io.murano.metadata.Position",
    "io.murano.metadata.forms.Section",
    "io.murano.metadata.ModelBuilder",
];

/// The key of an entity schema's list of what it cannot express.
pub const UNREPRESENTED: &str = "x-muranopl-unrepresented";

impl<'a> Gen<'a> {
    fn new(ex: &'a Arc<Executor>, cls: Arc<Class>, dialect: Dialect) -> Gen<'a> {
        // murano_type.weigh_type_hierarchy: breadth-first distances.
        let mut weights = HashMap::new();
        let mut queue: VecDeque<(Arc<Class>, i64)> = VecDeque::new();
        queue.push_back((cls.clone(), 0));
        while let Some((c, w)) = queue.pop_front() {
            if weights.contains_key(&c.name) {
                continue;
            }
            weights.insert(c.name.clone(), w);
            for p in &c.parents {
                queue.push_back((p.clone(), w + 1));
            }
        }
        Gen {
            ex,
            cls,
            dialect,
            weights,
            metas: HashMap::new(),
            dropped: Default::default(),
        }
    }

    /// The meta objects of one declaration, instantiated in the context of
    /// the declaring class.
    fn decl_items(
        &mut self,
        owner: &Arc<Class>,
        target: MetaTarget,
        cache_key: String,
        metas: &[MetaDecl],
    ) -> Result<Vec<Attached<Value>>> {
        if let Some(v) = self.metas.get(&cache_key) {
            return Ok(v.clone());
        }
        let ex = self.ex;
        let mut out = Vec::new();
        if !metas.is_empty() {
            let legacy = owner.package.legacy;
            let reg = engine::murano_registry(legacy);
            let copts = CompileOptions {
                legacy,
                murano: true,
            };
            let env = ex.env(legacy).clone();
            let ctx = ex.class_ctx(owner, Value::Type(owner.type_ref.clone()));
            let mut used = HashSet::new();
            for (i, md) in metas.iter().enumerate() {
                let mc = ex.class(&md.name)?;
                engine::check_meta(&mc.decl, target, &mut used)?;
                let t = CTemplate::compile(&md.props, &reg, copts)?;
                let props = match t.eval(&env, &ctx)? {
                    Value::Dict(ref d) => (**d).clone(),
                    Value::Null => Dict::default(),
                    _ => return Err(Error::value("Invalid Meta format")),
                };
                let r = ex.create(&mc, None, None);
                model::init_properties(ex, &r, &props)?;
                model::run_init(ex, &r, &props)?;
                out.push(Attached {
                    id: format!("{cache_key}#{i}"),
                    ty: mc.name.clone(),
                    cardinality: mc.decl.cardinality,
                    inherited: mc.decl.inherited || INHERITED_META.contains(&&*mc.name),
                    value: Value::Object(r),
                });
            }
        }
        self.metas.insert(cache_key, out.clone());
        Ok(out)
    }

    /// `meta.merge_providers` over the inheritance graph from `initial`
    /// ([`merge_providers`]).
    fn merge(
        &mut self,
        initial: &Arc<Class>,
        producer: &dyn Fn(&mut Gen, &Arc<Class>) -> Result<Vec<Attached<Value>>>,
    ) -> Result<Vec<MetaItem>> {
        let merged = merge_providers(
            initial,
            &|c: &Arc<Class>| c.name.clone(),
            &|c: &Arc<Class>| &c.parents[..],
            &mut |c: &Arc<Class>| producer(self, c),
        )?;
        Ok(merged
            .into_iter()
            .map(|(owner, meta)| MetaItem { owner, meta })
            .collect())
    }

    fn type_meta(&mut self, cls: &Arc<Class>) -> Result<Vec<MetaItem>> {
        self.merge(cls, &|g: &mut Gen, c: &Arc<Class>| {
            g.decl_items(c, MetaTarget::Type, format!("T|{}", c.name), &c.decl.meta)
        })
    }

    fn method_meta(&mut self, cls: &Arc<Class>, name: &str) -> Result<Vec<MetaItem>> {
        let name = name.to_string();
        self.merge(cls, &move |g: &mut Gen, c: &Arc<Class>| {
            let Some(m) = c.decl.method(&name) else {
                return Ok(Vec::new());
            };
            let key = format!("M|{}|{}", c.name, name);
            g.decl_items(c, MetaTarget::Method, key, &m.meta)
        })
    }

    fn prop_meta(&mut self, cls: &Arc<Class>, name: &str) -> Result<Vec<MetaItem>> {
        let name = name.to_string();
        self.merge(cls, &move |g: &mut Gen, c: &Arc<Class>| {
            let Some(pd) = c.decl.property(&name) else {
                return Ok(Vec::new());
            };
            let key = format!("P|{}|{}", c.name, name);
            g.decl_items(c, MetaTarget::Property, key, &pd.meta)
        })
    }

    fn arg_meta(&mut self, cls: &Arc<Class>, method: &str, name: &str) -> Result<Vec<MetaItem>> {
        let Some(m) = cls.decl.methods.iter().find(|m| m.name == method) else {
            return Ok(Vec::new());
        };
        let Some(a) = m.arguments.iter().find(|a| a.name == name) else {
            return Ok(Vec::new());
        };
        let metas = a.meta.clone();
        let items = self.decl_items(
            cls,
            MetaTarget::Argument,
            format!("A|{}|{}|{}", cls.name, method, name),
            &metas,
        )?;
        Ok(items
            .into_iter()
            .map(|meta| MetaItem {
                owner: cls.name.clone(),
                meta,
            })
            .collect())
    }

    fn prop_of(&self, item: &MetaItem, name: &str) -> Result<Value> {
        match &item.meta.value {
            Value::Object(r) => self.ex.get_property(r, name, true),
            _ => Ok(Value::Null),
        }
    }

    fn weight(&self, owner: &str) -> i64 {
        self.weights.get(owner).copied().unwrap_or(0)
    }

    fn form_index(&self, index: &Value, owner: &str) -> Option<i64> {
        let i = match index {
            Value::Int(i) => *i,
            Value::Bool(b) => *b as i64,
            _ => return None,
        };
        Some((i + 1) * self.weights.len() as i64 - self.weight(owner))
    }

    // ---- ui hints and sections ---------------------------------------------

    /// `generate_ui_hints`: title, description, helpText, visible,
    /// formSection, formIndex.
    fn ui_hints(&self, metas: &[MetaItem], out: &mut Dict) -> Result<()> {
        for (cls_name, schema_prop, meta_prop) in [
            ("io.murano.metadata.Title", "title", "text"),
            ("io.murano.metadata.Description", "description", "text"),
            ("io.murano.metadata.HelpText", "helpText", "text"),
            ("io.murano.metadata.forms.Hidden", "visible", "visible"),
        ] {
            if let Some(m) = single(metas, cls_name) {
                out.insert(key(schema_prop), self.prop_of(m, meta_prop)?);
            }
        }
        // The specification names the meta `io.murano.metadata.Position`;
        // murano's generator reads only the forms one.
        let pos = single(metas, "io.murano.metadata.forms.Position").or_else(|| {
            (self.dialect == Dialect::Spec)
                .then(|| single(metas, "io.murano.metadata.Position"))
                .flatten()
        });
        if let Some(pos) = pos {
            out.insert(key("formSection"), self.prop_of(pos, "section")?);
            let index = self.prop_of(pos, "index")?;
            if !index.is_null() {
                match self.form_index(&index, &pos.owner) {
                    Some(i) => {
                        out.insert(key("formIndex"), Value::Int(i));
                    }
                    None => return Err(no_schema("bad Position index")),
                }
            }
        }
        Ok(())
    }

    /// `generate_sections`.
    fn sections(&self, metas: &[MetaItem]) -> Result<Dict> {
        let mut map: Vec<(Value, &MetaItem)> = Vec::new();
        for s in metas
            .iter()
            .filter(|m| &*m.meta.ty == "io.murano.metadata.forms.Section")
        {
            let name = self.prop_of(s, "name")?;
            if let Some(slot) = map.iter().position(|(n, _)| *n == name) {
                let ex = map[slot].1;
                let (we, ws) = (self.weight(&ex.owner), self.weight(&s.owner));
                if we < ws {
                    continue;
                }
                if we == ws {
                    let index = self.prop_of(s, "index")?;
                    if index.is_null() {
                        continue;
                    }
                    let ex_index = self.prop_of(ex, "index")?;
                    if !ex_index.is_null() && le(&ex_index, &index) {
                        continue;
                    }
                }
                map[slot].1 = s;
            } else {
                map.push((name, s));
            }
        }
        let mut ordered: Vec<(i64, &MetaItem)> = Vec::new();
        let mut unordered: Vec<&MetaItem> = Vec::new();
        for (_, s) in &map {
            let index = self.prop_of(s, "index")?;
            if index.is_null() {
                unordered.push(s);
            } else {
                let k = self
                    .form_index(&index, &s.owner)
                    .ok_or_else(|| no_schema("bad Section index"))?;
                ordered.push((k, s));
            }
        }
        ordered.sort_by_key(|(k, _)| *k);
        let mut out = Dict::default();
        let mut n = 0i64;
        for (_, s) in ordered {
            let name = self.prop_of(s, "name")?;
            if out.get(&name).is_none() {
                let title = self.prop_of(s, "title")?;
                out.insert(
                    name,
                    Value::dict(dict_of(vec![("title", title), ("index", Value::Int(n))])),
                );
                n += 1;
            }
        }
        for s in unordered {
            let name = self.prop_of(s, "name")?;
            if out.get(&name).is_none() {
                let title = self.prop_of(s, "title")?;
                out.insert(name, Value::dict(dict_of(vec![("title", title)])));
            }
        }
        Ok(out)
    }

    // ---- entities ------------------------------------------------------------

    fn model_builders(&mut self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        let chain: Vec<Arc<Class>> = std::iter::once(self.cls.clone())
            .chain(self.cls.ancestors.iter().cloned())
            .collect();
        for c in &chain {
            for m in &c.decl.methods {
                if !names.contains(&m.name) {
                    names.push(m.name.clone());
                }
            }
        }
        let mut out = Vec::new();
        for n in names {
            let Some(m) = self.cls.find_method(&n) else {
                continue;
            };
            if !m.is_action() || !m.is_static() {
                continue;
            }
            let Ok(decl_cls) = self.ex.class(&m.class) else {
                continue;
            };
            let Ok(metas) = self.method_meta(&decl_cls, &n) else {
                continue;
            };
            if let Some(b) = single(&metas, "io.murano.metadata.ModelBuilder") {
                if self.prop_of(b, "enabled").is_ok_and(|v| truthy(&v)) {
                    out.push(n);
                }
            }
        }
        out
    }

    fn class_schema(&mut self) -> Result<Value> {
        let cls = self.cls.clone();
        let mut names: Vec<Arc<str>> = Vec::new();
        for c in cls.mro() {
            for p in &c.props {
                if !names.contains(&p.name) {
                    names.push(p.name.clone());
                }
            }
        }
        let mut props = Dict::default();
        let mut report = Vec::new();
        for n in names {
            let Some((decl_cls, p)) = cls.find_prop(&n) else {
                continue;
            };
            if !matches!(p.usage, PropertyUsage::In | PropertyUsage::InOut) {
                continue;
            }
            let decl_cls = self.ex.class(&decl_cls.name)?;
            let Some(pd) = decl_cls.decl.property(&n) else {
                continue;
            };
            let mut s = self.translate_top(&pd.contract, &decl_cls)?;
            if let Some(d) = &pd.default {
                s.insert(key("default"), raw_value(d));
            }
            let metas = self.prop_meta(&decl_cls, &n)?;
            self.ui_hints(&metas, &mut s)?;
            self.default_title(&n, &mut s);
            self.report_field(&mut report, &n, &metas);
            props.insert(Value::str(&*n), Value::dict(s));
        }
        let metas = self.type_meta(&cls)?;
        let mut schema = self.entity_schema(props, &metas)?;
        self.ui_hints(&metas, &mut schema)?;
        self.report_field(&mut report, "", &metas);
        add_report(&mut schema, report);
        Ok(Value::dict(schema))
    }

    /// The spec's title default: the property or argument name.
    fn default_title(&self, name: &str, schema: &mut Dict) {
        if self.dialect == Dialect::Spec && schema.get(&key("title")).is_none() {
            schema.insert(key("title"), Value::str(name));
        }
    }

    fn method_schema(&mut self, name: &str, is_builder: bool) -> Result<Value> {
        let m = self.cls.find_method(name).ok_or_else(|| {
            Error::new(
                ErrorKind::NoMethodFound,
                format!("Method {name} is not found"),
            )
        })?;
        let decl_cls = self.ex.class(&m.class)?;
        let mut props = Dict::default();
        // The spec: a model builder's first argument, the object model it
        // gets, is not part of its form.
        let skip = usize::from(self.dialect == Dialect::Spec && is_builder);
        let mut report = Vec::new();
        for a in m.decl.arguments.iter().skip(skip) {
            let mut s = self.translate_top(&a.contract, &decl_cls)?;
            if let Some(d) = &a.default {
                s.insert(key("default"), raw_value(d));
            }
            let metas = self.arg_meta(&decl_cls, name, &a.name)?;
            self.ui_hints(&metas, &mut s)?;
            self.default_title(&a.name, &mut s);
            self.report_field(&mut report, &a.name, &metas);
            props.insert(Value::str(a.name.as_str()), Value::dict(s));
        }
        let metas = self.method_meta(&decl_cls, name)?;
        let mut schema = self.entity_schema(props, &metas)?;
        self.ui_hints(&metas, &mut schema)?;
        self.report_field(&mut report, "", &metas);
        add_report(&mut schema, report);
        if let (1, Some(first)) = (skip, m.decl.arguments.first()) {
            // Where a caller passes the model to the builder.
            schema.insert(key("modelArgument"), Value::str(first.name.as_str()));
        }
        Ok(Value::dict(schema))
    }

    /// Adds to `report` what the field `field` (`""`: the class or
    /// method itself) has that its schema does not say: the parts of its
    /// contract translated last, and each meta no form keyword comes from.
    fn report_field(&self, report: &mut Vec<Value>, field: &str, metas: &[MetaItem]) {
        if self.dialect != Dialect::Spec {
            return;
        }
        let entry = |item: String, why: String| {
            let mut d = dict_of(vec![("item", Value::str(&item)), ("why", Value::str(&why))]);
            if !field.is_empty() {
                d.insert(key("field"), Value::str(field));
            }
            Value::dict(d)
        };
        for (item, why) in self.dropped.borrow_mut().drain(..) {
            report.push(entry(item, why));
        }
        let mut seen: Vec<&str> = Vec::new();
        for m in metas {
            let ty = &*m.meta.ty;
            if FORM_METAS.contains(&ty) || seen.contains(&ty) {
                continue;
            }
            seen.push(ty);
            report.push(entry(
                format!("meta {ty}"),
                "no form schema keyword says what this meta says".to_string(),
            ));
        }
    }

    fn entity_schema(&self, props: Dict, metas: &[MetaItem]) -> Result<Dict> {
        Ok(dict_of(vec![
            ("$schema", Value::str(SCHEMA_URL)),
            ("type", Value::str("object")),
            ("properties", Value::dict(props)),
            ("additionalProperties", Value::Bool(false)),
            ("formSections", Value::dict(self.sections(metas)?)),
        ]))
    }
}

/// `schema` with the [`UNREPRESENTED`] list when `report` has entries.
fn add_report(schema: &mut Dict, report: Vec<Value>) {
    if !report.is_empty() {
        schema.insert(key(UNREPRESENTED), Value::list(report));
    }
}

/// Python `a <= b` for the numbers a meta index holds.
fn le(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => x <= y,
        _ => match (num(a), num(b)) {
            (Some(x), Some(y)) => x <= y,
            _ => false,
        },
    }
}

fn num(v: &Value) -> Option<f64> {
    match v {
        Value::Int(i) => Some(*i as f64),
        Value::Float(f) => Some(*f),
        Value::Bool(b) => Some(*b as i64 as f64),
        _ => None,
    }
}

fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Int(i) => *i != 0,
        Value::Float(f) => *f != 0.0,
        Value::Str(s) => !s.is_empty(),
        Value::List(l) => !l.is_empty(),
        Value::Dict(d) => !d.is_empty(),
        _ => true,
    }
}

/// The single meta object of a meta-class in aggregated meta
/// (`aggregate_meta` keeps a lone cardinality-One object as itself).
fn single<'m>(metas: &'m [MetaItem], ty: &str) -> Option<&'m MetaItem> {
    let mut it = metas.iter().filter(|m| &*m.meta.ty == ty);
    let first = it.next()?;
    if it.next().is_some() || !first.meta.one() {
        return None;
    }
    Some(first)
}

/// A declaration's raw value: expressions as their source text.
fn raw_value(t: &Template) -> Value {
    match &t.kind {
        TemplateKind::Value(v) => v.clone(),
        TemplateKind::Expr { src, .. } => Value::str(&**src),
        TemplateKind::List(items) => Value::list(items.iter().map(raw_value).collect()),
        TemplateKind::Dict(items) => {
            let mut d = Dict::default();
            for (k, v) in items {
                d.insert(raw_value(k), raw_value(v));
            }
            Value::dict(d)
        }
    }
}

/// `generate_schema`: the schemas of `class_name` (`""`) and of its model
/// builders, or of the requested ones among them (`""` is the class; in
/// the [`Dialect::Spec`], any public static method). `package` restricts
/// the class to that package.
pub fn generate_schema(
    ex: &Arc<Executor>,
    class_name: &str,
    methods: Option<&[String]>,
    package: Option<&str>,
    dialect: Dialect,
) -> Result<Vec<(String, Value)>> {
    let cls = ex.class(class_name)?;
    if let Some(p) = package {
        if !ex.packages().iter().any(|x| &*x.name == p) {
            return Err(Error::new(
                ErrorKind::NoPackageFound,
                format!("Package {p} is not found"),
            ));
        }
        if &*cls.package.name != p {
            return Err(Error::new(
                ErrorKind::NoClassFound,
                format!("Class \"{class_name}\" is not found in {p}"),
            ));
        }
    }
    let mut g = Gen::new(ex, cls.clone(), dialect);
    let mut builders = vec![String::new()];
    builders.extend(g.model_builders());
    let wanted: Vec<String> = match methods {
        Some(m) if !m.is_empty() => {
            let mut names: Vec<String> = Vec::new();
            for name in m {
                let static_action = dialect == Dialect::Spec
                    && cls
                        .find_method(name)
                        .is_some_and(|f| f.is_action() && f.is_static());
                if (builders.contains(name) || static_action) && !names.contains(name) {
                    names.push(name.clone());
                }
            }
            // In the reference's order: the class, then its builders.
            if dialect == Dialect::Reference {
                names = builders.into_iter().filter(|b| names.contains(b)).collect();
            }
            names
        }
        _ => builders.clone(),
    };
    let mut out = Vec::new();
    for name in wanted {
        let s = if name.is_empty() {
            g.class_schema()?
        } else {
            let is_builder = g.model_builders().contains(&name);
            g.method_schema(&name, is_builder)?
        };
        out.push((name, s));
    }
    Ok(out)
}

// ---- contracts ----------------------------------------------------------
//
// Contracts to JSON Schema, read from the contract IR
// ([`compiler::murano::ir::Contract`]) as murano's contracts'
// `generate_schema` build it: lists become `array` schemas (their length
// bounds dropped), dicts `object` schemas (a key contract gives
// `additionalProperties`), and a chain of contract methods on `$`
// (`string`, `int`, `bool`, `notNull`, `check`, `class`, `template`,
// `owned`, `notOwned`) builds the schema link by link from `{}`. A
// `check()` predicate's conjuncts that are comparisons, memberships or
// regular-expression matches (the IR's [`Predicate`]) become
// `minimum`/`maximum`, `enum` and `pattern`; their operands are evaluated
// in the class's static context.
/// The schema's marker of a `notNull()` seen, removed when the schema is
/// done (`#finalize` of murano's schema context).
const NOT_NULL: &str = "_notNull";

/// Where a contract's names and constants are read.
struct ExprCx<'s> {
    /// The text of the expression the operands are parts of.
    src: &'s str,
    legacy: bool,
    /// The class whose namespaces and static context the contract's names
    /// and constants are resolved in.
    scope: &'s Arc<Class>,
}

impl Gen<'_> {
    /// A property's or argument's schema: must be a dict.
    pub(super) fn translate_top(&self, t: &Template, owner: &Arc<Class>) -> Result<Dict> {
        let legacy = owner.package.legacy;
        let c = ir::lower_contract(t, LoadOptions { legacy })?;
        match self.translate(&c, owner)? {
            Value::Dict(ref d) => Ok((**d).clone()),
            _ => Err(no_schema(format!(
                "{}: the contract does not translate to a schema",
                t.pos
            ))),
        }
    }

    /// `translate`: a contract of class `owner` to its schema.
    fn translate(&self, c: &ir::Contract, owner: &Arc<Class>) -> Result<Value> {
        Ok(match &c.kind {
            ContractKind::Dict(items) => {
                let mut props = Dict::default();
                let mut additional = Value::Bool(false);
                for (k, v) in items {
                    match k {
                        DictKey::Const(kv) => {
                            let tv = self.translate(v, owner)?;
                            props.insert(kv.clone(), tv);
                        }
                        DictKey::Contract(k)
                            if matches!(
                                k.kind,
                                ContractKind::List { .. } | ContractKind::Dict(_)
                            ) =>
                        {
                            return Err(no_schema("unhashable dict contract key"))
                        }
                        DictKey::Contract(_) => additional = self.translate(v, owner)?,
                    }
                }
                Value::dict(dict_of(vec![
                    ("type", Value::str("object")),
                    ("properties", Value::dict(props)),
                    ("additionalProperties", additional),
                ]))
            }
            ContractKind::List { items, min, max } => {
                let mut out = Vec::new();
                for it in items {
                    // murano drops every integer of a list spec, not only
                    // its trailing length bounds.
                    if matches!(it.kind, ContractKind::Const(Value::Int(_) | Value::Bool(_))) {
                        continue;
                    }
                    out.push(self.translate(it, owner)?);
                }
                let mut d = dict_of(vec![("type", Value::str("array"))]);
                match out.len() {
                    0 => {}
                    1 => {
                        d.insert(key("items"), out.pop().unwrap_or(Value::Null));
                    }
                    _ => {
                        let last = out.last().cloned().unwrap_or(Value::Null);
                        d.insert(key("items"), Value::list(out));
                        d.insert(key("additionalItems"), last);
                    }
                }
                // The specification's forms say what the contract's length
                // bounds say (murano's own generator drops them).
                if self.dialect == Dialect::Spec {
                    if *min > 0 {
                        d.insert(key("minItems"), Value::Int(*min));
                    }
                    if let Some(m) = max.filter(|m| *m >= 0) {
                        d.insert(key("maxItems"), Value::Int(m));
                    }
                }
                Value::dict(d)
            }
            ContractKind::Any => Value::dict(Dict::default()),
            ContractKind::Null | ContractKind::Const(_) => Value::Null,
            ContractKind::Chain { expr, links } => {
                let cx = self.expr_cx(&expr.src, owner);
                let mut d = Dict::default();
                for l in links {
                    d = self.link(&cx, d, l)?;
                }
                finalize(Value::dict(d))
            }
            ContractKind::Expr(y) => {
                return Err(no_schema(format!(
                    "unsupported contract expression `{}`",
                    y.src
                )))
            }
            ContractKind::Static(y) => {
                let cx = self.expr_cx(&y.src, owner);
                finalize(self.eval_plain(&cx, &y.src)?)
            }
        })
    }

    fn expr_cx<'s>(&'s self, src: &'s str, owner: &'s Arc<Class>) -> ExprCx<'s> {
        let scope = match self.dialect {
            Dialect::Reference => &self.cls,
            Dialect::Spec => owner,
        };
        ExprCx {
            src,
            legacy: owner.package.legacy,
            scope,
        }
    }

    /// The schema `d` built so far with link `l` applied.
    fn link(&self, cx: &ExprCx, mut d: Dict, l: &Link) -> Result<Dict> {
        let not_null = d.get(&key(NOT_NULL)).is_some();
        match &l.kind {
            LinkKind::String | LinkKind::Int | LinkKind::Bool => {
                let base = match l.kind {
                    LinkKind::String => "string",
                    LinkKind::Int => "integer",
                    _ => "boolean",
                };
                Ok(dict_of(vec![("type", type_value(base, not_null))]))
            }
            LinkKind::NotNull => {
                if let Some(Value::List(ref types)) = d.get(&key("type")).cloned() {
                    let mut ts: Vec<Value> = types.to_vec();
                    if let Some(i) = ts.iter().position(|t| t.as_str() == Some("null")) {
                        ts.remove(i);
                        let nt = if ts.len() == 1 {
                            ts.pop().unwrap_or(Value::Null)
                        } else {
                            Value::list(ts)
                        };
                        d.insert(key("type"), nt);
                    }
                }
                d.insert(key(NOT_NULL), Value::Bool(true));
                Ok(d)
            }
            LinkKind::Owned | LinkKind::NotOwned => {
                d.insert(key("owned"), Value::Bool(l.kind == LinkKind::Owned));
                Ok(d)
            }
            LinkKind::Check { shape, .. } => {
                let parts = self.conjuncts(shape);
                let mut left = 0;
                for this in &parts {
                    match self.extract_pattern(cx, this, &d) {
                        Some((path, res)) => d = constrain(d, &path, res),
                        None => left += 1,
                    }
                }
                if left > 0 && self.dialect == Dialect::Spec {
                    self.dropped.borrow_mut().push((
                        l.text(cx.src).to_string(),
                        format!(
                            "{left} of {} conditions of check() have no JSON Schema form \
                             (a comparison with a constant, `in` a constant list, matches() \
                             of a constant or `=` a constant has); not validated by the form",
                            parts.len()
                        ),
                    ));
                }
                Ok(d)
            }
            LinkKind::Class {
                name,
                default,
                version,
            } => self.object_schema(cx, "class", not_null, name, default, version),
            LinkKind::Template {
                name,
                exclude,
                default_type,
                version,
            } => {
                let mut out =
                    self.object_schema(cx, "template", not_null, name, default_type, version)?;
                out.insert(key("owned"), Value::Bool(true));
                if let Some(ep) = exclude {
                    let v = match ep.literal() {
                        Some(v) => v.clone(),
                        None => self.eval_plain(cx, ep.text(cx.src))?,
                    };
                    if truthy(&v) {
                        out.insert(key("excludedProperties"), v);
                    }
                }
                Ok(out)
            }
            LinkKind::Call { .. } => Err(no_schema(format!(
                "unsupported contract expression `{}`",
                l.text(cx.src)
            ))),
        }
    }

    /// The schema of `class()` or `template()` (`method`) of type `name`.
    fn object_schema(
        &self,
        cx: &ExprCx,
        method: &str,
        not_null: bool,
        name: &Operand,
        default: &Option<Operand>,
        version: &Option<Operand>,
    ) -> Result<Dict> {
        let ty = self.type_arg(cx, name)?.ok_or_else(|| {
            Error::new(
                ErrorKind::ValueError,
                format!("{method}(): the type must not be null"),
            )
        })?;
        if let Some(dt) = default {
            self.type_arg(cx, dt)?;
        }
        let mut out = dict_of(vec![
            ("type", type_value("muranoObject", not_null)),
            ("muranoType", Value::str(&ty)),
        ]);
        if self.dialect == Dialect::Spec {
            let given = version.as_ref().and_then(|e| self.constant(cx, e));
            let version = match given {
                Some(v) => v,
                None => Value::str(self.version_of(cx, &ty)?),
            };
            out.insert(key("version"), version);
        }
        Ok(out)
    }

    /// A type argument of `class()`/`template()`: resolved in the names
    /// scope of `cx`.
    fn type_arg(&self, cx: &ExprCx, e: &Operand) -> Result<Option<String>> {
        let name = match &e.form {
            OperandForm::Literal(Value::Str(s)) => s.to_string(),
            OperandForm::Literal(Value::Null) => return Ok(None),
            OperandForm::NsName(n) => n.clone(),
            OperandForm::Literal(_) | OperandForm::Static | OperandForm::Dynamic => {
                match self.eval_plain(cx, e.text(cx.src))? {
                    Value::Null => return Ok(None),
                    Value::Str(ref s) => s.to_string(),
                    Value::Type(ref t) => {
                        return Ok(Some(self.ex.class(&t.name)?.name.to_string()))
                    }
                    Value::Object(ref o) => return Ok(Some(self.ex.class_of(o)?.name.to_string())),
                    _ => return Err(no_schema("bad type argument")),
                }
            }
        };
        let full = cx.scope.decl.resolve_name(&name)?;
        Ok(Some(self.ex.class(&full)?.name.to_string()))
    }

    /// The parts of a `check()` predicate `A and B and ...` tried as
    /// patterns. murano's loop splits off the right operand only: `and`
    /// is left-associative, so of `A and B and C` it tries `A and B` (no
    /// pattern) and `C`. The spec splits at every `and`.
    fn conjuncts<'p>(&self, pred: &'p Predicate) -> Vec<&'p Predicate> {
        let mut out = Vec::new();
        let mut p = pred;
        while let Predicate::And(l, r) = p {
            match self.dialect {
                Dialect::Reference => out.push(&**l),
                Dialect::Spec => out.extend(self.conjuncts(l)),
            }
            p = r;
        }
        out.push(p);
        out
    }

    /// The subjects a dialect constrains: `$` itself in murano's; in the
    /// spec, property paths under it and lengths too.
    fn subject_ok(&self, s: &Subject) -> bool {
        self.dialect == Dialect::Spec || s.is_value()
    }

    /// `extract_pattern` of a `check()` conjunct: the schema keys it gives
    /// and the property path under `$` they constrain (empty: the value
    /// itself).
    fn extract_pattern(
        &self,
        cx: &ExprCx,
        p: &Predicate,
        schema: &Dict,
    ) -> Option<(Vec<String>, Vec<(Value, Value)>)> {
        match p {
            Predicate::Compare {
                subject,
                op,
                bound,
                subject_left,
            } if self.subject_ok(subject) => {
                let c = self.constant(cx, bound)?;
                // murano indexes its operator tuple `(>, <, >=, <=)` with
                // `-1 - i` when `$` is on the right: `>` becomes `<=`.
                let op = match (subject_left, op) {
                    (true, op) => *op,
                    (false, CmpOp::Gt) => CmpOp::Le,
                    (false, CmpOp::Lt) => CmpOp::Ge,
                    (false, CmpOp::Ge) => CmpOp::Lt,
                    (false, CmpOp::Le) => CmpOp::Gt,
                };
                if subject.len {
                    return Some((subject.path.clone(), length_bound(op, &c, schema)?));
                }
                let (k, x, excl) = match op {
                    CmpOp::Gt => ("minimum", "exclusiveMinimum", true),
                    CmpOp::Ge => ("minimum", "exclusiveMinimum", false),
                    CmpOp::Lt => ("maximum", "exclusiveMaximum", true),
                    CmpOp::Le => ("maximum", "exclusiveMaximum", false),
                };
                Some((
                    subject.path.clone(),
                    vec![(key(k), c), (key(x), Value::Bool(excl))],
                ))
            }
            Predicate::In { subject, set } if self.subject_ok(subject) => {
                match self.constant(cx, set)? {
                    v @ Value::List(_) => Some((subject.path.clone(), vec![(key("enum"), v)])),
                    _ => None,
                }
            }
            Predicate::Matches { subject, pattern } if self.subject_ok(subject) => {
                let c = self.constant(cx, pattern)?;
                Some((subject.path.clone(), vec![(key("pattern"), c)]))
            }
            // The specification's forms: a value that must equal a
            // constant is an `enum` of one (draft-04 has no `const`);
            // murano's generator leaves equality out.
            Predicate::Equals { subject, value } if self.dialect == Dialect::Spec => {
                let c = self.constant(cx, value)?;
                Some((
                    subject.path.clone(),
                    vec![(key("enum"), Value::list(vec![c]))],
                ))
            }
            _ => None,
        }
    }

    /// `evaluate_constant`: a literal, or the operand's value in the
    /// class's static context when it does not use `$`; `None` otherwise
    /// (and for null).
    fn constant(&self, cx: &ExprCx, e: &Operand) -> Option<Value> {
        let v = match &e.form {
            OperandForm::Literal(v) => v.clone(),
            OperandForm::Dynamic => return None,
            OperandForm::NsName(_) | OperandForm::Static => {
                self.eval_plain(cx, e.text(cx.src)).ok()?
            }
        };
        if v.is_null() {
            None
        } else {
            Some(v)
        }
    }

    /// The version spec the class `ty` named in a contract of `cx.scope`
    /// is found with: what the declaring package's manifest requires of the
    /// type's package, or the exact version of the package the type is in.
    fn version_of(&self, cx: &ExprCx, ty: &str) -> Result<String> {
        let from = &cx.scope.package;
        let cls = self.ex.class_from(ty, Some(from))?;
        let pkg = &cls.package;
        if pkg.name != from.name {
            if let Some((_, spec)) = from.requires.iter().find(|(n, _)| **n == *pkg.name) {
                let text = spec.text.trim();
                return Ok(if text.is_empty() {
                    spec.to_string()
                } else {
                    text.to_string()
                });
            }
        }
        Ok(format!("={}", pkg.version))
    }

    /// Evaluates expression text `src` with the engine in the static
    /// context of `cx.scope`.
    fn eval_plain(&self, cx: &ExprCx, src: &str) -> Result<Value> {
        let reg = engine::murano_registry(cx.legacy);
        let prog = compiler::compile(
            src,
            &reg,
            CompileOptions {
                legacy: cx.legacy,
                murano: true,
            },
        )?;
        let env = self.ex.env(cx.legacy);
        let scope = cx.scope;
        let ctx = self
            .ex
            .class_ctx(scope, Value::Type(scope.type_ref.clone()));
        let prev = self.ex.set_caller(Some(scope.key.clone()));
        let r = prog.eval_in(env, &ctx);
        self.ex.set_caller(prev);
        match r? {
            v @ Value::Iter(_) => Ok(v),
            v => stdlib::finalize(env, v),
        }
    }
}

/// `#finalize` of the schema context: the `notNull()` marker removed.
fn finalize(v: Value) -> Value {
    match &v {
        Value::Dict(d) if d.get(&key(NOT_NULL)).is_some() => {
            let mut d2 = (**d).clone();
            d2.shift_remove(&key(NOT_NULL));
            Value::dict(d2)
        }
        _ => v,
    }
}

/// `schema` with a `check()` pattern's keys `res` set on the property at
/// `path` (empty: the value itself); a path constrains only a
/// `muranoObject`, in its `context`.
fn constrain(mut schema: Dict, path: &[String], res: Vec<(Value, Value)>) -> Dict {
    if path.is_empty() {
        for (k, v) in res {
            schema.insert(k, v);
        }
    } else if is_object_schema(&schema) {
        let ctx = match schema.get(&key("context")) {
            Some(Value::Dict(c)) => (**c).clone(),
            _ => Dict::default(),
        };
        schema.insert(key("context"), Value::dict(at_path(ctx, path, res)));
    }
    schema
}

/// `minLength`/`maxLength` (`minItems`/`maxItems` for an array schema)
/// for a length compared with an integer.
fn length_bound(op: CmpOp, c: &Value, schema: &Dict) -> Option<Vec<(Value, Value)>> {
    let Value::Int(n) = c else { return None };
    let array = match schema.get(&key("type")) {
        Some(Value::Str(t)) => &**t == "array",
        Some(Value::List(ts)) => ts.iter().any(|t| t.as_str() == Some("array")),
        _ => false,
    };
    let (min, max) = if array {
        ("minItems", "maxItems")
    } else {
        ("minLength", "maxLength")
    };
    let (k, v) = match op {
        CmpOp::Gt => (min, n.checked_add(1)?),
        CmpOp::Ge => (min, *n),
        CmpOp::Lt => (max, n.checked_sub(1)?),
        CmpOp::Le => (max, *n),
    };
    Some(vec![(key(k), Value::Int(v.max(0)))])
}

/// True for a `muranoObject` schema (whose `check()`s on properties go to
/// its `context`).
fn is_object_schema(d: &Dict) -> bool {
    match d.get(&key("type")) {
        Some(Value::Str(t)) => &**t == "muranoObject",
        Some(Value::List(ts)) => ts.iter().any(|t| t.as_str() == Some("muranoObject")),
        _ => false,
    }
}

/// `schema` with `pairs` set on the schema of the property at `path`
/// (nested `object` schemas made as needed).
fn at_path(mut schema: Dict, path: &[String], pairs: Vec<(Value, Value)>) -> Dict {
    let Some((head, rest)) = path.split_first() else {
        for (k, v) in pairs {
            schema.insert(k, v);
        }
        return schema;
    };
    if schema.get(&key("type")).is_none() {
        schema.insert(key("type"), Value::str("object"));
    }
    let mut props = match schema.get(&key("properties")) {
        Some(Value::Dict(p)) => (**p).clone(),
        _ => Dict::default(),
    };
    let child = match props.get(&key(head)) {
        Some(Value::Dict(c)) => (**c).clone(),
        _ => Dict::default(),
    };
    props.insert(key(head), Value::dict(at_path(child, rest, pairs)));
    schema.insert(key("properties"), Value::dict(props));
    schema
}
