//! Streaming validation of one large object model: the JSON text is read
//! once, front to back, split into pieces ([`runtime::json::split`]) that
//! worker threads parse and check in parallel, and nothing of the model is
//! kept but what later checks need: the class of every object by id, and
//! the property values of the objects whose contracts name other objects.
//!
//! It gives what [`crate::model::validate`] gives, violation for violation
//! and in the same order (the objects' order in the document, then the
//! properties' order of initialization), for the models it takes:
//! - every object definition has a `?` header with a `type` and a string
//!   `id`, ids are unique, and no definition uses the snippet form;
//! - every class of the model initializes its properties from the model
//!   alone: no `.init` method, constant defaults, and contracts that look
//!   at the value and at most the classes of the objects it names
//!   ([`Reach::Classes`]); no extension method intercepts them;
//! - no `ObjectsCopy`, no tagged value spread over a spine, nesting within
//!   the JSON depth limit.
//!
//! Anything else ends the stream with [`Outcome::Fallback`] and the reason,
//! and the caller validates the model with the ordinary load, which also
//! reports malformed JSON and load errors in its own words.

use rustc_hash::FxHashMap;
use std::io::Read;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};

use runtime::json::split::{self, Piece};
use runtime::{Dict, Error, Value};

use crate::catalog::Catalog;
use crate::class::Class;
use crate::contracts::Contract;
use crate::contracts::Reach;
use crate::defs;
use crate::executor::Executor;
use crate::executor::{Def, Index};
use crate::model::{self, Validation};

/// How to stream.
#[derive(Clone, Debug)]
pub struct Options {
    /// Worker threads.
    pub jobs: usize,
    /// Containers longer than this many bytes are read piece by piece.
    pub chunk: usize,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
            chunk: 64 << 10,
        }
    }
}

/// The end of a stream.
pub enum Outcome {
    /// The model was validated; how long each phase took.
    Done(Validation, Phases),
    /// The model needs the ordinary load, for this reason.
    Fallback(String),
}

/// The phases of a stream and their wall times.
pub type Phases = Vec<(&'static str, std::time::Duration)>;

/// Progress: bytes read and objects checked so far.
pub type Progress<'a> = &'a (dyn Fn(u64, u64) + Sync);

/// Validates the object model read from `input` (JSON text: `{"Objects":
/// ...}` or a bare object) against `catalog`, streaming (see the module
/// documentation).
pub fn validate(
    catalog: &Arc<Catalog>,
    input: impl Read,
    opts: &Options,
    progress: Progress<'_>,
) -> Outcome {
    let jobs = opts.jobs.max(1);
    let t0 = std::time::Instant::now();
    let stop = AtomicBool::new(false);
    let objects = AtomicU64::new(0);
    let (tx, rx) = mpsc::sync_channel::<Batch>(2 * jobs);
    let rx = Mutex::new(rx);
    let mut reader = Reader::new(catalog, tx, &stop, progress, &objects);
    let (split, found) = std::thread::scope(|s| {
        let workers: Vec<_> = (0..jobs)
            .map(|_| s.spawn(|| work(catalog, &rx, &stop, &objects)))
            .collect();
        let split = split::split(input, opts.chunk, runtime::json::MAX_DEPTH, |p| {
            reader.piece(p)
        });
        reader.flush();
        drop(reader.tx.take());
        let found: Vec<std::thread::Result<Found>> =
            workers.into_iter().map(|w| w.join()).collect();
        (split, found)
    });
    if let Some(why) = reader.bail.take() {
        return Outcome::Fallback(why);
    }
    let mut all = Found::default();
    for f in found {
        match f {
            Ok(f) if f.bail.is_none() => all.merge(f),
            Ok(f) => return Outcome::Fallback(f.bail.unwrap_or_default()),
            Err(_) => return Outcome::Fallback("a worker stopped".into()),
        }
    }
    if let Err(e) = split {
        return Outcome::Fallback(format!("at byte {}: {}", e.offset, e.message));
    }
    match reader.root.take() {
        Some(root) => finish(
            catalog,
            all,
            root,
            jobs,
            vec![("read, parse, check", t0.elapsed())],
        ),
        None => Outcome::Fallback("the document is one piece".into()),
    }
}

/// Where a unit is in the document (a seq orders objects as the document
/// does: the offset of the unit, then the definition's rank in it).
type Seq = (u64, u32);

/// The class that resolves short type names under a container: the
/// enclosing definition's.
#[derive(Clone)]
enum Resolver {
    Known(Option<Arc<Class>>),
    /// Inside a large dict whose `?` header has not been read yet.
    Unknown,
}

impl Resolver {
    fn same(&self, other: &Resolver) -> bool {
        match (self, other) {
            (Resolver::Known(a), Resolver::Known(b)) => match (a, b) {
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                (a, b) => a.is_none() && b.is_none(),
            },
            (Resolver::Unknown, Resolver::Unknown) => true,
            _ => false,
        }
    }
}

/// One piece for a worker.
struct UnitMeta {
    start: usize,
    end: usize,
    offset: u64,
    /// Its JSON path below its context's.
    step: Step,
    /// Its container (in the batch's `contexts`).
    ctx: u32,
    /// Inside `Objects` (else only parsed, for its syntax).
    walk: bool,
    /// The `?` header of a large definition: kept as it is, not walked.
    header: bool,
    slot: u32,
}

/// What the pieces of one container share: its path and resolver. A
/// batch holds each once, so that the pieces do not count references to
/// them one by one on the reader's thread and again on a worker's.
struct Context {
    parent: Arc<str>,
    resolver: Resolver,
}

/// Pieces for a worker, their text in one buffer.
struct Batch {
    text: Vec<u8>,
    units: Vec<UnitMeta>,
    contexts: Vec<Context>,
}

impl Batch {
    fn new(capacity: usize) -> Batch {
        Batch {
            text: Vec::with_capacity(capacity),
            units: Vec::new(),
            contexts: Vec::new(),
        }
    }

    /// The index of the context of a piece, shared with the piece before
    /// when it has the same.
    fn context(&mut self, parent: Arc<str>, resolver: Resolver) -> u32 {
        match self.contexts.last() {
            Some(c) if Arc::ptr_eq(&c.parent, &parent) && c.resolver.same(&resolver) => {}
            _ => self.contexts.push(Context { parent, resolver }),
        }
        self.contexts.len() as u32 - 1
    }
}

const BATCH_BYTES: usize = 256 << 10;

/// A large container of the document, as read.
enum Node {
    /// A piece: its slot among the residuals.
    Unit(u32),
    List(Vec<Node>),
    Dict(Spine),
}

struct Spine {
    offset: u64,
    path: String,
    walk: bool,
    entries: Vec<(Value, Node)>,
}

/// An open large container.
struct Open {
    node: Node,
    key: Option<String>,
    path: Arc<str>,
    walk: bool,
    /// What its children resolve names with.
    resolver: Resolver,
    keys: std::collections::HashSet<String>,
    /// The root dict in `{"Objects": ...}` form.
    model: bool,
}

/// The splitter's consumer: builds the tree of large containers and sends
/// pieces to the workers.
struct Reader<'a> {
    ex: Arc<Executor>,
    tx: Option<mpsc::SyncSender<Batch>>,
    batch: Batch,
    stack: Vec<Open>,
    root: Option<Node>,
    slots: u32,
    bail: Option<String>,
    stop: &'a AtomicBool,
    progress: Progress<'a>,
    objects: &'a AtomicU64,
}

