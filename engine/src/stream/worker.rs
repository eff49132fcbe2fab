//! The workers of streaming validation: each parses its batches, finds
//! the object definitions and checks what it can of them at once.

use rustc_hash::FxHashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};

use runtime::{Dict, Error, Value};

use crate::catalog::Catalog;
use crate::class::Class;
use crate::contracts::plan::ObjectPlan;
use crate::contracts::Contract;
use crate::contracts::Reach;
use crate::defs;
use crate::executor::Defs;
use crate::executor::Executor;
use crate::model::{self};

use super::fast::{Fast, Head};
use super::reader::*;

/// What the workers found.
#[derive(Default)]
pub(crate) struct Found {
    /// Every definition: the fingerprints of their ids, by class (an
    /// index into `classes`).
    pub(crate) defs: Defs,
    pub(crate) classes: Vec<Arc<Class>>,
    pub(crate) violations: Vec<Violation>,
    /// Definitions whose contracts name other objects, checked once every
    /// object is known.
    pub(crate) deferred: Vec<Deferred>,
    /// The value each piece stands for in its container (definitions
    /// replaced by their ids), by slot.
    pub(crate) residuals: Vec<(u32, Value)>,
    /// Violations of items of list properties checked as they streamed by.
    pub(crate) items: Vec<Item<Error>>,
    /// Items of list properties whose contracts name other objects,
    /// checked once every object is known.
    pub(crate) deferred_items: Vec<Item<Value>>,
    pub(crate) bail: Option<String>,
    /// Definitions read in place ([`super::fast`]).
    pub(crate) in_place: u64,
}

/// A violation found in a stream.
pub(crate) struct Violation {
    /// Where its object is in the document's order.
    pub(crate) seq: Seq,
    /// The object's JSON path.
    pub(crate) path: String,
    pub(crate) prop: String,
    pub(crate) error: Error,
    /// The JSON path of the piece of text at `seq.0` that holds the object.
    pub(crate) piece: Arc<str>,
}

/// Item `index` of a streamed list property, and what was found of it.
pub(crate) struct Item<T> {
    pub(crate) list: Arc<ListProp>,
    pub(crate) index: usize,
    pub(crate) what: T,
}

impl Found {
    pub(crate) fn merge(&mut self, o: Found) {
        self.defs.0.resize_with(self.classes.len(), Vec::new);
        self.classes.extend(o.classes);
        self.defs.0.extend(o.defs.0);
        self.violations.extend(o.violations);
        self.items.extend(o.items);
        self.deferred_items.extend(o.deferred_items);
        self.deferred.extend(o.deferred);
        self.residuals.extend(o.residuals);
        self.in_place += o.in_place;
    }
}

pub(crate) struct Deferred {
    pub(crate) seq: Seq,
    pub(crate) path: String,
    /// The JSON path of the piece of text at `seq.0` that holds it.
    pub(crate) piece: Arc<str>,
    pub(crate) class: Arc<Class>,
    pub(crate) props: Arc<Dict>,
    /// Its list properties checked item by item, with their lengths.
    pub(crate) lists: Vec<(Arc<ListProp>, u64)>,
}

/// Whether a class's objects can be checked apart from the model.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Plan {
    /// Its contracts need the values only.
    Now,
    /// Some contract names other objects: checked after the pass.
    Later,
    No,
}

pub(crate) fn plan_of(catalog: &Catalog, class: &Class) -> Plan {
    let mut plan = Plan::Now;
    for c in class.mro() {
        if c.methods.contains_key(".init") {
            return Plan::No;
        }
        for p in &c.props {
            if p.default.as_ref().is_some_and(|d| !d.is_const())
                || Contract::of(&p.contract)
                    .names()
                    .iter()
                    .any(|n| catalog.declares_extension(n))
            {
                return Plan::No;
            }
            match Contract::of(&p.contract).reach() {
                Reach::Value => {}
                Reach::Classes => plan = Plan::Later,
                Reach::Execution => return Plan::No,
            }
        }
    }
    plan
}

/// What names under a container resolve with, as a worker walks a piece.
#[derive(Clone, Copy)]
pub(crate) enum Scope<'r> {
    /// As the piece's container says.
    Piece(&'r Resolver),
    /// The class of an enclosing definition inside the piece (an index
    /// into the worker's `class_list`).
    Class(u32),
}

