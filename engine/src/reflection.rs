//! Reflection (`typeinfo`, type/property/method/argument info objects,
//! `invoke`, `setValue`/`getValue`) and metadata objects.
//!
//! Reflection objects are dictionaries tagged with a `#reflection` key
//! (their kind) plus the names that identify the entity (class, member,
//! argument, package). Everything else is computed on access from the
//! executor's classes, so equal entities give equal values
//! (`typeinfo($obj) = typeinfo(type($obj))`). Attribute access
//! (`#attr`) and the methods `getValue`, `setValue`, `invoke` are
//! registered for these dictionaries ahead of the standard library's
//! dictionary fallbacks.
//!
//! Metadata (`Meta:` of packages, classes, properties, methods and
//! arguments) is instantiated once per declaration (objects of the
//! meta-classes, cached per execution) and merged along the inheritance
//! graph with the `Cardinality` / `Inherited` rules of murano's
//! `meta.merge_providers`.

use runtime::ErrorKind;
use std::collections::{HashSet, VecDeque};
use std::sync::Arc;

use compiler::murano::meta::{merge_providers, Attached};
use compiler::murano::{ClassUsage, MetaDecl, MetaTarget, PropertyUsage};
use compiler::CompileOptions;
use runtime::registry::{kw, p, var, Args, Cx, Form, Registry, Ty};
use runtime::{Dict, Error, Result, Value};

use crate::class::{check_meta, Class};
use crate::code::CTemplate;
use crate::dispatch::call_registry;
use crate::executor::{Executor, ExecutorOf};
use crate::model;

const TAG: &str = "#reflection";
const OBJECT: &str = "io.murano.Object";
/// Methods of `io.murano.Object` implemented natively.
const NATIVE_OBJECT_METHODS: [&str; 2] = ["getAttr", "setAttr"];

// ---- representation ----------------------------------------------------

fn mk(kind: &str, fields: &[(&str, &str)]) -> Value {
    let mut d = Dict::default();
    d.insert(Value::str(TAG), Value::str(kind));
    for (k, v) in fields {
        d.insert(Value::str(*k), Value::str(*v));
    }
    Value::dict(d)
}

fn kind_of(v: &Value) -> Option<&str> {
    match v {
        Value::Dict(d) => d.get(&Value::str(TAG)).and_then(|k| k.as_str()),
        _ => None,
    }
}

fn field<'a>(v: &'a Value, name: &str) -> &'a str {
    match v {
        Value::Dict(d) => d
            .get(&Value::str(name))
            .and_then(|k| k.as_str())
            .unwrap_or(""),
        _ => "",
    }
}

fn is_refl(v: &Value) -> bool {
    kind_of(v).is_some()
}
fn is_prop_info(v: &Value) -> bool {
    kind_of(v) == Some("property")
}
fn is_method_info(v: &Value) -> bool {
    kind_of(v) == Some("method")
}
fn is_version(v: &Value) -> bool {
    kind_of(v) == Some("version")
}
fn is_type_info(v: &Value) -> bool {
    kind_of(v) == Some("type")
}

fn type_info(name: &str) -> Value {
    mk("type", &[("name", name)])
}
fn prop_info(class: &str, name: &str) -> Value {
    mk("property", &[("class", class), ("name", name)])
}
fn method_info(class: &str, name: &str) -> Value {
    mk("method", &[("class", class), ("name", name)])
}
fn arg_info(class: &str, method: &str, name: &str) -> Value {
    mk(
        "argument",
        &[("class", class), ("method", method), ("name", name)],
    )
}
fn package_info(name: &str) -> Value {
    mk("package", &[("name", name)])
}
fn version_info(v: &str) -> Value {
    mk("version", &[("value", v)])
}

fn usage_str<T: std::fmt::Debug>(u: T) -> Value {
    Value::str(format!("{u:?}"))
}

fn no_attr(kind: &str, name: &str) -> Error {
    Error::new(
        ErrorKind::NoFunctionRegisteredException,
        format!("Unknown attribute \"{name}\" of a {kind} reflection object"),
    )
}

// ---- class helpers ---------------------------------------------------------