/// A JSON path, spelled out only when a message or a deferred check needs
/// it: a container's path and a step below it.
struct Place {
    parent: Arc<str>,
    step: Step,
}

enum Step {
    Here,
    Index(usize),
    Key(String),
}

impl Place {
    fn at(path: &str) -> Place {
        Place {
            parent: path.into(),
            step: Step::Here,
        }
    }

    fn child(parent: &Arc<str>, key: Option<&str>, index: usize) -> Place {
        Place {
            parent: parent.clone(),
            step: match key {
                Some(k) => Step::Key(k.to_string()),
                None => Step::Index(index),
            },
        }
    }

    fn render(&self) -> String {
        self.base().render()
    }

    fn base(&self) -> Base<'_> {
        Base {
            parent: &self.parent,
            step: &self.step,
        }
    }
}

/// A [`Place`], borrowed (from a batch).
#[derive(Clone, Copy)]
struct Base<'b> {
    parent: &'b str,
    step: &'b Step,
}

impl Base<'_> {
    fn render(&self) -> String {
        match self.step {
            Step::Here => self.parent.to_string(),
            Step::Index(i) => format!("{}[{i}]", self.parent),
            Step::Key(k) => format!("{}.{k}", self.parent),
        }
    }
}

impl<'a> Reader<'a> {
    fn new(
        catalog: &Arc<Catalog>,
        tx: mpsc::SyncSender<Batch>,
        stop: &'a AtomicBool,
        progress: Progress<'a>,
        objects: &'a AtomicU64,
    ) -> Reader<'a> {
        Reader {
            ex: Executor::with_catalog(catalog.clone()),
            tx: Some(tx),
            batch: Batch::new(0),
            stack: Vec::new(),
            root: None,
            slots: 0,
            bail: None,
            stop,
            progress,
            objects,
        }
    }

    fn give_up<T>(&mut self, why: impl Into<String>) -> Result<T, String> {
        let why = why.into();
        self.bail.get_or_insert(why.clone());
        self.stop.store(true, Ordering::Relaxed);
        Err(why)
    }

    fn piece(&mut self, p: Piece<'_>) -> Result<(), String> {
        if self.stop.load(Ordering::Relaxed) {
            return Err("stopped".into());
        }
        match p {
            Piece::Open { key, list, offset } => self.open(key, list, offset),
            Piece::Unit { key, offset, text } => self.unit(key, offset, text),
            Piece::Close => self.close(),
        }
    }

    /// Where the next child of the innermost open container goes: its key
    /// check, path, walk and resolver.
    fn place(&mut self, key: Option<&str>) -> Result<(Place, bool, Resolver), String> {
        let Some(top) = self.stack.last_mut() else {
            return Ok((Place::at("$.Objects"), true, Resolver::Known(None)));
        };
        let index = match &top.node {
            Node::List(items) => items.len(),
            _ => 0,
        };
        if let Some(k) = key {
            if k.starts_with('$') || !top.keys.insert(k.to_string()) {
                return self.give_up(format!("key {k:?} of a large dict"));
            }
        }
        if self.stack.len() == 1 {
            return self.place_top(key, index);
        }
        let top = self.stack.last().expect("checked");
        let place = Place::child(&top.path, key, index);
        Ok((place, top.walk, top.resolver.clone()))
    }

    /// A child of the document's root container: its first key decides
    /// between `{"Objects": ...}` and a bare object.
    fn place_top(
        &mut self,
        key: Option<&str>,
        index: usize,
    ) -> Result<(Place, bool, Resolver), String> {
        let first = self.stack[0].keys.len() == 1;
        let list = matches!(self.stack[0].node, Node::List(_));
        if !list && first && key == Some("Objects") {
            let top = &mut self.stack[0];
            top.model = true;
            top.walk = false;
            top.path = "$".into();
        }
        let top = &self.stack[0];
        if top.model {
            return match key {
                Some("Objects") => Ok((Place::at("$.Objects"), true, Resolver::Known(None))),
                Some("ObjectsCopy") => self.give_up("the model has ObjectsCopy"),
                // Outside the objects: only parsed, never named.
                _ => Ok((Place::at("$"), false, Resolver::Known(None))),
            };
        }
        if key == Some("Objects") {
            return self.give_up("Objects is not the first key");
        }
        Ok((
            Place::child(&top.path, key, index),
            true,
            top.resolver.clone(),
        ))
    }

    fn open(&mut self, key: Option<String>, list: bool, offset: u64) -> Result<(), String> {
        let (place, walk, inherited) = self.place(key.as_deref())?;
        let path: Arc<str> = place.render().into();
        let node = if list {
            Node::List(Vec::new())
        } else {
            Node::Dict(Spine {
                offset,
                path: path.to_string(),
                walk,
                entries: Vec::new(),
            })
        };
        // A dict's children resolve names with its class once its header
        // shows it is a definition; until then nobody knows.
        let resolver = if list { inherited } else { Resolver::Unknown };
        self.stack.push(Open {
            node,
            key,
            path,
            walk,
            resolver,
            keys: Default::default(),
            model: false,
        });
        Ok(())
    }

    fn unit(&mut self, key: Option<String>, offset: u64, text: &[u8]) -> Result<(), String> {
        if self.stack.is_empty() {
            // The whole document is one piece: nothing to stream.
            return self.give_up("the document is one piece");
        }
        let (place, walk, resolver) = self.place(key.as_deref())?;
        let mut header = false;
        if key.as_deref() == Some("?") && walk {
            // A header: the container is a definition, whose class resolves
            // the names below it; the header itself is not walked.
            match header_class(&self.ex, text) {
                Ok(Some(class)) => {
                    header = true;
                    self.stack
                        .last_mut()
                        .expect("a unit with a key has a parent")
                        .resolver = Resolver::Known(Some(class));
                }
                // The ordinary load refuses it, in its own words.
                Ok(None) => return self.give_up("a `?` that is no typed object header"),
                Err(why) => return self.give_up(why),
            }
        }
        let slot = self.slots;
        self.slots += 1;
        let top = self.stack.last_mut().expect("a parent");
        let node = Node::Unit(slot);
        match &mut top.node {
            Node::List(items) => items.push(node),
            Node::Dict(d) => d
                .entries
                .push((Value::str(key.as_deref().unwrap_or("")), node)),
            Node::Unit(_) => unreachable!("open containers are lists or dicts"),
        }
        let ctx = self.batch.context(place.parent, resolver);
        let start = self.batch.text.len();
        self.batch.text.extend_from_slice(text);
        self.batch.units.push(UnitMeta {
            start,
            end: self.batch.text.len(),
            offset,
            step: place.step,
            ctx,
            walk,
            header,
            slot,
        });
        if self.batch.text.len() >= BATCH_BYTES {
            (self.progress)(offset, self.objects.load(Ordering::Relaxed));
            self.flush();
        }
        Ok(())
    }

    fn close(&mut self) -> Result<(), String> {
        let open = self
            .stack
            .pop()
            .expect("the splitter closes what it opened");
        match self.stack.last_mut() {
            None => self.root = Some(open.node),
            Some(parent) => match &mut parent.node {
                Node::List(items) => items.push(open.node),
                Node::Dict(d) => d
                    .entries
                    .push((Value::str(open.key.as_deref().unwrap_or("")), open.node)),
                Node::Unit(_) => unreachable!("open containers are lists or dicts"),
            },
        }
        Ok(())
    }

    fn flush(&mut self) {
        if self.batch.units.is_empty() {
            return;
        }
        let batch = std::mem::replace(&mut self.batch, Batch::new(BATCH_BYTES + 4096));
        if let Some(tx) = &self.tx {
            let _ = tx.send(batch);
        }
    }
}

