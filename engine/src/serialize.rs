//! Object models out: `Objects`, `ObjectsCopy`, `Attributes`, and the
//! `dump()` engine function.
//!
//! This follows murano's `murano/dsl/serializer.py`: an object is written
//! in place (nested) where it is met under its owner; an object met
//! anywhere else becomes a reference, and a later pass moves it to the
//! first reference that is still unresolved (or, with `allow_refs`, only
//! when that reference sits under the object's owner). References that
//! remain become the object's id (or are dropped when the object was
//! never written and refs are not allowed).

use runtime::ErrorKind;
use std::collections::HashSet;
use std::sync::Arc;

use compiler::murano::{MetaDecl, PropertyUsage, TemplateKind};
use compiler::CompileOptions;
use runtime::registry::{p, Args, Cx, Ty};
use runtime::value::ObjRef;
use runtime::{Dict, Error, Result, Value};

use crate::class::Class;
use crate::code::CTemplate;
use crate::executor::{Executor, ExecutorOf};

/// How objects are written (`dsl_types.DumpTypes`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DumpType {
    /// `{"?": {"type": "Name/ver@pkg", ...}, props...}`.
    Serializable,
    /// `{Type: {props...}, "id": ..., "name": ..., "metadata": ...}`.
    Inline,
    /// Like `Serializable`, with the type object in `?.type`.
    Mixed,
}

impl DumpType {
    /// Parses `Serializable` / `Inline` / `Mixed`.
    pub fn parse(s: &str) -> Option<DumpType> {
        match s {
            "Serializable" => Some(DumpType::Serializable),
            "Inline" => Some(DumpType::Inline),
            "Mixed" => Some(DumpType::Mixed),
            _ => None,
        }
    }
}

/// An intermediate tree node.
#[derive(Clone)]
enum N {
    /// A plain value (scalars; type references are formatted on the way).
    V(Value),
    /// A value that is kept as it is (the type object of a `Mixed` header).
    Keep(Value),
    /// An object not visited yet.
    Obj(Arc<ObjRef>),
    /// A reference to an object (resolved in the last pass).
    Ref(Arc<ObjRef>),
    /// A mapping, in order.
    Map(Vec<(Value, N)>),
    /// A sequence.
    List(Vec<N>),
}

fn map_set(m: &mut Vec<(Value, N)>, k: Value, v: N) {
    if let Some(e) = m.iter_mut().find(|(x, _)| *x == k) {
        e.1 = v;
    } else {
        m.push((k, v));
    }
}

fn lift(v: &Value) -> N {
    match v {
        Value::Object(o) => N::Obj(o.clone()),
        Value::List(l) => N::List(l.iter().map(lift).collect()),
        Value::Set(s) => N::List(s.iter().map(lift).collect()),
        Value::Dict(d) => N::Map(d.iter().map(|(k, x)| (k.clone(), lift(x))).collect()),
        other => N::V(other.clone()),
    }
}

fn same(a: Option<&ObjRef>, b: Option<&ObjRef>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => a.slot == b.slot && a.store == b.store,
        _ => false,
    }
}

struct Ser<'a> {
    ex: &'a Executor,
    kind: DumpType,
    allow_refs: bool,
    actions: bool,
    dependencies: bool,
    serialized: HashSet<Arc<str>>,
    order: Vec<Arc<ObjRef>>,
    /// The root viewed through a cast: serialized as that class.
    root_view: Option<Arc<ObjRef>>,
}

/// A parent identity: an object, or a cast view of one (which owns
/// nothing).
#[derive(Clone)]
enum Parent {
    Obj(Option<Arc<ObjRef>>),
    View,
}