/// The class a `typeinfo()` argument designates.
fn class_of_value(cx: &Cx, ex: &Executor, v: &Value) -> Result<Arc<Class>> {
    match v {
        Value::Object(o) => ex.class_of(o),
        Value::Type(t) => ex.class(&t.name),
        Value::Str(s) => {
            let full = match ex.ctx_class(cx.ctx) {
                Some(c) => c.resolve(s),
                None => s.to_string(),
            };
            ex.class(&full)
        }
        v if is_type_info(v) => ex.class(field(v, "name")),
        other => Err(Error::type_(format!(
            "typeinfo() expects an object or a type, got {}",
            other.type_name()
        ))),
    }
}

/// `MuranoClass.ancestors()`: breadth-first over the parents, without the
/// class itself.
fn ancestors(cls: &Arc<Class>) -> Vec<Arc<Class>> {
    let mut seen: HashSet<Arc<str>> = HashSet::new();
    let mut out = Vec::new();
    let mut queue: VecDeque<Arc<Class>> = VecDeque::new();
    queue.push_back(cls.clone());
    while let Some(c) = queue.pop_front() {
        if !seen.insert(c.key.clone()) {
            continue;
        }
        if c.key != cls.key {
            out.push(c.clone());
        }
        queue.extend(cls.parents_of(&c).into_iter().cloned());
    }
    out
}

fn has_method(c: &Class, name: &str) -> bool {
    c.methods.contains_key(name) || (&*c.name == OBJECT && NATIVE_OBJECT_METHODS.contains(&name))
}

fn has_prop(c: &Class, name: &str) -> bool {
    c.props.iter().any(|p| &*p.name == name)
}

/// `MuranoClass._choose_symbol`: the most derived declarations of a
/// member along every inheritance path (several only when ambiguous).
/// Symbols are identified by their declaring class.
fn choose_symbol(cls: &Arc<Class>, has: &dyn Fn(&Class) -> bool) -> Vec<Arc<str>> {
    // All root-to-leaf paths, with the declaring classes met on each.
    let mut chains: Vec<Vec<Arc<str>>> = Vec::new();
    let mut queue: VecDeque<(Arc<Class>, Vec<Arc<str>>)> = VecDeque::new();
    queue.push_back((cls.clone(), Vec::new()));
    while let Some((c, mut path)) = queue.pop_front() {
        if has(&c) {
            path.push(c.key.clone());
        }
        if c.parents.is_empty() {
            if !path.is_empty() {
                chains.push(path);
            }
        } else {
            for p in cls.parents_of(&c) {
                queue.push_back((p.clone(), path.clone()));
            }
        }
        if chains.len() > 10_000 {
            break;
        }
    }
    chains.sort_by_key(|c| c.len());
    let mut result: Vec<Arc<str>> = Vec::new();
    for i in 0..chains.len() {
        if result.contains(&chains[i][0]) {
            continue;
        }
        let ci = &chains[i];
        let mut add = true;
        for cj in &chains[i + 1..] {
            let common = ci
                .iter()
                .rev()
                .zip(cj.iter().rev())
                .take_while(|(a, b)| a == b)
                .count();
            if common == ci.len() {
                add = false;
                break;
            }
        }
        if add {
            result.push(ci[0].clone());
        }
    }
    result
}

fn all_member_names(cls: &Arc<Class>, own: impl Fn(&Class) -> Vec<String>) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut seen = HashSet::new();
    let mut chain = vec![cls.clone()];
    chain.extend(ancestors(cls));
    for c in &chain {
        for n in own(c) {
            if seen.insert(n.clone()) {
                names.push(n);
            }
        }
    }
    names
}

fn type_methods(cls: &Arc<Class>) -> Vec<Value> {
    let names = all_member_names(cls, |c| {
        let mut v: Vec<String> = c.decl.methods.iter().map(|m| m.name.clone()).collect();
        for m in c.methods.keys() {
            if !v.contains(m) {
                v.push(m.clone());
            }
        }
        if &*c.name == OBJECT {
            v.extend(NATIVE_OBJECT_METHODS.iter().map(|s| s.to_string()));
        }
        v
    });
    let mut out = Vec::new();
    for n in names {
        if n.starts_with("__") || n.starts_with('.') {
            continue;
        }
        for decl in choose_symbol(cls, &|c: &Class| has_method(c, &n)) {
            out.push(method_info(&decl, &n));
        }
    }
    out
}

