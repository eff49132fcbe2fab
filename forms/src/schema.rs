//! MuranoPL forms: JSON Schema for a class (its `In`/`InOut` properties)
//! and for its model builders (their arguments), as murano's
//! `schema_generator.generate_schema` produces it.
//!
//! Contracts are not run: their templates are translated. Lists become
//! `array` schemas (integer items, the length bounds, are dropped), dicts
//! `object` schemas (an expression key gives `additionalProperties`), and
//! an expression is interpreted over its syntax tree with `$` = `{}` and
//! the contract methods (`string`, `int`, `bool`, `notNull`, `check`,
//! `class`, `template`, `owned`, `notOwned`) building the schema, as the
//! contracts' `generate_schema` do. `check()` predicates are split at
//! `and` and the known patterns (`$ > c`, `$ in list`, `$.matches(re)`)
//! become `minimum`/`maximum`/`enum`/`pattern`; their constants are
//! evaluated in the class's static context.
//!
//! Type names in contracts are resolved in the namespaces of the requested
//! class, inherited contracts included, as the reference does.
//!
//! Results are plain values (dicts in insertion order); `default` is the
//! declaration's raw `Default` with expressions written as their source.

use runtime::ErrorKind;
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, OnceLock};

use compiler::murano::{
    Cardinality, ClassUsage, MetaDecl, MetaTarget, PropertyUsage, Template, TemplateKind,
};
use compiler::yaql::ast::{Arg as AArg, Expr, ExprKind, Lit};
use compiler::yaql::{self, LexOptions};
use compiler::CompileOptions;
use runtime::{Dict, Error, Result, Value};

use engine::exec::CTemplate;
use engine::{model, Class, Executor, Package};

