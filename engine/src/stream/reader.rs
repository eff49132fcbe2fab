//! The reading side of streaming validation: the JSON text split into
//! pieces, batched for the workers, with the paths (spines) of the values
//! they hold.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};

use runtime::json::split::Piece;
use runtime::{Dict, Value};

use crate::catalog::Catalog;
use crate::class::{Class, Prop};
use crate::contracts::Contract;
use crate::defs;
use crate::executor::Executor;
use compiler::murano::PropertyUsage;

/// Progress: bytes read and objects checked so far.
pub type Progress<'a> = &'a (dyn Fn(u64, u64) + Sync);

/// Where a unit is in the document (a seq orders objects as the document
/// does: the offset of the unit, then the definition's rank in it).
pub(crate) type Seq = (u64, u32);

/// The class that resolves short type names under a container: the
/// enclosing definition's.
#[derive(Clone)]
pub(crate) enum Resolver {
    Known(Option<Arc<Class>>),
    /// Inside a large dict whose `?` header has not been read yet.
    Unknown,
}

impl Resolver {
    pub(crate) fn same(&self, other: &Resolver) -> bool {
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
pub(crate) struct UnitMeta {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) offset: u64,
    /// Its JSON path below its context's.
    pub(crate) step: Step,
    /// Its container (in the batch's `contexts`).
    pub(crate) ctx: u32,
    /// Inside `Objects` (else only parsed, for its syntax).
    pub(crate) walk: bool,
    /// The `?` header of a large definition: kept as it is, not walked.
    pub(crate) header: bool,
    pub(crate) slot: u32,
}

/// What the pieces of one container share: its path and resolver, and
/// the list property they are items of. A batch holds each once, so that
/// the pieces do not count references to them one by one on the reader's
/// thread and again on a worker's.
pub(crate) struct Context {
    pub(crate) parent: Arc<str>,
    pub(crate) resolver: Resolver,
    pub(crate) items: Option<Arc<ListProp>>,
}

/// A list property of a large definition whose items are checked one by
/// one as they stream by and then forgotten: the memory a model takes does
/// not grow with the length of its lists.
pub(crate) struct ListProp {
    /// The class that declares the property, and its index among that
    /// class's properties.
    pub(crate) declared: Arc<Class>,
    pub(crate) prop: usize,
    /// Its number among the stream's list properties.
    pub(crate) no: u32,
}

impl ListProp {
    /// The list property `key` of an object of `class`, when its items can
    /// be checked one by one: a property (one of that name) with a list
    /// contract that the definition gives (no configuration).
    pub(crate) fn of(class: &Arc<Class>, key: &str, no: u32) -> Option<ListProp> {
        let mut found = None;
        for (cls, p) in class.init_order() {
            if p.key.as_str() != Some(key) {
                continue;
            }
            let plain = !matches!(p.usage, PropertyUsage::Config | PropertyUsage::Runtime);
            if found.is_some() || !plain || !cls.package.configs.is_empty() {
                return None;
            }
            Contract::of(&p.contract).list_bounds()?;
            let prop = cls.props.iter().position(|q| std::ptr::eq(q, p))?;
            found = Some(ListProp {
                declared: cls.clone(),
                prop,
                no,
            });
        }
        found
    }

    pub(crate) fn prop(&self) -> &Prop {
        &self.declared.props[self.prop]
    }

    pub(crate) fn name(&self) -> &str {
        &self.prop().name
    }

    pub(crate) fn contract(&self) -> &Contract {
        Contract::of(&self.prop().contract)
    }
}

/// Pieces for a worker, their text in one buffer.
pub(crate) struct Batch {
    pub(crate) text: Vec<u8>,
    pub(crate) units: Vec<UnitMeta>,
    pub(crate) contexts: Vec<Context>,
}

impl Batch {
    pub(crate) fn new(capacity: usize) -> Batch {
        Batch {
            text: Vec::with_capacity(capacity),
            units: Vec::new(),
            contexts: Vec::new(),
        }
    }