impl Ser<'_> {
    fn owner(&self, r: &ObjRef) -> Option<Arc<ObjRef>> {
        self.ex.owner(r)
    }

    fn is_parent(&self, owner: Option<&Arc<ObjRef>>, parent: &Parent) -> bool {
        match parent {
            Parent::Obj(p) => same(owner.map(|o| &**o), p.as_deref()),
            Parent::View => false,
        }
    }

    /// `is_nested_in(obj, ancestor)`.
    fn nested_in(&self, obj: &Parent, ancestor: Option<&Arc<ObjRef>>) -> bool {
        let mut cur = match obj {
            Parent::Obj(o) => o.clone(),
            Parent::View => return false,
        };
        let mut guard = 0;
        loop {
            if same(cur.as_deref(), ancestor.map(|a| &**a)) {
                return true;
            }
            let Some(c) = cur else { return false };
            cur = self.owner(&c);
            guard += 1;
            if guard > 10_000 {
                return false;
            }
        }
    }

    fn pass12(&mut self, n: N, parent: &Parent) -> Result<(N, bool)> {
        match n {
            N::V(Value::Type(ref t)) => Ok((
                N::V(Value::str(format!(
                    "{}/{}@{}",
                    t.name, t.version, t.package
                ))),
                false,
            )),
            N::V(_) | N::Keep(_) => Ok((n, false)),
            N::Obj(r) => {
                let owner = self.owner(&r);
                if !self.is_parent(owner.as_ref(), parent) || self.serialized.contains(&r.id) {
                    return Ok((N::Ref(r), true));
                }
                self.expand(r)
            }
            N::Ref(r) => {
                let mut can_move = !self.serialized.contains(&r.id);
                if can_move && self.allow_refs {
                    if let Some(owner) = self.owner(&r) {
                        can_move = self.nested_in(parent, Some(&owner))
                            && self.serialized.contains(&owner.id);
                    }
                }
                if can_move {
                    self.expand(r)
                } else {
                    Ok((N::Ref(r), false))
                }
            }
            N::Map(items) => {
                let mut out = Vec::with_capacity(items.len());
                let mut again = false;
                for (k, v) in items {
                    let (v, a) = self.pass12(v, parent)?;
                    again |= a;
                    out.push((k, v));
                }
                Ok((N::Map(out), again))
            }
            N::List(items) => {
                let mut out = Vec::with_capacity(items.len());
                let mut again = false;
                for v in items {
                    let (v, a) = self.pass12(v, parent)?;
                    again |= a;
                    out.push(v);
                }
                Ok((N::List(out), again))
            }
        }
    }

    fn expand(&mut self, r: Arc<ObjRef>) -> Result<(N, bool)> {
        let is_view = self
            .root_view
            .as_ref()
            .is_some_and(|v| v.slot == r.slot && v.store == r.store && v.class == r.class);
        let class = if is_view {
            self.ex.class(&r.class)?
        } else {
            self.ex.class_of(&r)?
        };
        let mut dict = self.to_dictionary(&r, &class)?;
        if self.actions {
            let actions = serialize_actions(self.ex, &r, &class)?;
            match self.kind {
                DumpType::Inline => map_set(&mut dict, Value::str("_actions"), actions),
                _ => {
                    if let Some((_, N::Map(h))) =
                        dict.iter_mut().find(|(k, _)| k.as_str() == Some("?"))
                    {
                        map_set(h, Value::str("_actions"), actions);
                    }
                }
            }
        }
        self.serialized.insert(r.id.clone());
        self.order.push(r.clone());
        let parent = if is_view {
            Parent::View
        } else {
            Parent::Obj(Some(r.clone()))
        };
        self.pass12(N::Map(dict), &parent)
    }

    /// `MuranoObject.to_dictionary`.
    fn to_dictionary(&self, r: &Arc<ObjRef>, class: &Arc<Class>) -> Result<Vec<(Value, N)>> {
        let (props, name, metadata, destroyed, subscribers, designer) =
            self.ex.with_obj(r, |o| {
                (
                    o.props.clone(),
                    o.name.clone(),
                    o.metadata.clone(),
                    o.destroyed,
                    o.subscribers.clone(),
                    o.designer.clone(),
                )
            })?;
        let mut result = Vec::new();
        self.parts(class, &props, &mut result, &mut Vec::new())?;
        let mut header = vec![
            (
                Value::str("type"),
                match self.kind {
                    DumpType::Serializable => N::V(Value::str(class.type_string())),
                    _ => N::Keep(Value::Type(class.type_ref.clone())),
                },
            ),
            (Value::str("id"), N::V(Value::str(&*r.id))),
            (Value::str("name"), N::V(name)),
            (Value::str("metadata"), lift(&metadata)),
        ];
        if destroyed {
            header.push((Value::str("destroyed"), N::V(Value::Bool(true))));
        }
        if self.dependencies {
            // murano's serializer writes the designer attributes the
            // object store kept back into `?` (`_actions` is made afresh
            // after this, when asked for).
            for (k, v) in designer.iter().flat_map(|d| d.iter()) {
                map_set(&mut header, k.clone(), lift(v));
            }
            let mut dds = Vec::new();
            for (sub, handler) in &subscribers {
                let alive = self.ex.with_obj(sub, |s| !s.destroyed).unwrap_or(false);
                if !alive {
                    continue;
                }
                dds.push(N::Map(vec![
                    (Value::str("subscriber"), N::V(Value::str(&*sub.id))),
                    (
                        Value::str("handler"),
                        N::V(
                            handler
                                .as_ref()
                                .map(|h| Value::str(h.as_str()))
                                .unwrap_or(Value::Null),
                        ),
                    ),
                ]));
            }
            if !dds.is_empty() {
                header.push((
                    Value::str("dependencies"),
                    N::Map(vec![(Value::str("onDestruction"), N::List(dds))]),
                ));
            }
        }
        if self.kind == DumpType::Inline {
            result.retain(|(k, _)| k.as_str() != Some("?"));
            let mut out = vec![(Value::Type(class.type_ref.clone()), N::Map(result))];
            out.extend(header.into_iter().skip(1));
            Ok(out)
        } else {
            map_set(&mut result, Value::str("?"), N::Map(header));
            Ok(result)
        }
    }

    /// The properties of one class part, its parents' parts first.
    #[allow(clippy::only_used_in_recursion)]
    fn parts(
        &self,
        class: &Class,
        props: &Dict,
        out: &mut Vec<(Value, N)>,
        seen: &mut Vec<Arc<str>>,
    ) -> Result<()> {
        for p in &class.parents {
            self.parts(p, props, out, seen)?;
        }
        for (i, prop) in class.props.iter().enumerate() {
            if matches!(
                prop.usage,
                PropertyUsage::Runtime | PropertyUsage::Config | PropertyUsage::Static
            ) {
                continue;
            }
            let key = Value::str(&*prop.name);
            let Some(v) = props.get(&key) else { continue };
            let mut node = lift(v);
            if let (Value::Object(o), true) = (v, self.allow_refs) {
                if let Some(decl) = class.decl.properties.get(i) {
                    let meta = decl
                        .meta
                        .iter()
                        .find(|m| m.name == "io.murano.metadata.engine.Serialize");
                    if let Some(m) = meta {
                        if meta_prop(self.ex, class, m, "as")?.as_str() == Some("reference") {
                            node = N::V(Value::str(&*o.id));
                        }
                    }
                }
            }
            map_set(out, key, node);
        }
        map_set(out, Value::str("?"), N::V(Value::Null));
        Ok(())
    }
}