/// The id of a definition's header, which streaming needs to be a string.
fn header_id(h: &Dict, key: &Value) -> Result<Arc<String>, String> {
    match h.get(key) {
        Some(Value::Str(id)) => Ok(id.clone()),
        _ => Err("an object without a string id".into()),
    }
}

/// The class a header piece names, `None` when it is no header (no type).
fn header_class(ex: &Executor, text: &[u8]) -> Result<Option<Arc<Class>>, String> {
    let text = std::str::from_utf8(text).map_err(|e| e.to_string())?;
    let h = runtime::json::from_tagged_str(text).map_err(|e| e.message().to_string())?;
    let Value::Dict(ref h) = h else {
        return Ok(None);
    };
    match defs::def_type(h) {
        Some(ty) => ex.class(&ty).map(Some).map_err(|e| e.message().to_string()),
        None => Ok(None),
    }
}

/// What the workers found.
#[derive(Default)]
struct Found {
    /// Every definition.
    defs: Vec<Def>,
    classes: Vec<Arc<Class>>,
    violations: Vec<(Seq, String, String, Error)>,
    /// Definitions whose contracts name other objects, checked once every
    /// object is known.
    deferred: Vec<Deferred>,
    /// The value each piece stands for in its container (definitions
    /// replaced by their ids), by slot.
    residuals: Vec<(u32, Value)>,
    bail: Option<String>,
}