    /// The index of the context of a piece, shared with the piece before
    /// when it has the same.
    pub(crate) fn context(
        &mut self,
        parent: Arc<str>,
        resolver: Resolver,
        items: Option<&Arc<ListProp>>,
    ) -> u32 {
        let same_items = |c: &Context| match (&c.items, items) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (a, b) => a.is_none() && b.is_none(),
        };
        match self.contexts.last() {
            Some(c)
                if Arc::ptr_eq(&c.parent, &parent)
                    && c.resolver.same(&resolver)
                    && same_items(c) => {}
            _ => self.contexts.push(Context {
                parent,
                resolver,
                items: items.cloned(),
            }),
        }
        self.contexts.len() as u32 - 1
    }
}

pub(crate) const BATCH_BYTES: usize = 256 << 10;

/// A large container of the document, as read.
pub(crate) enum Node {
    /// A piece: its slot among the residuals.
    Unit(u32),
    List(Vec<Node>),
    Dict(Spine),
    /// A list property whose items were checked as they streamed by.
    Items(Streamed),
}

pub(crate) struct Spine {
    pub(crate) offset: u64,
    pub(crate) path: String,
    pub(crate) walk: bool,
    pub(crate) entries: Vec<(Value, Node)>,
}

impl Node {
    /// Adds a child to an open container (`key`: of a dict).
    fn push(&mut self, key: Option<&str>, node: Node) {
        match self {
            Node::List(items) => items.push(node),
            Node::Dict(d) => d.entries.push((Value::str(key.unwrap_or("")), node)),
            Node::Unit(_) | Node::Items(..) => unreachable!("open containers are lists or dicts"),
        }
    }
}

/// An open large container.
pub(crate) struct Open {
    pub(crate) node: Node,
    pub(crate) key: Option<String>,
    pub(crate) path: Arc<str>,
    pub(crate) walk: bool,
    /// What its children resolve names with.
    pub(crate) resolver: Resolver,
    pub(crate) keys: std::collections::HashSet<String>,
    /// The root dict in `{"Objects": ...}` form.
    pub(crate) model: bool,
    /// A list property whose items stream by.
    pub(crate) items: Option<Streamed>,
    /// Its index, when it is an item of a list property.
    pub(crate) item: Option<u64>,
}

/// A list property whose items stream by: how many there are, and those
/// too long for a piece, by index (read as large containers are).
pub(crate) struct Streamed {
    pub(crate) list: Arc<ListProp>,
    pub(crate) len: u64,
    pub(crate) large: Vec<(u64, Node)>,
}

/// The splitter's consumer: builds the tree of large containers and sends
/// pieces to the workers.
pub(crate) struct Reader<'a> {
    pub(crate) ex: Arc<Executor>,
    pub(crate) tx: Option<mpsc::SyncSender<Batch>>,
    pub(crate) batch: Batch,
    pub(crate) stack: Vec<Open>,
    pub(crate) root: Option<Node>,
    pub(crate) slots: u32,
    pub(crate) bail: Option<String>,
    pub(crate) stop: &'a AtomicBool,
    pub(crate) progress: Progress<'a>,
    pub(crate) objects: &'a AtomicU64,
    /// List properties met.
    pub(crate) lists: u32,
}

/// A JSON path, spelled out only when a message or a deferred check needs
/// it: a container's path and a step below it.
pub(crate) struct Place {
    pub(crate) parent: Arc<str>,
    pub(crate) step: Step,
}

pub(crate) enum Step {
    Here,
    Index(usize),
    Key(String),
}

impl Place {
    pub(crate) fn at(path: &str) -> Place {
        Place {
            parent: path.into(),
            step: Step::Here,
        }
    }

    pub(crate) fn child(parent: &Arc<str>, key: Option<&str>, index: usize) -> Place {
        Place {
            parent: parent.clone(),
            step: match key {
                Some(k) => Step::Key(k.to_string()),
                None => Step::Index(index),
            },
        }
    }

    pub(crate) fn render(&self) -> String {
        self.base().render()
    }

    pub(crate) fn base(&self) -> Base<'_> {
        Base {
            parent: &self.parent,
            step: &self.step,
        }
    }
}

/// A [`Place`], borrowed (from a batch).
#[derive(Clone, Copy)]
pub(crate) struct Base<'b> {
    pub(crate) parent: &'b str,
    pub(crate) step: &'b Step,
}