fn type_properties(cls: &Arc<Class>) -> Vec<Value> {
    let names = all_member_names(cls, |c| {
        c.props.iter().map(|p| p.name.to_string()).collect()
    });
    let mut out = Vec::new();
    for n in names {
        if n.starts_with("__") || n.starts_with('.') {
            continue;
        }
        for decl in choose_symbol(cls, &|c: &Class| has_prop(c, &n)) {
            out.push(prop_info(&decl, &n));
        }
    }
    out
}

// ---- metadata ----------------------------------------------------------------

fn cache_get(ex: &Arc<Executor>, key: &str) -> Option<Vec<Value>> {
    ex.lock().meta.get(key).cloned()
}

fn cache_put(ex: &Arc<Executor>, key: &str, v: Vec<Value>) {
    ex.lock().meta.entry(key.to_string()).or_insert(v);
}

/// One attached meta object.
type Item = Attached<Value>;

fn target_name(t: MetaTarget) -> &'static str {
    match t {
        MetaTarget::Package => "Package",
        MetaTarget::Type => "Type",
        MetaTarget::Method => "Method",
        MetaTarget::Property => "Property",
        MetaTarget::Argument => "Argument",
    }
}

/// The meta objects of one declaration (`MetaData.get_meta`), created on
/// first use in the context of the declaring class.
fn decl_items(
    ex: &Arc<Executor>,
    cls: &Arc<Class>,
    target: MetaTarget,
    key: String,
    metas: &[compiler::murano::MetaDecl],
) -> Result<Vec<Item>> {
    let values = match cache_get(ex, &key) {
        Some(v) => v,
        None => {
            let v = instantiate_metas(ex, cls, target, metas)?;
            cache_put(ex, &key, v);
            cache_get(ex, &key).unwrap_or_default()
        }
    };
    let mut out = Vec::new();
    for (i, v) in values.into_iter().enumerate() {
        let Value::Object(o) = &v else { continue };
        let mc = ex.class_of(o)?;
        out.push(Item {
            id: format!("{key}#{i}"),
            ty: mc.name.clone(),
            cardinality: mc.decl.cardinality,
            inherited: mc.decl.inherited,
            value: v,
        });
    }
    Ok(out)
}

fn instantiate_metas(
    ex: &Arc<Executor>,
    cls: &Arc<Class>,
    target: MetaTarget,
    metas: &[MetaDecl],
) -> Result<Vec<Value>> {
    if metas.is_empty() {
        return Ok(Vec::new());
    }
    let legacy = cls.package.legacy;
    let reg = ex.catalog().registry(legacy);
    let copts = CompileOptions {
        legacy,
        murano: true,
    };
    let env = ex.env(legacy).clone();
    let ctx = ex.class_ctx(cls, Value::Type(cls.type_ref.clone()));
    let mut used = HashSet::new();
    let mut out = Vec::new();
    for md in metas {
        let mc = ex.class(&md.name)?;
        check_meta(&mc.decl, target, &mut used)?;
        let t = CTemplate::compile(&md.props, &reg, copts)?;
        let props = match t.eval(&env, &ctx)? {
            Value::Dict(ref d) => (**d).clone(),
            Value::Null => Dict::default(),
            other => {
                return Err(Error::value(format!(
                    "Invalid Meta format: {}",
                    runtime::pyrepr::repr(&other)
                )))
            }
        };
        let r = ex.create(&mc, None, None);
        model::init_properties(ex, &r, &props)?;
        model::run_init(ex, &r, &props)?;
        out.push(Value::Object(r));
    }
    Ok(out)
}

type Producer<'a> = &'a dyn Fn(&Arc<Class>) -> Result<Vec<Item>>;

/// `meta.merge_providers` ([`merge_providers`]).
fn merge(initial: &Arc<Class>, producer: Producer) -> Result<Vec<Value>> {
    let out = merge_providers(
        initial,
        &|c: &Arc<Class>| c.name.clone(),
        &|c: &Arc<Class>| &c.parents[..],
        &mut |c: &Arc<Class>| producer(c),
    )?;
    Ok(out.into_iter().map(|(_, it)| it.value).collect())
}