const SCHEMA_URL: &str = "http://json-schema.org/draft-04/schema#";
const NOT_NULL: &str = "_notNull";

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
    id: String,
    ty: Arc<str>,
    one: bool,
    inherited: bool,
    value: Value,
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
    metas: HashMap<String, Vec<MetaItem>>,
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
    ) -> Result<Vec<MetaItem>> {
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
            let mut used: HashSet<Arc<str>> = HashSet::new();
            for (i, md) in metas.iter().enumerate() {
                let mc = ex.class(&md.name)?;
                if mc.decl.usage != ClassUsage::Meta {
                    return Err(Error::value("Only Meta classes can be attached"));
                }
                if !mc.decl.applies.contains(&target) {
                    return Err(Error::value(format!(
                        "Meta class {} is not applicable here",
                        mc.name
                    )));
                }
                if !used.insert(mc.name.clone()) && mc.decl.cardinality != Cardinality::Many {
                    return Err(Error::value(
                        "Cannot attach several Meta instances with cardinality One",
                    ));
                }
                let t = CTemplate::compile(&md.props, &reg, copts)?;
                let props = match t.eval(&env, &ctx)? {
                    Value::Dict(ref d) => (**d).clone(),
                    Value::Null => Dict::default(),
                    _ => return Err(Error::value("Invalid Meta format")),
                };
                let r = ex.create(&mc, None, None);
                model::init_properties(ex, &r, &props)?;
                model::run_init(ex, &r, &props)?;
                out.push(MetaItem {
                    owner: owner.name.clone(),
                    id: format!("{cache_key}#{i}"),
                    ty: mc.name.clone(),
                    one: mc.decl.cardinality == Cardinality::One,
                    inherited: mc.decl.inherited || INHERITED_META.contains(&&*mc.name),
                    value: Value::Object(r),
                });
            }
        }
        self.metas.insert(cache_key, out.clone());
        Ok(out)
    }

    /// `meta.merge_providers` over the inheritance graph from `initial`.
    fn merge(
        &mut self,
        initial: &Arc<Class>,
        producer: &dyn Fn(&mut Gen, &Arc<Class>) -> Result<Vec<MetaItem>>,
    ) -> Result<Vec<MetaItem>> {
        self.merger(
            &initial.name.clone(),
            std::slice::from_ref(initial),
            &HashSet::new(),
            producer,
            0,
        )
    }

    fn merger(
        &mut self,
        initial: &Arc<str>,
        cls_list: &[Arc<Class>],
        skip: &HashSet<Arc<str>>,
        producer: &dyn Fn(&mut Gen, &Arc<Class>) -> Result<Vec<MetaItem>>,
        depth: usize,
    ) -> Result<Vec<MetaItem>> {
        if depth > 200 {
            return Err(Error::value("inheritance too deep"));
        }
        let mut all: Vec<(Arc<str>, MetaItem)> = Vec::new();
        for cls in cls_list {
            let mut cls_skip = skip.clone();
            for item in producer(self, cls)? {
                if cls.name != *initial && (!item.inherited || skip.contains(&item.ty)) {
                    continue;
                }
                if item.one {
                    cls_skip.insert(item.ty.clone());
                }
                all.push((cls.name.clone(), item));
            }
            for it in self.merger(initial, &cls.parents, &cls_skip, producer, depth + 1)? {
                all.push((it.owner.clone(), it));
            }
        }
        let mut result: Vec<MetaItem> = Vec::new();
        let mut types: HashMap<Arc<str>, Arc<str>> = HashMap::new();
        for (c, item) in all {
            if let Some(e) = types.get(&item.ty) {
                if *e != c {
                    return Err(Error::value(format!(
                        "Found more than one instance of Meta {} with Cardinality One",
                        item.ty
                    )));
                }
                continue;
            }
            if item.one {
                types.insert(item.ty.clone(), c.clone());
            }
            if !result.iter().any(|i2| i2.owner == c && i2.id == item.id) {
                result.push(item);
            }
        }
        Ok(result)
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
        self.decl_items(
            cls,
            MetaTarget::Argument,
            format!("A|{}|{}|{}", cls.name, method, name),
            &metas,
        )
    }

    fn prop_of(&self, item: &MetaItem, name: &str) -> Result<Value> {
        match &item.value {
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
            .filter(|m| &*m.ty == "io.murano.metadata.forms.Section")
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

    // ---- contracts -----------------------------------------------------------

    /// A property's or argument's schema: must be a dict.
    fn translate_top(&self, t: &Template, owner: &Arc<Class>) -> Result<Dict> {
        match self.translate(t, owner)? {
            Value::Dict(ref d) => Ok((**d).clone()),
            _ => Err(no_schema(format!(
                "{}: the contract does not translate to a schema",
                t.pos
            ))),
        }
    }

    /// `translate`: a contract template of class `owner` to its schema.
    fn translate(&self, t: &Template, owner: &Arc<Class>) -> Result<Value> {
        Ok(match &t.kind {
            TemplateKind::Dict(items) => {
                let mut props = Dict::default();
                let mut additional = Value::Bool(false);
                for (k, v) in items {
                    match &k.kind {
                        TemplateKind::Expr { .. } => additional = self.translate(v, owner)?,
                        TemplateKind::Value(kv) => {
                            let tv = self.translate(v, owner)?;
                            props.insert(kv.clone(), tv);
                        }
                        _ => return Err(no_schema("unhashable dict contract key")),
                    }
                }
                Value::dict(dict_of(vec![
                    ("type", Value::str("object")),
                    ("properties", Value::dict(props)),
                    ("additionalProperties", additional),
                ]))
            }
            TemplateKind::List(items) => {
                let mut out = Vec::new();
                for it in items {
                    if matches!(it.kind, TemplateKind::Value(Value::Int(_) | Value::Bool(_))) {
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
                Value::dict(d)
            }
            TemplateKind::Expr { src, .. } => {
                let legacy = owner.package.legacy;
                let ast = yaql::parse(
                    src,
                    LexOptions {
                        legacy,
                        murano: true,
                    },
                )?;
                let scope = match self.dialect {
                    Dialect::Reference => &self.cls,
                    Dialect::Spec => owner,
                };
                let cx = ExprCx { src, legacy, scope };
                let mut v = self.eval(&cx, &ast)?;
                // `#finalize` of the schema context.
                if let Value::Dict(d) = &v {
                    if d.get(&key(NOT_NULL)).is_some() {
                        let mut d2 = (**d).clone();
                        d2.shift_remove(&key(NOT_NULL));
                        v = Value::dict(d2);
                    }
                }
                v
            }
            TemplateKind::Value(_) => Value::Null,
        })
    }

    /// Interprets a contract expression with `$` = `{}`.
    fn eval(&self, cx: &ExprCx, e: &Expr) -> Result<Value> {
        match &e.kind {
            ExprKind::Var(v) if v.is_empty() || v == "1" => Ok(Value::dict(Dict::default())),
            ExprKind::Method(recv, name, args) if CONTRACT_METHODS.contains(&name.as_str()) => {
                let recv = self.eval(cx, recv)?;
                self.contract_method(cx, recv, name, args)
            }
            _ => {
                if has_dollar(e) {
                    return Err(no_schema(format!(
                        "unsupported contract expression `{}`",
                        cx.slice(e)
                    )));
                }
                self.eval_plain(cx, e)
            }
        }
    }

    fn contract_method(
        &self,
        cx: &ExprCx,
        recv: Value,
        name: &str,
        args: &[AArg],
    ) -> Result<Value> {
        let Value::Dict(ref d) = recv else {
            return Err(no_schema(format!("{name}() of a non-schema value")));
        };
        let mut d = (**d).clone();
        let not_null = d.get(&key(NOT_NULL)).is_some();
        match name {
            "string" | "int" | "bool" => {
                let base = match name {
                    "string" => "string",
                    "int" => "integer",
                    _ => "boolean",
                };
                Ok(Value::dict(dict_of(vec![(
                    "type",
                    type_value(base, not_null),
                )])))
            }
            "notNull" => {
                if let Some(Value::List(ref types)) = d.get(&key("type")).cloned() {
                    if types.iter().any(|t| t.as_str() == Some("null")) {
                        let mut ts: Vec<Value> = (**types).clone();
                        if let Some(i) = ts.iter().position(|t| t.as_str() == Some("null")) {
                            ts.remove(i);
                        }
                        let nt = if ts.len() == 1 {
                            ts.pop().unwrap_or(Value::Null)
                        } else {
                            Value::list(ts)
                        };
                        d.insert(key("type"), nt);
                    }
                }
                d.insert(key(NOT_NULL), Value::Bool(true));
                Ok(Value::dict(d))
            }
            "owned" | "notOwned" => {
                d.insert(key("owned"), Value::Bool(name == "owned"));
                Ok(Value::dict(d))
            }
            "check" => {
                let pred = bind(args, &["predicate", "msg"])
                    .into_iter()
                    .next()
                    .flatten()
                    .ok_or_else(|| no_schema("check() needs a predicate"))?;
                for this in self.conjuncts(pred) {
                    let Some((path, res)) = self.extract_pattern(cx, this, &d) else {
                        continue;
                    };
                    if path.is_empty() {
                        for (k, v) in res {
                            d.insert(k, v);
                        }
                    } else if is_object_schema(&d) {
                        let ctx = match d.get(&key("context")) {
                            Some(Value::Dict(c)) => (**c).clone(),
                            _ => Dict::default(),
                        };
                        d.insert(key("context"), Value::dict(at_path(ctx, &path, res)));
                    }
                }
                Ok(Value::dict(d))
            }
            "class" | "template" => {
                let names: &[&str] = if name == "class" {
                    &["name", "defaultName", "versionSpec"]
                } else {
                    &["type", "defaultType", "versionSpec", "excludeProperties"]
                };
                let bound = bind(args, names);
                let ty = bound[0].ok_or_else(|| no_schema(format!("{name}() needs a type")))?;
                let ty = self.type_arg(cx, ty)?.ok_or_else(|| {
                    Error::new(
                        ErrorKind::ValueError,
                        format!("{name}(): the type must not be null"),
                    )
                })?;
                if let Some(dt) = bound[1] {
                    self.type_arg(cx, dt)?;
                }
                let mut out = dict_of(vec![
                    ("type", type_value("muranoObject", not_null)),
                    ("muranoType", Value::str(&ty)),
                ]);
                if self.dialect == Dialect::Spec {
                    let given = bound[2].and_then(|e| self.constant(cx, e));
                    let version = match given {
                        Some(v) => v,
                        None => Value::str(self.version_of(cx, &ty)?),
                    };
                    out.insert(key("version"), version);
                }
                if name == "template" {
                    out.insert(key("owned"), Value::Bool(true));
                    if let Some(ep) = bound[3] {
                        let v = self.eval_plain(cx, ep)?;
                        if truthy(&v) {
                            out.insert(key("excludedProperties"), v);
                        }
                    }
                }
                Ok(Value::dict(out))
            }
            _ => Err(no_schema(format!("unknown contract method {name}"))),
        }
    }

    /// A type argument of `class()`/`template()`: resolved in the names
    /// scope of the requested class.
    fn type_arg(&self, cx: &ExprCx, e: &Expr) -> Result<Option<String>> {
        let name = match &e.kind {
            ExprKind::Keyword(k) => k.clone(),
            ExprKind::Lit(Lit::Str(s)) => s.clone(),
            ExprKind::Lit(Lit::Null) => return Ok(None),
            ExprKind::NsName(ns, n) => format!("{}:{n}", ns.clone().unwrap_or_default()),
            _ => match self.eval_plain(cx, e)? {
                Value::Null => return Ok(None),
                Value::Str(ref s) => s.to_string(),
                Value::Type(ref t) => return Ok(Some(self.ex.class(&t.name)?.name.to_string())),
                Value::Object(ref o) => return Ok(Some(self.ex.class_of(o)?.name.to_string())),
                _ => return Err(no_schema("bad type argument")),
            },
        };
        let full = cx.scope.decl.resolve_name(&name)?;
        Ok(Some(self.ex.class(&full)?.name.to_string()))
    }

    /// The parts of a `check()` predicate `A and B and ...` tried as
    /// patterns. murano's loop splits off the right operand only: `and`
    /// is left-associative, so of `A and B and C` it tries `A and B` (no
    /// pattern) and `C`. The spec splits at every `and`.
    fn conjuncts<'e>(&self, pred: &'e Expr) -> Vec<&'e Expr> {
        let mut out = Vec::new();
        let mut expr = pred;
        loop {
            match &expr.kind {
                ExprKind::Op("#operator_and", a) if a.len() == 2 => {
                    match self.dialect {
                        Dialect::Reference => out.push(&a[0]),
                        Dialect::Spec => out.extend(self.conjuncts(&a[0])),
                    }
                    expr = &a[1];
                }
                _ => {
                    out.push(expr);
                    return out;
                }
            }
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

    /// `extract_pattern` of a `check()` predicate: the schema keys it
    /// gives and the property path under `$` they constrain (empty: the
    /// value itself; only the spec dialect has paths and `len()` bounds).
    fn extract_pattern(
        &self,
        cx: &ExprCx,
        e: &Expr,
        schema: &Dict,
    ) -> Option<(Vec<String>, Vec<(Value, Value)>)> {
        const OPS: [&str; 4] = ["#operator_>", "#operator_<", "#operator_>=", "#operator_<="];
        let spec = self.dialect == Dialect::Spec;
        let ExprKind::Op(op, a) = &e.kind else {
            if let ExprKind::Method(recv, name, args) = &e.kind {
                let (path, false) = subject(recv, spec)? else {
                    return None;
                };
                if name == "matches" {
                    let first = match args.first() {
                        Some(AArg::Pos(x)) => x,
                        _ => return None,
                    };
                    let c = self.constant(cx, first)?;
                    return Some((path, vec![(key("pattern"), c)]));
                }
            }
            return None;
        };
        if a.len() != 2 {
            return None;
        }
        if let Some(i) = OPS.iter().position(|o| o == op) {
            let ((path, len), c, idx) = if let Some(s) = subject(&a[0], spec) {
                (s, self.constant(cx, &a[1])?, i as i64)
            } else if let Some(s) = subject(&a[1], spec) {
                (s, self.constant(cx, &a[0])?, -1 - i as i64)
            } else {
                return None;
            };
            let op = OPS[idx.rem_euclid(4) as usize];
            if len {
                return Some((path, length_bound(op, &c, schema)?));
            }
            let (k, x, excl) = match op {
                "#operator_>" => ("minimum", "exclusiveMinimum", true),
                "#operator_>=" => ("minimum", "exclusiveMinimum", false),
                "#operator_<" => ("maximum", "exclusiveMaximum", true),
                _ => ("maximum", "exclusiveMaximum", false),
            };
            return Some((path, vec![(key(k), c), (key(x), Value::Bool(excl))]));
        }
        if *op == "#operator_in" {
            let (path, false) = subject(&a[0], spec)? else {
                return None;
            };
            return match self.constant(cx, &a[1])? {
                v @ Value::List(_) => Some((path, vec![(key("enum"), v)])),
                _ => None,
            };
        }
        None
    }

    /// `evaluate_constant`: a literal, or the expression's value in the
    /// class's static context when it does not use `$`; `None` otherwise.
    fn constant(&self, cx: &ExprCx, e: &Expr) -> Option<Value> {
        let v = match &e.kind {
            ExprKind::Lit(l) => lit_value(l),
            ExprKind::Keyword(k) => Value::str(k.as_str()),
            _ => {
                if has_dollar(e) {
                    return None;
                }
                self.eval_plain(cx, e).ok()?
            }
        };
        if v.is_null() {
            None
        } else {
            Some(v)
        }
    }

    /// Evaluates a sub-expression with the engine in the requested class's
    /// static context.
    fn eval_plain(&self, cx: &ExprCx, e: &Expr) -> Result<Value> {
        let src = cx.slice(e);
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

const CONTRACT_METHODS: [&str; 9] = [
    "string", "int", "bool", "notNull", "check", "class", "template", "owned", "notOwned",
];

struct ExprCx<'s> {
    src: &'s str,
    legacy: bool,
    /// The class whose namespaces and static context the contract's names
    /// and constants are resolved in.
    scope: &'s Arc<Class>,
}

impl ExprCx<'_> {
    fn slice(&self, e: &Expr) -> &str {
        let (s, t) = (e.span.start as usize, e.span.end as usize);
        self.src.get(s..t).unwrap_or("")
    }
}

/// Binds positional and named arguments to parameter names.
fn bind<'e>(args: &'e [AArg], names: &[&str]) -> Vec<Option<&'e Expr>> {
    let mut out: Vec<Option<&Expr>> = vec![None; names.len()];
    let mut i = 0;
    for a in args {
        match a {
            AArg::Pos(e) => {
                if i < out.len() {
                    out[i] = Some(e);
                }
                i += 1;
            }
            AArg::Skip => i += 1,
            AArg::Named(n, e) => {
                let n = n.trim_end_matches('_');
                if let Some(j) = names
                    .iter()
                    .position(|x| *x == n || snake_to_camel(n) == *x)
                {
                    out[j] = Some(e);
                }
            }
            AArg::Mapping(..) => {}
        }
    }
    out
}

fn snake_to_camel(s: &str) -> String {
    let mut out = String::new();
    let mut up = false;
    for c in s.chars() {
        if c == '_' {
            up = true;
        } else if up {
            out.extend(c.to_uppercase());
            up = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// What a `check()` comparison constrains: `$` itself (the reference's
/// only subject), or, in the spec dialect, a property path under it
/// (`$.a.b`), and whether it is its length (`len(x)`, `x.len()`).
fn subject(e: &Expr, spec: bool) -> Option<(Vec<String>, bool)> {
    if is_dollar(e) {
        return Some((Vec::new(), false));
    }
    if !spec {
        return None;
    }
    let inner = match &e.kind {
        ExprKind::Attr(recv, name) => {
            let (mut path, false) = subject(recv, spec)? else {
                return None;
            };
            path.push(name.clone());
            return Some((path, false));
        }
        ExprKind::Call(n, args) if n == "len" && args.len() == 1 => match &args[0] {
            AArg::Pos(x) => x,
            _ => return None,
        },
        ExprKind::Method(recv, n, args) if n == "len" && args.is_empty() => recv,
        _ => return None,
    };
    match subject(inner, spec)? {
        (path, false) => Some((path, true)),
        _ => None,
    }
}

/// `minLength`/`maxLength` (`minItems`/`maxItems` for an array schema)
/// for a length compared with an integer.
fn length_bound(op: &str, c: &Value, schema: &Dict) -> Option<Vec<(Value, Value)>> {
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
        "#operator_>" => (min, n.checked_add(1)?),
        "#operator_>=" => (min, *n),
        "#operator_<" => (max, n.checked_sub(1)?),
        _ => (max, *n),
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

fn is_dollar(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::Var(v) if v.is_empty() || v == "1")
}

/// Whether `$` (or `$1`) occurs anywhere in the expression.
fn has_dollar(e: &Expr) -> bool {
    let args = |a: &[AArg]| {
        a.iter().any(|x| match x {
            AArg::Pos(e) | AArg::Named(_, e) => has_dollar(e),
            AArg::Mapping(k, v) => has_dollar(k) || has_dollar(v),
            AArg::Skip => false,
        })
    };
    match &e.kind {
        ExprKind::Var(v) => v.is_empty() || v == "1",
        ExprKind::Lit(_) | ExprKind::Keyword(_) | ExprKind::NsName(..) => false,
        ExprKind::Call(_, a) | ExprKind::List(a) | ExprKind::Map(a) => args(a),
        ExprKind::Method(r, _, a) | ExprKind::Index(r, a) | ExprKind::Delegate(r, a) => {
            has_dollar(r) || args(a)
        }
        ExprKind::Op(_, xs) => xs.iter().any(has_dollar),
        ExprKind::Attr(r, _) => has_dollar(r),
        ExprKind::Dot(r, m) | ExprKind::SafeDot(r, m) => has_dollar(r) || has_dollar(m),
    }
}

fn lit_value(l: &Lit) -> Value {
    match l {
        Lit::Int(s) => match s.parse::<i64>() {
            Ok(i) => Value::Int(i),
            Err(_) => s
                .parse::<num_bigint::BigInt>()
                .map(Value::from_bigint)
                .unwrap_or(Value::Null),
        },
        Lit::Float(f) => Value::Float(*f),
        Lit::Str(s) => Value::str(s.as_str()),
        Lit::Bool(b) => Value::Bool(*b),
        Lit::Null => Value::Null,
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
    let mut it = metas.iter().filter(|m| &*m.ty == ty);
    let first = it.next()?;
    if it.next().is_some() || !first.one {
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