/// A worker's state.
pub(crate) struct Worker<'a> {
    pub(crate) ex: Arc<Executor>,
    pub(crate) catalog: &'a Arc<Catalog>,
    /// Classes by the `type` of headers that name nothing else (indexes
    /// into `class_list`).
    pub(crate) classes: FxHashMap<Arc<String>, u32>,
    /// The classes met, with their plans: definitions name them by index,
    /// so that threads do not count references to one class object each
    /// time they meet one of its objects.
    pub(crate) class_list: Vec<(Arc<Class>, Plan)>,
    pub(crate) found: Found,
    /// Objects found since the last report.
    pub(crate) objects: u64,
    /// The keys a header is read by.
    pub(crate) keys: Keys,
    /// The class (in `class_list`) of the last definition walked.
    pub(crate) last_def: Option<u32>,
    /// Parses the pieces, keeping the keys it has met.
    pub(crate) parser: runtime::json::Parser,
    /// The contexts list property items are checked in, by declaring
    /// class.
    pub(crate) frames: Vec<(Arc<Class>, Arc<runtime::ctx::Frame>)>,
    /// The fast path's tape and classes.
    pub(crate) fast: Fast,
}

pub(crate) struct Keys {
    pub(crate) objects: Value,
    pub(crate) objects_copy: Value,
    pub(crate) header: Value,
    pub(crate) id: Value,
    pub(crate) ty: Value,
    pub(crate) version: Value,
    pub(crate) package: Value,
}

impl Keys {
    pub(crate) fn new() -> Keys {
        Keys {
            objects: Value::str("Objects"),
            objects_copy: Value::str("ObjectsCopy"),
            header: Value::str("?"),
            id: Value::str("id"),
            ty: Value::str("type"),
            version: Value::str("classVersion"),
            package: Value::str("package"),
        }
    }
}

pub(crate) fn work(
    catalog: &Arc<Catalog>,
    rx: &Mutex<mpsc::Receiver<Batch>>,
    stop: &AtomicBool,
    objects: &AtomicU64,
) -> Found {
    let mut w = Worker::new(catalog);
    loop {
        let batch = match rx.lock().unwrap_or_else(|e| e.into_inner()).recv() {
            Ok(b) => b,
            Err(_) => break,
        };
        if w.found.bail.is_some() || stop.load(Ordering::Relaxed) {
            continue;
        }
        for u in &batch.units {
            let ctx = &batch.contexts[u.ctx as usize];
            if let Err(why) = w.unit(&batch.text[u.start..u.end], u, ctx) {
                w.found.bail = Some(why);
                stop.store(true, Ordering::Relaxed);
                break;
            }
        }
        objects.fetch_add(std::mem::take(&mut w.objects), Ordering::Relaxed);
    }
    w.found.classes = w.class_list.into_iter().map(|(c, _)| c).collect();
    w.found
}