impl Found {
    fn merge(&mut self, o: Found) {
        let shift = self.classes.len() as u32;
        self.classes.extend(o.classes);
        self.defs.extend(o.defs.into_iter().map(|d| Def {
            class: d.class + shift,
            ..d
        }));
        self.violations.extend(o.violations);
        self.deferred.extend(o.deferred);
        self.residuals.extend(o.residuals);
    }
}

struct Deferred {
    seq: Seq,
    path: String,
    class: Arc<Class>,
    props: Arc<Dict>,
}

/// Whether a class's objects can be checked apart from the model.
#[derive(Clone, Copy, PartialEq)]
enum Plan {
    /// Its contracts need the values only.
    Now,
    /// Some contract names other objects: checked after the pass.
    Later,
    No,
}

fn plan_of(catalog: &Catalog, class: &Class) -> Plan {
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
enum Scope<'r> {
    /// As the piece's container says.
    Piece(&'r Resolver),
    /// The class of an enclosing definition inside the piece (an index
    /// into the worker's `class_list`).
    Class(u32),
}

/// A worker's state.
struct Worker<'a> {
    ex: Arc<Executor>,
    catalog: &'a Arc<Catalog>,
    /// Classes by the `type` of headers that name nothing else (indexes
    /// into `class_list`).
    classes: FxHashMap<Arc<String>, u32>,
    /// The classes met, with their plans: definitions name them by index,
    /// so that threads do not count references to one class object each
    /// time they meet one of its objects.
    class_list: Vec<(Arc<Class>, Plan)>,
    found: Found,
    /// Objects found since the last report.
    objects: u64,
    /// The keys a header is read by.
    keys: Keys,
}

struct Keys {
    objects: Value,
    objects_copy: Value,
    header: Value,
    id: Value,
    ty: Value,
    version: Value,
    package: Value,
}

impl Keys {
    fn new() -> Keys {
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

/// One step of a JSON path below a piece.
enum Seg<'v> {
    Key(&'v Value),
    Index(usize),
}

fn render(base: Base<'_>, segs: &[Seg<'_>]) -> String {
    let mut p = base.render();
    for s in segs {
        match s {
            Seg::Key(k) => {
                p.push('.');
                p.push_str(&runtime::pyrepr::to_str(k));
            }
            Seg::Index(i) => p.push_str(&format!("[{i}]")),
        }
    }
    p
}

fn work(
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
    fn new(catalog: &'a Arc<Catalog>) -> Worker<'a> {
        Worker {
            ex: Executor::with_catalog(catalog.clone()),
            catalog,
            classes: FxHashMap::default(),
            class_list: Vec::new(),
            found: Found::default(),
            objects: 0,
            keys: Keys::new(),
        }
    }

    fn unit(&mut self, text: &[u8], u: &UnitMeta, ctx: &Context) -> Result<(), String> {
        let base = Base {
            parent: &ctx.parent,
            step: &u.step,
        };
        let text = std::str::from_utf8(text).map_err(|e| format!("{}: {e}", base.render()))?;
        let v = runtime::json::from_tagged_str(text).map_err(|e| e.message().to_string())?;
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
        let r = self.walk(&v, scope, &mut segs, base, &mut seq)?;
        self.found.residuals.push((u.slot, r.unwrap_or(v)));
        Ok(())
    }

    /// The class (by index into `class_list`) and plan of a header with a
    /// type.
    fn class(&mut self, h: &Dict) -> Result<Option<(u32, Plan)>, String> {
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
    fn walk<'v>(
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
    fn not_a_snippet(&self, v: &Value, d: &Dict, scope: Scope<'_>) -> Result<(), String> {
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
    fn definition<'v>(
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
        self.found.defs.push(Def::new(id.clone(), ci));
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
                class: class.clone(),
                props: props.clone(),
            });
        } else {
            let path = || render(base, segs);
            check(
                &self.ex,
                class,
                props,
                me,
                &path,
                &mut self.found.violations,
            )?;
        }
        Ok(Value::Str(id))
    }