fn type_meta(ex: &Arc<Executor>, cls: &Arc<Class>) -> Result<Vec<Value>> {
    let producer = |c: &Arc<Class>| -> Result<Vec<Item>> {
        decl_items(
            ex,
            c,
            MetaTarget::Type,
            format!("T|{}", c.name),
            &c.decl.meta,
        )
    };
    merge(cls, &producer)
}

/// The meta objects of a package's manifest `Meta`, made in the context
/// of one of its classes (a package without classes has none to show).
fn package_meta(ex: &Arc<Executor>, name: &str) -> Result<Vec<Value>> {
    let Some(pkg) = ex.packages().iter().find(|p| &*p.name == name).cloned() else {
        return Ok(Vec::new());
    };
    let Some(first) = pkg.class_names().into_iter().next() else {
        return Ok(Vec::new());
    };
    let cls = ex.class(&first)?;
    let items = decl_items(
        ex,
        &cls,
        MetaTarget::Package,
        format!("P|{name}"),
        &pkg.meta,
    )?;
    Ok(items.into_iter().map(|it| it.value).collect())
}

fn method_meta(ex: &Arc<Executor>, cls: &Arc<Class>, name: &str) -> Result<Vec<Value>> {
    let producer = |c: &Arc<Class>| -> Result<Vec<Item>> {
        match c.decl.methods.iter().find(|m| m.name == name) {
            Some(m) => decl_items(
                ex,
                c,
                MetaTarget::Method,
                format!("M|{}|{}", c.name, name),
                &m.meta,
            ),
            None => Ok(Vec::new()),
        }
    };
    merge(cls, &producer)
}

fn prop_meta(ex: &Arc<Executor>, cls: &Arc<Class>, name: &str) -> Result<Vec<Value>> {
    let producer = |c: &Arc<Class>| -> Result<Vec<Item>> {
        match c.decl.properties.iter().find(|p| p.name == name) {
            Some(pd) => decl_items(
                ex,
                c,
                MetaTarget::Property,
                format!("P|{}|{}", c.name, name),
                &pd.meta,
            ),
            None => Ok(Vec::new()),
        }
    };
    merge(cls, &producer)
}

fn arg_meta(ex: &Arc<Executor>, cls: &Arc<Class>, method: &str, name: &str) -> Result<Vec<Value>> {
    let Some(m) = cls.decl.methods.iter().find(|m| m.name == method) else {
        return Ok(Vec::new());
    };
    let Some(a) = m.arguments.iter().find(|a| a.name == name) else {
        return Ok(Vec::new());
    };
    let items = decl_items(
        ex,
        cls,
        MetaTarget::Argument,
        format!("A|{}|{}|{}", cls.name, method, name),
        &a.meta,
    )?;
    Ok(items.into_iter().map(|i| i.value).collect())
}

/// The meta objects of any reflection value (or object/type: its class's).
fn meta_of(cx: &Cx, ex: &Arc<Executor>, v: &Value) -> Result<Vec<Value>> {
    match kind_of(v) {
        Some("type") => type_meta(ex, &ex.class(field(v, "name"))?),
        Some("method") => method_meta(ex, &ex.class(field(v, "class"))?, field(v, "name")),
        Some("property") => prop_meta(ex, &ex.class(field(v, "class"))?, field(v, "name")),
        Some("argument") => arg_meta(
            ex,
            &ex.class(field(v, "class"))?,
            field(v, "method"),
            field(v, "name"),
        ),
        Some("package") => package_meta(ex, field(v, "name")),
        Some(k) => Err(no_attr(k, "meta")),
        None => type_meta(ex, &class_of_value(cx, ex, v)?),
    }
}

// ---- attributes --------------------------------------------------------------

