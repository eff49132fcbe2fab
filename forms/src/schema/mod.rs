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

use engine::exec::CTemplate;
use engine::{model, Class, Executor, Package};

mod contract;

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
}

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
        if let Some(pos) = single(metas, "io.murano.metadata.forms.Position") {
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
            props.insert(Value::str(&*n), Value::dict(s));
        }
        let metas = self.type_meta(&cls)?;
        let mut schema = self.entity_schema(props, &metas)?;
        self.ui_hints(&metas, &mut schema)?;
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
        for a in m.decl.arguments.iter().skip(skip) {
            let mut s = self.translate_top(&a.contract, &decl_cls)?;
            if let Some(d) = &a.default {
                s.insert(key("default"), raw_value(d));
            }
            let metas = self.arg_meta(&decl_cls, name, &a.name)?;
            self.ui_hints(&metas, &mut s)?;
            self.default_title(&a.name, &mut s);
            props.insert(Value::str(a.name.as_str()), Value::dict(s));
        }
        let metas = self.method_meta(&decl_cls, name)?;
        let mut schema = self.entity_schema(props, &metas)?;
        self.ui_hints(&metas, &mut schema)?;
        if let (1, Some(first)) = (skip, m.decl.arguments.first()) {
            // Where a caller passes the model to the builder.
            schema.insert(key("modelArgument"), Value::str(first.name.as_str()));
        }
        Ok(Value::dict(schema))
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