impl<'a> Worker<'a> {
    pub(crate) fn new(catalog: &'a Arc<Catalog>) -> Worker<'a> {
        Worker {
            ex: Executor::with_catalog(catalog.clone()),
            catalog,
            classes: FxHashMap::default(),
            class_list: Vec::new(),
            found: Found::default(),
            objects: 0,
            keys: Keys::new(),
            last_def: None,
            parser: Default::default(),
            frames: Vec::new(),
            fast: Default::default(),
        }
    }

    pub(crate) fn unit(&mut self, text: &[u8], u: &UnitMeta, ctx: &Context) -> Result<(), String> {
        let base = Base {
            parent: &ctx.parent,
            step: &u.step,
        };
        let text = std::str::from_utf8(text).map_err(|e| format!("{}: {e}", base.render()))?;
        if let Some(done) = self.fast_unit(text, u, ctx) {
            return done;
        }
        let v = self
            .parser
            .parse(text)
            .map_err(|e| e.message().to_string())?;
        if !u.walk {
            return Ok(());
        }
        if u.header {
            self.found.residuals.push((u.slot, v));
            return Ok(());
        }
        let mut seq = (u.offset, 0);
        let mut segs = Vec::new();
        let scope = Scope::Piece(&ctx.resolver);
        self.last_def = None;
        let r = self.walk(&v, scope, &mut segs, base, &mut seq)?;
        let header = &self.keys.header;
        let defined = self
            .last_def
            .filter(|_| r.is_some() && matches!(&v, Value::Dict(d) if d.contains_key(header)));
        self.place(u, ctx, r.unwrap_or(v), defined)
    }

    /// What piece `u` stands for in its container, `r` (its definitions
    /// replaced by their ids; `defined`: it is one, of this class): an
    /// item of a streamed list property is checked, anything else kept
    /// for the large containers.
    fn place(
        &mut self,
        u: &UnitMeta,
        ctx: &Context,
        r: Value,
        defined: Option<u32>,
    ) -> Result<(), String> {
        match (&ctx.items, &u.step) {
            (Some(list), Step::Index(i)) => self.item(list, *i, r, defined),
            _ => {
                self.found.residuals.push((u.slot, r));
                Ok(())
            }
        }
    }

    /// Item `i` of a streamed list property, `v` with its definitions
    /// replaced by their ids (`defined`: it is one, of this class): checked
    /// now, or kept for after the pass when its contract names objects.
    fn item(
        &mut self,
        list: &Arc<ListProp>,
        i: usize,
        v: Value,
        defined: Option<u32>,
    ) -> Result<(), String> {
        let contract = list.contract();
        if let Some(ci) = defined {
            let class = self.class_list[ci as usize].0.clone();
            let frame = self.frame(list);
            let env = self.ex.env(list.declared.package.legacy);
            if contract.item_takes_object(env, &frame, i, &class) == Some(true) {
                return Ok(());
            }
        }
        if contract.reach() != Reach::Value {
            self.found.deferred_items.push(Item {
                list: list.clone(),
                index: i,
                what: v,
            });
            return Ok(());
        }
        if contract.item_holds(&self.ex, i, &v) {
            return Ok(());
        }
        let frame = self.frame(list);
        let env = self.ex.env(list.declared.package.legacy);
        match contract.check_item(&self.ex, env, &frame, i, v, list.name()) {
            Ok(_) => Ok(()),
            Err(e) if *e.error_kind() == runtime::ErrorKind::ContractViolationException => {
                self.found.items.push(Item {
                    list: list.clone(),
                    index: i,
                    what: e,
                });
                Ok(())
            }
            Err(e) => Err(format!("{}: {}", e.kind(), e.message())),
        }
    }

    /// The context the items of `list` are checked in.
    fn frame(&mut self, list: &ListProp) -> Arc<runtime::ctx::Frame> {
        if let Some((_, f)) = self
            .frames
            .iter()
            .find(|(c, _)| Arc::ptr_eq(c, &list.declared))
        {
            return f.clone();
        }
        let f = self.ex.class_ctx(&list.declared, Value::Null);
        self.frames.push((list.declared.clone(), f.clone()));
        f
    }

    /// The fast path of a piece of `text` ([`super::fast`]): `None` when
    /// it must go the full way.
    pub(crate) fn fast_unit(
        &mut self,
        text: &str,
        u: &UnitMeta,
        ctx: &Context,
    ) -> Option<Result<(), String>> {
        if !u.walk {
            // Only read for its syntax.
            return self.fast.syntax(text).then_some(Ok(()));
        }
        if u.header {
            return None;
        }
        let (id, class) = match self.fast.head(text)? {
            Head::Known { id, class } => (id, class),
            Head::New { id, ty } => {
                self.learn(id, ty)?;
                match self.fast.head(text)? {
                    Head::Known { id, class } => (id, class),
                    Head::New { .. } => return None,
                }
            }
        };
        let ci = self.fast.passes(text, class)?;
        self.found.defs.push(id, ci);
        self.objects += 1;
        self.found.in_place += 1;
        self.last_def = Some(ci);
        Some(self.place(u, ctx, Value::str(id), Some(ci)))
    }

    /// Teaches the fast path the class of headers of type `ty`; `None`
    /// when the header does not name one (the full path says why).
    fn learn(&mut self, id: &str, ty: &str) -> Option<()> {
        let mut h = Dict::default();
        h.insert(self.keys.id.clone(), Value::str(id));
        h.insert(self.keys.ty.clone(), Value::str(ty));
        let (ci, plan) = self.class(&h).ok()??;
        let plan = match plan {
            Plan::Now => ObjectPlan::of(&self.ex, &self.class_list[ci as usize].0, true),
            Plan::Later | Plan::No => None,
        };
        self.fast.learn(ty, ci, plan);
        Some(())
    }

    /// The class (by index into `class_list`) and plan of a header with a
    /// type.
    pub(crate) fn class(&mut self, h: &Dict) -> Result<Option<(u32, Plan)>, String> {
        let k = &self.keys;
        // The common header names its class by `type` alone.
        let plain = match h.get(&k.ty) {
            Some(Value::Str(t)) if h.get(&k.version).is_none() && h.get(&k.package).is_none() => {
                Some(t.clone())
            }
            _ => None,
        };
        if let Some(&i) = plain.as_ref().and_then(|t| self.classes.get(t)) {
            return Ok(Some((i, self.class_list[i as usize].1)));
        }
        let Some(spec) = defs::def_type(h) else {
            return Ok(None);
        };
        let class = self.ex.class(&spec).map_err(|e| e.message().to_string())?;
        let i = match self
            .class_list
            .iter()
            .position(|(c, _)| Arc::ptr_eq(c, &class))
        {
            Some(i) => i,
            None => {
                let plan = plan_of(self.catalog, &class);
                self.class_list.push((class, plan));
                self.class_list.len() - 1
            }
        } as u32;
        if let Some(t) = plain {
            self.classes.insert(t, i);
        }
        Ok(Some((i, self.class_list[i as usize].1)))
    }

    /// Finds the definitions in `v` (a value at `base` + `segs`) and checks
    /// or defers them; returns `v` with each definition replaced by its id,
    /// `None` when that is `v` itself.
    pub(crate) fn walk<'v>(
        &mut self,
        v: &'v Value,
        scope: Scope<'_>,
        segs: &mut Vec<Seg<'v>>,
        base: Base<'_>,
        seq: &mut Seq,
    ) -> Result<Option<Value>, String> {
        match v {
            Value::Dict(d) => {
                match d.get(&self.keys.header) {
                    Some(Value::Dict(h)) => match self.class(h)? {
                        Some(class) => {
                            return self.definition(v, d, h, class, segs, base, seq).map(Some)
                        }
                        // The ordinary load refuses it, in its own words.
                        None => return Err("an object header without a type".into()),
                    },
                    Some(_) => return Err("a `?` that is no object header".into()),
                    None => self.not_a_snippet(v, d, scope)?,
                }
                Ok(self
                    .walk_entries(d, false, scope, segs, base, seq)?
                    .map(Value::dict))
            }
            Value::List(l) => {
                let mut out: Option<Vec<Value>> = None;
                for (i, x) in l.iter().enumerate() {
                    segs.push(Seg::Index(i));
                    let r = self.walk(x, scope, segs, base, seq)?;
                    segs.pop();
                    if let Some(r) = r {
                        out.get_or_insert_with(|| l[..i].to_vec()).push(r);
                    } else if let Some(o) = &mut out {
                        o.push(x.clone());
                    }
                }
                Ok(out.map(Value::list))
            }
            _ => Ok(None),
        }
    }