/// `_pass3_serialize`: references become ids (or are dropped).
fn pass3(n: N, serialized: &HashSet<Arc<str>>, allow_refs: bool) -> Option<Value> {
    Some(match n {
        N::V(v) | N::Keep(v) => v,
        N::Obj(r) | N::Ref(r) => {
            if serialized.contains(&r.id) || allow_refs {
                Value::str(&*r.id)
            } else {
                return None;
            }
        }
        N::Map(items) => {
            let mut d = Dict::default();
            for (k, v) in items {
                if let Some(v) = pass3(v, serialized, allow_refs) {
                    d.insert(k, v);
                }
            }
            Value::dict(d)
        }
        N::List(items) => Value::list(
            items
                .into_iter()
                .filter_map(|x| pass3(x, serialized, allow_refs))
                .collect(),
        ),
    })
}

/// Evaluates the property `key` of a meta declaration of `class`.
fn meta_prop(ex: &Executor, class: &Class, meta: &MetaDecl, key: &str) -> Result<Value> {
    let TemplateKind::Dict(items) = &meta.props.kind else {
        return Ok(Value::Null);
    };
    let Some((_, t)) = items.iter().find(|(k, _)| k.as_str() == Some(key)) else {
        return Ok(Value::Null);
    };
    if let TemplateKind::Value(v) = &t.kind {
        return Ok(v.clone());
    }
    let legacy = class.package.legacy;
    let opts = CompileOptions {
        legacy,
        murano: true,
    };
    let ct = CTemplate::compile(t, &ex.catalog().registry(legacy), opts)?;
    let cls = ex.class(&class.key)?;
    let ctx = ex.class_ctx(&cls, Value::Type(cls.type_ref.clone()));
    ct.eval(ex.env(legacy), &ctx)
}