impl Base<'_> {
    pub(crate) fn render(&self) -> String {
        match self.step {
            Step::Here => self.parent.to_string(),
            Step::Index(i) => format!("{}[{i}]", self.parent),
            Step::Key(k) => format!("{}.{k}", self.parent),
        }
    }
}

impl Open {
    fn is_dict(&self) -> bool {
        matches!(self.node, Node::Dict(_))
    }
}

impl<'a> Reader<'a> {
    pub(crate) fn new(
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
            lists: 0,
        }
    }

    pub(crate) fn give_up<T>(&mut self, why: impl Into<String>) -> Result<T, String> {
        let why = why.into();
        self.bail.get_or_insert(why.clone());
        self.stop.store(true, Ordering::Relaxed);
        Err(why)
    }

    pub(crate) fn piece(&mut self, p: Piece<'_>) -> Result<(), String> {
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
    pub(crate) fn place(&mut self, key: Option<&str>) -> Result<(Place, bool, Resolver), String> {
        let Some(top) = self.stack.last_mut() else {
            return Ok((Place::at("$.Objects"), true, Resolver::Known(None)));
        };
        let index = match (&top.node, &top.items) {
            (_, Some(s)) => s.len as usize,
            (Node::List(items), None) => items.len(),
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
    pub(crate) fn place_top(
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

    pub(crate) fn open(
        &mut self,
        key: Option<String>,
        list: bool,
        offset: u64,
    ) -> Result<(), String> {
        let (place, walk, inherited) = self.place(key.as_deref())?;
        // An item of a list property too long for a piece.
        let item = self.stack.last_mut().and_then(|top| {
            let s = top.items.as_mut()?;
            s.len += 1;
            Some(s.len - 1)
        });
        let items = match (&inherited, key.as_deref(), self.stack.last()) {
            (Resolver::Known(Some(class)), Some(k), Some(top)) if list && walk && top.is_dict() => {
                ListProp::of(class, k, self.lists).map(|l| Streamed {
                    list: Arc::new(l),
                    len: 0,
                    large: Vec::new(),
                })
            }
            _ => None,
        };
        self.lists += u32::from(items.is_some());
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
            items,
            item,
        });
        Ok(())
    }

    pub(crate) fn unit(
        &mut self,
        key: Option<String>,
        offset: u64,
        text: &[u8],
    ) -> Result<(), String> {
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
        let top = self.stack.last_mut().expect("a parent");
        let items = match &mut top.items {
            // An item of a list property: checked and forgotten.
            Some(s) => {
                s.len += 1;
                Some(&s.list)
            }
            None => {
                self.slots += 1;
                top.node.push(key.as_deref(), Node::Unit(slot));
                None
            }
        };
        let ctx = self.batch.context(place.parent, resolver, items);
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

    pub(crate) fn close(&mut self) -> Result<(), String> {
        let open = self
            .stack
            .pop()
            .expect("the splitter closes what it opened");
        let node = match open.items {
            Some(s) => Node::Items(s),
            None => open.node,
        };
        match (self.stack.last_mut(), open.item) {
            (None, _) => self.root = Some(node),
            (Some(parent), Some(i)) => match &mut parent.items {
                Some(s) => s.large.push((i, node)),
                None => unreachable!("an item's parent streams its items"),
            },
            (Some(parent), None) => parent.node.push(open.key.as_deref(), node),
        }
        Ok(())
    }

    pub(crate) fn flush(&mut self) {
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
pub(crate) fn header_id(h: &Dict, key: &Value) -> Result<Arc<String>, String> {
    match h.get(key) {
        Some(Value::Str(id)) => Ok(id.clone()),
        _ => Err("an object without a string id".into()),
    }
}

/// The class a header piece names, `None` when it is no header (no type).
pub(crate) fn header_class(ex: &Executor, text: &[u8]) -> Result<Option<Arc<Class>>, String> {
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

/// One step of a JSON path below a piece.
pub(crate) enum Seg<'v> {
    Key(&'v Value),
    Index(usize),
}

pub(crate) fn render(base: Base<'_>, segs: &[Seg<'_>]) -> String {
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