    /// A dict without a header must not be an object definition in the
    /// snippet form, which only the ordinary load reads.
    pub(crate) fn not_a_snippet(
        &self,
        v: &Value,
        d: &Dict,
        scope: Scope<'_>,
    ) -> Result<(), String> {
        // The snippet form has a key that names a type over a dict or null:
        // without one, no need to ask.
        let maybe = d
            .iter()
            .any(|(k, x)| matches!(k, Value::Type(_)) || matches!(x, Value::Dict(_) | Value::Null));
        if !maybe {
            return Ok(());
        }
        let class = match scope {
            // The name could be a type in the namespaces of a class not
            // known yet.
            Scope::Piece(Resolver::Unknown) => {
                return Err("a dict that may be an object definition in a large container".into())
            }
            Scope::Piece(Resolver::Known(c)) => c.as_deref(),
            Scope::Class(i) => Some(&*self.class_list[i as usize].0),
        };
        match defs::parse_def(&self.ex, class, v, None) {
            Some(_) => Err("an object definition in the snippet form".into()),
            None => Ok(()),
        }
    }

    /// A definition: walks its properties, checks it now or defers it;
    /// returns its id.
    pub(crate) fn definition<'v>(
        &mut self,
        v: &'v Value,
        d: &'v Dict,
        h: &Dict,
        (ci, plan): (u32, Plan),
        segs: &mut Vec<Seg<'v>>,
        base: Base<'_>,
        seq: &mut Seq,
    ) -> Result<Value, String> {
        let id = header_id(h, &self.keys.id)?;
        if plan == Plan::No {
            let class = &self.class_list[ci as usize].0;
            return Err(format!("class {} needs the ordinary load", class.name));
        }
        let me = *seq;
        seq.1 += 1;
        self.found.defs.push(&id, ci);
        self.objects += 1;
        // The properties with nested definitions replaced by their ids (the
        // header is no property: it stays, unread).
        let props = match self.walk_entries(d, true, Scope::Class(ci), segs, base, seq)? {
            Some(changed) => Value::dict(changed),
            None => v.clone(),
        };
        let Value::Dict(ref props) = props else {
            unreachable!("a definition is a dict")
        };
        let class = &self.class_list[ci as usize].0;
        if plan == Plan::Later {
            self.found.deferred.push(Deferred {
                seq: me,
                path: render(base, segs),
                piece: base.render().into(),
                class: class.clone(),
                props: props.clone(),
                lists: Vec::new(),
            });
        } else {
            let path = || (render(base, segs), base.render().into());
            check(
                &self.ex,
                class,
                props,
                &[],
                me,
                &path,
                &mut self.found.violations,
            )?;
        }
        self.last_def = Some(ci);
        Ok(Value::Str(id))
    }

    /// [`Worker::walk`] over the entries of a dict (but its header when
    /// `definition`).
    pub(crate) fn walk_entries<'v>(
        &mut self,
        d: &'v Dict,
        definition: bool,
        scope: Scope<'_>,
        segs: &mut Vec<Seg<'v>>,
        base: Base<'_>,
        seq: &mut Seq,
    ) -> Result<Option<Dict>, String> {
        let mut out: Option<Dict> = None;
        for (i, (k, x)) in d.iter().enumerate() {
            if definition && *k == self.keys.header {
                continue;
            }
            segs.push(Seg::Key(k));
            let r = self.walk(x, scope, segs, base, seq)?;
            segs.pop();
            match (r, &mut out) {
                (Some(r), None) => {
                    let mut o: Dict = d
                        .iter()
                        .take(i)
                        .map(|(k, x)| (k.clone(), x.clone()))
                        .collect();
                    o.insert(k.clone(), r);
                    out = Some(o);
                }
                (Some(r), Some(o)) => {
                    o.insert(k.clone(), r);
                }
                (None, Some(o)) => {
                    o.insert(k.clone(), x.clone());
                }
                (None, None) => {}
            }
        }
        Ok(out)
    }
}