/// The classes of `class` in murano's `ancestors()` order (breadth
/// first), the class itself first.
fn bfs(class: &Arc<Class>) -> Vec<Arc<Class>> {
    let mut out: Vec<Arc<Class>> = Vec::new();
    let mut queue = std::collections::VecDeque::from([class.clone()]);
    while let Some(c) = queue.pop_front() {
        if out.iter().any(|x| x.name == c.name) {
            continue;
        }
        queue.extend(c.parents.iter().cloned());
        out.push(c);
    }
    out
}

/// `_serialize_available_action`.
fn serialize_actions(ex: &Executor, r: &ObjRef, class: &Arc<Class>) -> Result<N> {
    let mut result: Vec<(Value, N)> = Vec::new();
    for c in bfs(class) {
        for decl in &c.decl.methods {
            let Some(m) = c.methods.get(&decl.name) else {
                continue;
            };
            if !m.is_action() {
                continue;
            }
            let mut entry = vec![
                (Value::str("enabled"), N::V(Value::Bool(true))),
                (Value::str("name"), N::V(Value::str(&*m.name))),
            ];
            let find = |name: &str| m.decl.meta.iter().find(|x| x.name == name);
            let title = match find("io.murano.metadata.Title") {
                Some(t) => meta_prop(ex, &c, t, "text")?,
                None => Value::str(&*m.name),
            };
            entry.push((Value::str("title"), N::V(title)));
            if let Some(d) = find("io.murano.metadata.Description") {
                entry.push((
                    Value::str("description"),
                    N::V(meta_prop(ex, &c, d, "text")?),
                ));
            }
            if let Some(h) = find("io.murano.metadata.HelpText") {
                entry.push((Value::str("helpText"), N::V(meta_prop(ex, &c, h, "text")?)));
            }
            map_set(
                &mut result,
                Value::str(format!("{}_{}", r.id, m.name)),
                N::Map(entry),
            );
        }
    }
    Ok(N::Map(result))
}

/// `_serialize_object`: the tree of `root` and the ids written.
fn serialize_object(
    ex: &Executor,
    root: &Arc<ObjRef>,
    kind: DumpType,
    allow_refs: bool,
    actions: bool,
    dependencies: bool,
    view: bool,
) -> Result<(Value, Vec<Arc<ObjRef>>)> {
    let mut s = Ser {
        ex,
        kind,
        allow_refs,
        actions,
        dependencies,
        serialized: HashSet::new(),
        order: Vec::new(),
        root_view: view.then(|| root.clone()),
    };
    let parent = Parent::Obj(ex.owner(root));
    let mut n = N::Obj(root.clone());
    let mut rounds = 0;
    loop {
        let (next, again) = s.pass12(n, &parent)?;
        n = next;
        rounds += 1;
        if !again || rounds > 10_000 {
            break;
        }
    }
    let v = pass3(n, &s.serialized, allow_refs).unwrap_or(Value::Null);
    Ok((v, s.order))
}