fn refl_attr(cx: &Cx, a: Args) -> Result<Value> {
    let ex = cx.executor()?;
    let v = a.get(0);
    let name = a.str(1);
    let kind = kind_of(v).unwrap_or("");
    if name == "meta" {
        return Ok(Value::list(meta_of(cx, &ex, v)?));
    }
    match kind {
        "type" => type_attr(&ex, &ex.class(field(v, "name"))?, name),
        "property" => {
            let cls = ex.class(field(v, "class"))?;
            let pname = field(v, "name");
            let prop = cls
                .props
                .iter()
                .find(|p| &*p.name == pname)
                .ok_or_else(|| Error::new(ErrorKind::NoPropertyFound, pname.to_string()))?;
            match name {
                "name" => Ok(Value::str(pname)),
                "hasDefault" => Ok(Value::Bool(prop.has_default)),
                "usage" => Ok(usage_str(prop.usage)),
                "declaringType" => Ok(type_info(&cls.name)),
                _ => Err(no_attr(kind, name)),
            }
        }
        "method" => {
            let cls = ex.class(field(v, "class"))?;
            let mname = field(v, "name");
            match name {
                "name" => Ok(Value::str(mname)),
                "declaringType" => Ok(type_info(&cls.name)),
                "arguments" => match cls.decl.methods.iter().find(|m| m.name == mname) {
                    Some(m) => Ok(Value::list(
                        m.arguments
                            .iter()
                            .map(|x| arg_info(&cls.name, mname, &x.name))
                            .collect(),
                    )),
                    None => Ok(Value::Null),
                },
                "usage" => match cls.methods.get(mname) {
                    Some(m) => Ok(usage_str(m.usage)),
                    None => Ok(Value::str("Runtime")),
                },
                "scope" => match cls.methods.get(mname) {
                    Some(m) => Ok(usage_str(m.scope)),
                    None => Ok(Value::str("Session")),
                },
                _ => Err(no_attr(kind, name)),
            }
        }
        "argument" => {
            let cls = ex.class(field(v, "class"))?;
            let mname = field(v, "method");
            let aname = field(v, "name");
            let arg = cls
                .decl
                .methods
                .iter()
                .find(|m| m.name == mname)
                .and_then(|m| m.arguments.iter().find(|x| x.name == aname))
                .ok_or_else(|| Error::key(aname.to_string()))?;
            match name {
                "name" => Ok(Value::str(aname)),
                "hasDefault" => Ok(Value::Bool(arg.default.is_some())),
                "usage" => Ok(usage_str(arg.usage)),
                "declaringMethod" => Ok(method_info(&cls.name, mname)),
                _ => Err(no_attr(kind, name)),
            }
        }
        "package" => {
            let pname = field(v, "name");
            let pkg = ex
                .packages()
                .iter()
                .find(|p| &*p.name == pname)
                .cloned()
                .ok_or_else(|| Error::key(pname.to_string()))?;
            match name {
                "name" => Ok(Value::str(pname)),
                "version" => Ok(version_info(&pkg.version)),
                "types" => {
                    let mut names: Vec<&String> = pkg.decls.keys().collect();
                    names.sort();
                    Ok(Value::list(
                        names.into_iter().map(|n| type_info(n)).collect(),
                    ))
                }
                _ => Err(no_attr(kind, name)),
            }
        }
        "version" => {
            let text = field(v, "value");
            let (core, build) = match text.split_once('+') {
                Some((c, b)) => (c, Some(b)),
                None => (text, None),
            };
            let (core, pre) = match core.split_once('-') {
                Some((c, p)) => (c, Some(p)),
                None => (core, None),
            };
            let mut parts = core.split('.').map(|x| x.parse::<i64>().unwrap_or(0));
            let parts_list = |s: Option<&str>| {
                Value::list(
                    s.map(|s| s.split('.').map(Value::str).collect())
                        .unwrap_or_default(),
                )
            };
            match name {
                "major" => Ok(Value::Int(parts.next().unwrap_or(0))),
                "minor" => Ok(Value::Int(parts.nth(1).unwrap_or(0))),
                "patch" => Ok(Value::Int(parts.nth(2).unwrap_or(0))),
                "prerelease" => Ok(parts_list(pre)),
                "build" => Ok(parts_list(build)),
                _ => Err(no_attr(kind, name)),
            }
        }
        _ => Err(no_attr(kind, name)),
    }
}