/// Checks one object's properties ([`model::check_properties_except`]),
/// collecting the violations (`path` names the object). `lists` are its
/// list properties checked item by item, with what was found of them:
/// their violations take their places in the order of initialization.
pub(crate) fn check(
    ex: &Executor,
    class: &Arc<Class>,
    props: &Dict,
    lists: &[(Arc<ListProp>, Option<Error>)],
    seq: Seq,
    path: &dyn Fn() -> (String, Arc<str>),
    out: &mut Vec<Violation>,
) -> Result<(), String> {
    let skip: Vec<&Value> = lists.iter().map(|(l, _)| &l.prop().key).collect();
    let mut found = model::check_properties_except(ex, class, props, &skip)
        .map_err(|e| format!("{}: {}", e.kind(), e.message()))?;
    let listed = lists
        .iter()
        .filter_map(|(l, e)| Some((Arc::from(l.name()), e.clone()?)));
    found.extend(listed);
    if found.is_empty() {
        return Ok(());
    }
    if !lists.is_empty() {
        let rank = |name: &str| class.init_order().position(|(_, p)| &*p.name == name);
        found.sort_by_key(|(name, _)| rank(name));
    }
    let (path, piece) = path();
    out.extend(found.into_iter().map(|(name, error)| Violation {
        seq,
        path: path.clone(),
        prop: name.to_string(),
        error,
        piece: piece.clone(),
    }));
    Ok(())
}