    /// [`Worker::walk`] over the entries of a dict (but its header when
    /// `definition`).
    fn walk_entries<'v>(
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

/// Checks one object's properties ([`model::check_properties`]),
/// collecting the violations (`path` names the object).
fn check(
    ex: &Executor,
    class: &Arc<Class>,
    props: &Dict,
    seq: Seq,
    path: &dyn Fn() -> String,
    out: &mut Vec<(Seq, String, String, Error)>,
) -> Result<(), String> {
    let found = model::check_properties(ex, class, props)
        .map_err(|e| format!("{}: {}", e.kind(), e.message()))?;
    if !found.is_empty() {
        let path = path();
        out.extend(
            found
                .into_iter()
                .map(|(name, e)| (seq, path.clone(), name.to_string(), e)),
        );
    }
    Ok(())
}

/// Small models validated one at a time, each as [`model::validate`]
/// validates it in an execution of its own, but checked the way the stream
/// checks its pieces, without loading objects: for many small models, such
/// as the rows of a table. It takes the models the stream takes (see the
/// module documentation) whose root is a definition and whose objects'
/// contracts read their values only; for any other model
/// [`Models::validate`] answers `None`, and the caller uses the ordinary
/// load (which also reports what is wrong with the model).
pub struct Models<'a> {
    w: Worker<'a>,
}

impl<'a> Models<'a> {
    /// A validator over `catalog`; it keeps the classes it meets, so one
    /// serves many models.
    pub fn new(catalog: &'a Arc<Catalog>) -> Models<'a> {
        Models {
            w: Worker::new(catalog),
        }
    }

    /// The validation of `model` (`{"Objects": ...}` or a bare object), or
    /// `None` when it needs the ordinary load.
    pub fn validate(&mut self, model: &Value) -> Option<Validation> {
        let root = match model {
            Value::Dict(m) if m.contains_key(&self.w.keys.objects_copy) => return None,
            Value::Dict(m) => m.get(&self.w.keys.objects).unwrap_or(model),
            _ => return None,
        };
        let Value::Dict(d) = root else { return None };
        let Some(Value::Dict(h)) = d.get(&self.w.keys.header) else {
            return None;
        };
        let class = self.w.class(h).ok()??;
        let step = Step::Here;
        let base = Base {
            parent: "$.Objects",
            step: &step,
        };
        let walked = self
            .w
            .definition(root, d, h, class, &mut Vec::new(), base, &mut (0, 0));
        self.w.objects = 0;
        let found = std::mem::take(&mut self.w.found);
        // Contracts that name other objects, and two objects with one id,
        // are left to the ordinary load.
        if walked.is_err() || !found.deferred.is_empty() || twice(&found.defs) {
            return None;
        }
        Some(validation(found.defs.len(), found.violations))
    }
}

/// Whether two definitions have one id.
fn twice(defs: &[Def]) -> bool {
    let mut seen = rustc_hash::FxHashSet::default();
    defs.len() > 1 && !defs.iter().all(|d| seen.insert(d.id.as_str()))
}

/// After the pass: the index of every object, the large definitions, and
/// the checks that needed them.
fn finish(
    catalog: &Arc<Catalog>,
    mut all: Found,
    root: Node,
    jobs: usize,
    mut phases: Phases,
) -> Outcome {
    let mut t = std::time::Instant::now();
    let mut lap = |name, phases: &mut Phases| {
        phases.push((name, t.elapsed()));
        t = std::time::Instant::now();
    };
    // Pieces outside `Objects` have no residual: slots are sparse.
    let slots = all.residuals.iter().map(|(s, _)| *s as usize + 1).max();
    let mut residuals = vec![Value::Null; slots.unwrap_or(0)];
    for (slot, v) in std::mem::take(&mut all.residuals) {
        residuals[slot as usize] = v;
    }
    let ex = Executor::with_catalog(catalog.clone());
    let mut large = Large {
        ex: &ex,
        residuals: &residuals,
        defs: Vec::new(),
        deferred: Vec::new(),
    };
    if let Err(why) = large.visit(&root) {
        return Outcome::Fallback(why);
    }
    let Large {
        defs: large_defs,
        deferred: large_deferred,
        ..
    } = large;
    drop(residuals);
    lap("large containers", &mut phases);
    for (id, class) in large_defs {
        all.classes.push(class);
        all.defs.push(Def::new(id, all.classes.len() as u32 - 1));
    }
    all.deferred.extend(large_deferred);
    let defs = std::mem::take(&mut all.defs);
    let index = match Index::build(defs, std::mem::take(&mut all.classes), jobs) {
        Ok(index) => Arc::new(index),
        Err(why) => return Outcome::Fallback(why),
    };
    let objects = index.len();
    lap("index", &mut phases);
    let mut violations = all.violations;
    match check_deferred(catalog, &index, all.deferred, jobs) {
        Ok(v) => violations.extend(v),
        Err(why) => return Outcome::Fallback(why),
    }
    let v = validation(objects, violations);
    lap("checks after the pass", &mut phases);
    Outcome::Done(v, phases)
}

/// The validation of `objects` objects with these violations, in the
/// document's order.
fn validation(objects: usize, mut violations: Vec<(Seq, String, String, Error)>) -> Validation {
    violations.sort_by_key(|v| v.0);
    Validation {
        objects,
        violations: violations
            .into_iter()
            .map(|(_, path, prop, e)| (path, prop, e))
            .collect(),
        error: None,
    }
}

/// Checks the deferred definitions with every object known, on `jobs`
/// threads.
fn check_deferred(
    catalog: &Arc<Catalog>,
    index: &Arc<Index>,
    deferred: Vec<Deferred>,
    jobs: usize,
) -> Result<Vec<(Seq, String, String, Error)>, String> {
    let per = deferred.len().div_ceil(jobs.max(1)).max(1);
    std::thread::scope(|s| {
        let handles: Vec<_> = deferred
            .chunks(per)
            .map(|part| {
                s.spawn(move || {
                    let ex = Executor::with_catalog(catalog.clone());
                    ex.set_foreign(index.clone());
                    let mut out = Vec::new();
                    for d in part {
                        check(&ex, &d.class, &d.props, d.seq, &|| d.path.clone(), &mut out)?;
                    }
                    Ok::<_, String>(out)
                })
            })
            .collect();
        let mut all = Vec::new();
        for h in handles {
            all.extend(h.join().map_err(|_| "a check stopped".to_string())??);
        }
        Ok(all)
    })
}

/// The large containers, read back: the definitions among them.
struct Large<'a> {
    ex: &'a Executor,
    residuals: &'a [Value],
    defs: Vec<(Arc<String>, Arc<Class>)>,
    deferred: Vec<Deferred>,
}