/// Serializes the model rooted at `root` as murano's `serialize_model`
/// does: `{"Objects", "ObjectsCopy", "Attributes"}`.
pub fn serialize_model(ex: &Executor, root: &Arc<ObjRef>) -> Result<Value> {
    let root = ex.plain(root);
    let (tree, order) =
        serialize_object(ex, &root, DumpType::Serializable, false, true, true, false)?;
    let (copy, _) = serialize_object(ex, &root, DumpType::Serializable, false, false, true, false)?;
    let mut attributes = Vec::new();
    for r in &order {
        let Ok(attrs) = ex.with_obj(r, |o| o.attrs.clone()) else {
            continue;
        };
        // Attributes are kept under `[owner class, name]` (other keys are
        // the engine's own).
        for (k, v) in attrs.iter() {
            let Value::List(key) = k else { continue };
            let [owner, name] = &key[..] else { continue };
            attributes.push(Value::list(vec![
                Value::str(&*r.id),
                owner.clone(),
                name.clone(),
                v.clone(),
            ]));
        }
    }
    let mut d = Dict::default();
    d.insert(Value::str("Objects"), tree);
    d.insert(Value::str("ObjectsCopy"), copy);
    d.insert(Value::str("Attributes"), Value::list(attributes));
    Ok(Value::dict(d))
}

/// `serializer.serialize(obj, executor, serialization_type)`: what
/// `dump()` returns.
pub fn dump_object(
    ex: &Executor,
    obj: &Arc<ObjRef>,
    kind: DumpType,
    ignore_upcasts: bool,
) -> Result<Value> {
    let plain = ex.plain(obj);
    let view = !ignore_upcasts && plain.class != obj.class;
    let root = if view { obj.clone() } else { plain };
    Ok(serialize_object(ex, &root, kind, true, false, false, view)?.0)
}

/// `dump(obj, serializationType => Serializable, ignoreUpcasts => true)`.
fn dump(cx: &Cx, a: Args) -> Result<Value> {
    let ex = cx.executor()?;
    let Value::Object(o) = a.get(0) else {
        return Err(Error::type_(format!(
            "dump() expects an object, got {}",
            a.get(0).type_name()
        )));
    };
    let kind = DumpType::parse(a.str(1))
        .ok_or_else(|| Error::new(ErrorKind::ValueError, "Invalid Serialization Type"))?;
    let ignore = match a.get(2) {
        Value::Bool(b) => *b,
        Value::Null => true,
        other => other.truthy(),
    };
    dump_object(&ex, o, kind, ignore)
}

fn is_object(v: &Value) -> bool {
    matches!(v, Value::Object(_))
}

/// Registers `dump()` and the serializer's engine functions.
pub fn register(r: &mut runtime::Registry) {
    r.function(
        "dump",
        vec![
            p("obj", Ty::Check(is_object)),
            p("serializationType", Ty::Str).default(Value::str("Serializable")),
            p("ignoreUpcasts", Ty::Bool).default(Value::Bool(true)),
        ],
        dump,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dump_types_parse() {
        assert_eq!(DumpType::parse("Inline"), Some(DumpType::Inline));
        assert_eq!(DumpType::parse("Mixed"), Some(DumpType::Mixed));
        assert_eq!(
            DumpType::parse("Serializable"),
            Some(DumpType::Serializable)
        );
        assert_eq!(DumpType::parse("inline"), None);
    }

    #[test]
    fn pass3_drops_unknown_refs() {
        let r = Arc::new(ObjRef {
            id: "x".into(),
            class: "C".into(),
            slot: 0,
            store: 0,
        });
        let tree = N::List(vec![N::V(Value::Int(1)), N::Ref(r.clone())]);
        let out = pass3(tree.clone(), &HashSet::new(), false).unwrap();
        assert_eq!(out, Value::list(vec![Value::Int(1)]));
        let out = pass3(tree, &HashSet::new(), true).unwrap();
        assert_eq!(out, Value::list(vec![Value::Int(1), Value::str("x")]));
    }
}