fn type_attr(ex: &Arc<Executor>, cls: &Arc<Class>, name: &str) -> Result<Value> {
    let is_meta = cls.decl.usage == ClassUsage::Meta;
    match name {
        "name" => Ok(Value::str(&*cls.name)),
        "usage" => Ok(usage_str(cls.decl.usage)),
        "version" => Ok(version_info(&cls.package.version)),
        "ancestors" => Ok(Value::list(
            ancestors(cls).iter().map(|c| type_info(&c.key)).collect(),
        )),
        "properties" => Ok(Value::list(type_properties(cls))),
        "methods" => Ok(Value::list(type_methods(cls))),
        "package" => Ok(package_info(&cls.package.name)),
        "type" => Ok(Value::Type(cls.type_ref.clone())),
        "meta" => Ok(Value::list(type_meta(ex, cls)?)),
        "cardinality" if is_meta => Ok(usage_str(cls.decl.cardinality)),
        "inherited" if is_meta => Ok(Value::Bool(cls.decl.inherited)),
        "targets" if is_meta => Ok(Value::list(
            cls.decl
                .applies
                .iter()
                .map(|t| Value::str(target_name(*t)))
                .collect(),
        )),
        _ => Err(no_attr("type", name)),
    }
}

// ---- functions and methods ---------------------------------------------------

/// `typeinfo(objectOrType)`.
fn typeinfo(cx: &Cx, a: Args) -> Result<Value> {
    let ex = cx.executor()?;
    if a.get(0).is_null() {
        return Ok(Value::Null);
    }
    let cls = class_of_value(cx, &ex, a.get(0))?;
    Ok(type_info(&cls.name))
}

/// `metadata(x)`: the `?.metadata` of an object of the model; for types and
/// reflection objects, the attached meta objects.
fn metadata(cx: &Cx, a: Args) -> Result<Value> {
    let ex = cx.executor()?;
    match a.get(0) {
        Value::Object(o) => ex.with_obj(o, |s| s.metadata.clone()),
        v => Ok(Value::list(meta_of(cx, &ex, v)?)),
    }
}

/// `typeinfo.ancestors()` (method form of the property).
fn ancestors_method(cx: &Cx, a: Args) -> Result<Value> {
    let ex = cx.executor()?;
    type_attr(&ex, &ex.class(field(a.get(0), "name"))?, "ancestors")
}

/// True when the calling method belongs to a class the object is an
/// instance of (murano's `caller_class.is_compatible(obj)`).
fn caller_compatible(cx: &Cx, ex: &Executor, obj_class: &Class) -> (bool, Option<Arc<Class>>) {
    match ex.ctx_class(cx.ctx) {
        Some(c) => (obj_class.is_a(&c.name), Some(c)),
        None => (false, None),
    }
}

fn static_prop_of(ex: &Executor, class: &str, name: &str) -> Result<Arc<Class>> {
    let cls = ex.class(class)?;
    match cls.props.iter().find(|p| &*p.name == name) {
        Some(p) if p.usage == PropertyUsage::Static => Ok(cls),
        _ => Err(Error::new(
            ErrorKind::NoPropertyFound,
            format!("Property '{name}' is not found in class {class}"),
        )),
    }
}

/// `property.getValue(object)` (`null` for static properties).
fn get_value(cx: &Cx, a: Args) -> Result<Value> {
    let ex = cx.executor()?;
    let info = a.get(0);
    let (class, name) = (field(info, "class"), field(info, "name"));
    match a.get(1) {
        Value::Object(o) => {
            let oc = ex.class_of(o)?;
            if !oc.is_a(class) {
                return Err(Error::type_(format!(
                    "object of class {} is not a {class}",
                    oc.name
                )));
            }
            let (inside, _) = caller_compatible(cx, &ex, &oc);
            ex.get_property(o, name, inside)
        }
        _ => {
            let cls = static_prop_of(&ex, class, name)?;
            let prop = cls.props.iter().find(|p| &*p.name == name).unwrap();
            let v = ex.static_get(&cls.key, name);
            ex.static_value(&cls, prop, v)
        }
    }
}