impl Large<'_> {
    fn residual(&self, slot: u32) -> Value {
        self.residuals
            .get(slot as usize)
            .cloned()
            .unwrap_or(Value::Null)
    }

    /// Visits a large container; returns the value it stands for (a
    /// definition by its id).
    fn visit(&mut self, node: &Node) -> Result<Value, String> {
        match node {
            Node::Unit(slot) => Ok(self.residual(*slot)),
            Node::List(items) => {
                let mut out = Vec::with_capacity(items.len());
                for n in items {
                    out.push(self.visit(n)?);
                }
                Ok(Value::list(out))
            }
            Node::Dict(spine) => self.visit_dict(spine),
        }
    }

    fn visit_dict(&mut self, spine: &Spine) -> Result<Value, String> {
        let header = spine
            .entries
            .iter()
            .find_map(|(k, n)| match (k.as_str(), n) {
                (Some("?"), Node::Unit(slot)) if spine.walk => Some(*slot),
                _ => None,
            });
        let def = header.and_then(|slot| match self.residual(slot) {
            Value::Dict(ref h) => defs::def_type(h).map(|ty| (h.clone(), ty)),
            _ => None,
        });
        let mut out = Dict::default();
        for (k, n) in &spine.entries {
            if def.is_some() && k.as_str() == Some("?") {
                continue;
            }
            out.insert(k.clone(), self.visit(n)?);
        }
        let Some((h, ty)) = def else {
            return Ok(Value::dict(out));
        };
        let id = header_id(&h, &Value::str("id"))?;
        let class = self.ex.class(&ty).map_err(|e| e.message().to_string())?;
        if plan_of(self.ex.catalog(), &class) == Plan::No {
            return Err(format!("class {} needs the ordinary load", class.name));
        }
        let seq = (spine.offset, 0);
        self.defs.push((id.clone(), class.clone()));
        self.deferred.push(Deferred {
            seq,
            path: spine.path.clone(),
            class,
            props: Arc::new(out),
        });
        Ok(Value::Str(id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Package;

    const FLEET: &str = "Namespaces: {=: t}\nName: Fleet\nProperties:\n  servers: {Contract: [$.class(Server)]}\n  lead: {Contract: $.class(Server)}\n  note: {Contract: $.string()}\n";
    const SERVER: &str = "Namespaces: {=: t}\nName: Server\nProperties:\n  name: {Contract: $.string().notNull()}\n  port: {Contract: $.int().notNull().check($ > 0 and $ < 65536)}\n  tags: {Contract: [$.string().notNull()]}\n  settings:\n    Contract: {timeout: $.int().notNull(), label: $.string()}\n  peer: {Contract: $.class(Server)}\n  size: {Contract: $.int(), Default: 3}\n";
    const SPECIAL: &str = "Namespaces: {=: t}\nName: Special\nExtends: Server\nProperties:\n  extra: {Contract: $.int().check($ < 10)}\n";
    const PLAIN: &str = "Namespaces: {=: t}\nName: Plain\nProperties:\n  name: {Contract: $.string().notNull()}\n  port: {Contract: $.int().notNull().check($ > 0 and $ < 65536)}\n  tags: {Contract: [$.string().notNull()]}\n  any: {Contract: $}\n";
    const INITS: &str =
        "Namespaces: {=: t}\nName: Inits\nMethods:\n  .init:\n    Body:\n      - $.x: 1\n";

    fn catalog() -> Arc<Catalog> {
        let files: Vec<(String, String)> = [FLEET, SERVER, SPECIAL, INITS, PLAIN]
            .iter()
            .enumerate()
            .map(|(i, t)| (format!("C{i}.yaml"), t.to_string()))
            .collect();
        Catalog::new(vec![Package::new("t", "1.0.0", "1.4", &files).unwrap()])
    }

    #[test]
    fn the_index_finds_ids_in_every_shard_and_refuses_an_id_twice() {
        let ex = Executor::with_catalog(catalog());
        let classes = vec![
            ex.class("t.Server").unwrap(),
            ex.class("t.Special").unwrap(),
        ];
        let ids: Vec<Arc<String>> = (0..1000).map(|i| Arc::new(format!("o{i}"))).collect();
        let defs = |ids: &[Arc<String>]| -> Vec<Def> {
            ids.iter()
                .enumerate()
                .map(|(i, id)| Def::new(id.clone(), (i % 3 == 0) as u32))
                .collect()
        };
        for jobs in 1..=4 {
            let index = Index::build(defs(&ids), classes.clone(), jobs).unwrap();
            assert_eq!(index.len(), 1000);
            for (i, id) in ids.iter().enumerate() {
                let want = if i % 3 == 0 { "t.Special" } else { "t.Server" };
                // The very string and an equal one at another address.
                assert_eq!(&*index.class_of(id).unwrap().name, want);
                let copy = Arc::new(id.to_string());
                assert_eq!(&*index.class_of(&copy).unwrap().name, want);
            }
            assert!(index.class_of(&Arc::new("o1000".into())).is_none());
            let mut twice = ids.clone();
            twice.push(Arc::new("o7".into()));
            twice.push(Arc::new("o500".into()));
            twice.push(Arc::new("o12".into()));
            let e = Index::build(defs(&twice), classes.clone(), jobs).err();
            assert_eq!(
                e.as_deref(),
                Some("two objects with the id o12"),
                "{jobs} jobs"
            );
        }
    }

    /// A server definition; `i` picks its flaws.
    fn server(i: usize) -> String {
        let ty = if i % 5 == 4 { "t.Special" } else { "t.Server" };
        let port = match i % 7 {
            3 => "\"http\"".to_string(),
            5 => "70000".to_string(),
            _ => (1000 + i).to_string(),
        };
        let name = if i % 11 == 6 {
            "null".to_string()
        } else {
            format!("\"s{i}\"")
        };
        let peer = match i % 4 {
            0 => "null".to_string(),
            1 => format!("\"srv{}\"", i / 2),
            // Nested definitions own objects of their own.
            2 => format!("{{\"?\": {{\"id\": \"in{i}\", \"type\": \"t.Server\"}}, \"port\": {i}}}"),
            _ => "\"fleet\"".to_string(),
        };
        format!(
            "{{\"?\": {{\"id\": \"srv{i}\", \"type\": \"{ty}\"}}, \"name\": {name}, \"port\": {port}, \
             \"tags\": [\"a\", {}], \"settings\": {{\"timeout\": {}, \"label\": \"L\"}}, \
             \"peer\": {peer}, \"extra\": {}}}",
            if i.is_multiple_of(13) { "null" } else { "\"b\"" },
            if i.is_multiple_of(17) { "\"soon\"".to_string() } else { i.to_string() },
            i % 12
        )
    }

    fn fleet(n: usize, header_last: bool) -> String {
        let servers: Vec<String> = (0..n).map(server).collect();
        let header = "\"?\": {\"id\": \"fleet\", \"type\": \"t.Fleet\"}";
        let body = format!(
            "\"servers\": [{}], \"lead\": \"srv1\", \"note\": {{\"x\": 1}}",
            servers.join(", ")
        );
        if header_last {
            format!("{{{body}, {header}}}")
        } else {
            format!("{{{header}, {body}}}")
        }
    }

    fn ordinary(catalog: &Arc<Catalog>, text: &str) -> (usize, Vec<String>) {
        let v = model::validate(catalog, &runtime::json::from_tagged_str(text).unwrap());
        assert!(v.error.is_none(), "{:?}", v.error);
        (v.objects, lines(v))
    }

    fn lines(v: Validation) -> Vec<String> {
        v.violations
            .into_iter()
            .map(|(p, n, e)| format!("{p}.{n}: {}", e.message()))
            .collect()
    }

    fn streamed(catalog: &Arc<Catalog>, text: &str, chunk: usize, jobs: usize) -> Outcome {
        let opts = Options { jobs, chunk };
        validate(catalog, text.as_bytes(), &opts, &|_, _| {})
    }

    #[test]
    fn streaming_gives_what_the_ordinary_load_gives() {
        let catalog = catalog();
        let models = [
            format!("{{\"Objects\": {}, \"Attributes\": []}}", fleet(60, false)),
            fleet(40, false),
            fleet(40, true),
            format!("[{}]", (0..30).map(server).collect::<Vec<_>>().join(", "))
                .replace("\"peer\": \"fleet\"", "\"peer\": \"srv0\""),
        ];
        let first = ordinary(&catalog, &models[0]).1.join("\n");
        for kind in [
            "doesn't match predicate",
            "int()",
            "notNull()",
            "not compatible with requested",
        ] {
            assert!(first.contains(kind), "the model has {kind} violations");
        }
        for text in &models {
            let want = ordinary(&catalog, text);
            for chunk in [40, 200, 1000, 4000] {
                for jobs in [1, 3] {
                    match streamed(&catalog, text, chunk, jobs) {
                        Outcome::Done(v, _) => {
                            assert_eq!((v.objects, lines(v)), want, "chunk {chunk}, jobs {jobs}")
                        }
                        Outcome::Fallback(why) => panic!("chunk {chunk}: fell back: {why}"),
                    }
                }
            }
        }
    }

    /// A model of one Plain object; `i` picks its flaws and its form.
    fn plain(i: usize) -> String {
        let port = ["80", "\"http\"", "70000", "null"][i % 4];
        let name = if i % 3 == 1 { "null" } else { "\"p\"" };
        let any = match i % 5 {
            0 => "null".to_string(),
            // Nested definitions: objects of their own, checked too.
            1 => format!("{{\"?\": {{\"id\": \"in{i}\", \"type\": \"t.Plain\"}}, \"port\": -{i}}}"),
            2 => {
                format!("[{{\"?\": {{\"id\": \"a{i}\", \"type\": \"t.Plain\"}}, \"name\": 5}}, 7]")
            }
            3 => "{\"k\": [1, {\"x\": true}]}".to_string(),
            _ => "\"text\"".to_string(),
        };
        let obj = format!(
            "{{\"?\": {{\"id\": \"p{i}\", \"type\": \"t.Plain\"}}, \"name\": {name}, \"port\": {port}, \"tags\": [\"a\", {}], \"any\": {any}}}",
            if i % 7 == 2 { "3" } else { "\"b\"" }
        );
        match i % 2 {
            0 => obj,
            _ => format!("{{\"Objects\": {obj}, \"Attributes\": []}}"),
        }
    }

    #[test]
    fn small_models_give_what_the_ordinary_load_gives() {
        let catalog = catalog();
        let mut models = Models::new(&catalog);
        let mut violations = 0;
        for i in 0..70 {
            let text = plain(i);
            let want = ordinary(&catalog, &text);
            violations += want.1.len();
            let v = runtime::json::from_tagged_str(&text).unwrap();
            let got = models
                .validate(&v)
                .unwrap_or_else(|| panic!("{text}: fell back"));
            assert!(got.error.is_none());
            assert_eq!((got.objects, lines(got)), want, "{text}");
        }
        assert!(violations > 70, "the models have violations: {violations}");
    }

    #[test]
    fn small_models_the_stream_cannot_decide_are_left_to_the_ordinary_load() {
        let catalog = catalog();
        let mut models = Models::new(&catalog);
        let nested = |any: &str| plain(0).replace("\"any\": null", &format!("\"any\": {any}"));
        let cases = [
            // Contracts that name other objects.
            server(0),
            // Two objects with one id; headers the load refuses.
            nested("{\"?\": {\"id\": \"p0\", \"type\": \"t.Plain\"}}"),
            nested("{\"?\": {\"id\": \"x\"}}"),
            nested("{\"?\": 5}"),
            nested("{\"?\": {\"id\": 5, \"type\": \"t.Plain\"}}"),
            format!("{{\"Objects\": {}, \"ObjectsCopy\": {{}}}}", plain(0)),
            plain(0).replace("t.Plain", "t.Inits"),
            plain(0).replace("t.Plain", "t.Nowhere"),
            format!("[{}]", plain(0)),
            "{\"name\": \"no header\"}".to_string(),
        ];
        for text in cases {
            let v = runtime::json::from_tagged_str(&text).unwrap();
            assert!(models.validate(&v).is_none(), "{text}");
        }
        // What was refused leaves nothing behind for the next model.
        let text = plain(3);
        let got = models.validate(&runtime::json::from_tagged_str(&text).unwrap());
        assert_eq!(
            got.map(|v| (v.objects, lines(v))),
            Some(ordinary(&catalog, &text))
        );
    }

    #[test]
    fn what_streaming_cannot_decide_falls_back() {
        let catalog = catalog();
        let big = fleet(20, false);
        let cases = [
            (
                big.replace("srv3\"", "srv2\""),
                "two objects with the id srv2",
            ),
            (
                format!("{{\"Objects\": {big}, \"ObjectsCopy\": {{}}}}"),
                "ObjectsCopy",
            ),
            (
                big.replace("t.Special", "t.Inits"),
                "class t.Inits needs the ordinary load",
            ),
            (
                big.replace("\"id\": \"srv7\", ", ""),
                "an object without a string id",
            ),
            (
                big.replace(
                    "\"id\": \"fleet\", \"type\": \"t.Fleet\"",
                    "\"id\": \"fleet\"",
                ),
                "no typed object header",
            ),
            (
                big.replace(
                    "\"id\": \"srv7\", \"type\": \"t.Server\"",
                    "\"id\": \"srv7\"",
                ),
                "an object header without a type",
            ),
            (
                big.replace("\"lead\": \"srv1\"", "\"lead\": \"nowhere\""),
                "not found",
            ),
            (
                big.replace("\"lead\": \"srv1\"", "\"lead\": \"srv1\","),
                "at byte",
            ),
            (
                big.replace("\"timeout\": 1,", "\"timeout\": tru,"),
                "bad JSON",
            ),
        ];
        for (text, why) in cases {
            match streamed(&catalog, &text, 200, 2) {
                Outcome::Fallback(got) => assert!(got.contains(why), "{why}: {got}"),
                Outcome::Done(..) => panic!("{why}: streamed"),
            }
        }
        // A document within one piece is not streamed.
        assert!(matches!(
            streamed(&catalog, &big, 1 << 20, 2),
            Outcome::Fallback(_)
        ));
    }
}