/// `property.setValue(object, value)` (`null` object for static
/// properties).
fn set_value(cx: &Cx, a: Args) -> Result<Value> {
    let ex = cx.executor()?;
    let info = a.get(0);
    let (class, name) = (field(info, "class"), field(info, "name"));
    let value = a.get(2).clone();
    match a.get(1) {
        Value::Object(o) => {
            let oc = ex.class_of(o)?;
            if !oc.is_a(class) {
                return Err(Error::type_(format!(
                    "object of class {} is not a {class}",
                    oc.name
                )));
            }
            let (inside, caller) = caller_compatible(cx, &ex, &oc);
            ex.set_property(o, name, value, inside, caller.as_ref())?;
        }
        _ => {
            let cls = static_prop_of(&ex, class, name)?;
            ex.set_static(&cls, name, value)?;
        }
    }
    Ok(Value::Null)
}

/// `method.invoke(object, args..., kwargs...)`.
fn invoke(cx: &Cx, a: Args) -> Result<Value> {
    let ex = cx.executor()?;
    let info = a.get(0);
    let (class, name) = (field(info, "class"), field(info, "name"));
    let cls = ex.class(class)?;
    let this = a.get(1).clone();
    let mut pos = Vec::new();
    let mut named: Vec<(Arc<str>, Value)> = a.kw.clone();
    for x in &a.rest {
        // yaql 0.2 mode: `name => value` may arrive as a mapping rule.
        if let Value::Pair(pr) = x {
            if let Value::Str(k) = &pr.0 {
                named.push((k.as_str().into(), pr.1.clone()));
                continue;
            }
        }
        pos.push(x.clone());
    }
    let Some(method) = cls.methods.get(name).cloned() else {
        if NATIVE_OBJECT_METHODS.contains(&name) && &*cls.name == OBJECT {
            let mut args = vec![this];
            args.extend(pos);
            return call_registry(cx, name, Form::Method, args);
        }
        return Err(Error::new(
            ErrorKind::NoMethodFound,
            format!("Method {name} is not found in class {class}"),
        ));
    };
    match &this {
        Value::Object(o) => {
            if !ex.class_of(o)?.is_a(class) {
                return Err(plain_exception("'this' must be of compatible type"));
            }
        }
        Value::Type(t) => {
            if !method.is_static() || !ex.class(&t.name)?.is_a(class) {
                return Err(plain_exception("A class instance is required"));
            }
        }
        _ => {
            if !method.is_static() {
                return Err(plain_exception("A class instance is required"));
            }
        }
    }
    let this = match this {
        Value::Null => Value::Type(cls.type_ref.clone()),
        v => v,
    };
    ex.invoke(&this, &cls, &method, pos, named)
}

/// `str(version)`.
fn version_str(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::str(field(a.get(0), "value")))
}

/// Registers the reflection functions.
pub fn register(r: &mut Registry) {
    r.function(
        "#attr",
        vec![p("obj", Ty::Check(is_refl)), p("name", Ty::Str)],
        refl_attr,
    );
    // murano's `typeinfo(object_)`: null for null.
    r.function("typeinfo", vec![p("object", Ty::Any).nullable()], typeinfo);
    r.function("metadata", vec![p("object", Ty::Any)], metadata);
    r.function("str", vec![p("value", Ty::Check(is_version))], version_str);
    r.method(
        "ancestors",
        vec![p("type", Ty::Check(is_type_info))],
        ancestors_method,
    );
    r.method(
        "getValue",
        vec![
            p("property", Ty::Check(is_prop_info)),
            p("object", Ty::Any).nullable(),
        ],
        get_value,
    );
    r.method(
        "setValue",
        vec![
            p("property", Ty::Check(is_prop_info)),
            p("object", Ty::Any).nullable(),
            p("value", Ty::Any).nullable(),
        ],
        set_value,
    );
    r.method(
        "invoke",
        vec![
            p("method", Ty::Check(is_method_info)),
            p("object", Ty::Any).nullable(),
            var("args", Ty::Any).nullable(),
            kw("kwargs", Ty::Any).nullable(),
        ],
        invoke,
    );
}

/// What murano's `MuranoMethod.invoke` raises for a wrong receiver
/// (murano/dsl/murano_method.py): Python's plain `Exception`.
fn plain_exception(msg: &str) -> Error {
    Error::new(ErrorKind::from_name("Exception"), msg)
}
