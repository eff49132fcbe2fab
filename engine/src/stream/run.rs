//! A stream's run: the pass over the text, the index of the objects, the
//! checks left for after the pass, and the result; small models one by one.

use std::io::Read;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{mpsc, Arc, Mutex};

use runtime::json::split::{self};
use runtime::{Dict, Error, Value};
use rustc_hash::FxHashMap;

use crate::catalog::Catalog;
use crate::class::Class;
use crate::defs;
use crate::executor::Executor;
use crate::executor::Index;
use crate::model::Validation;

use super::reader::*;
use super::worker::*;

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
    Done(Validation, Stats),
    /// The model needs the ordinary load, for this reason.
    Fallback(String),
}

/// The phases of a stream and their wall times.
pub type Phases = Vec<(&'static str, std::time::Duration)>;

/// What a stream did.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Its phases and their wall times.
    pub phases: Phases,
    /// Objects read in place from their text, no value built (the rest
    /// were parsed into values and checked the full way).
    pub in_place: u64,
}

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

/// Small models validated one at a time, each as [`model::validate`]
/// validates it in an execution of its own, but checked the way the stream
/// checks its pieces, without loading objects: for many small models, such
/// as the rows of a table. It takes the models the stream takes (see the
/// module documentation) whose root is a definition and whose objects'
/// contracts read their values only; for any other model
/// [`Models::validate`] answers `None`, and the caller uses the ordinary
/// load (which also reports what is wrong with the model).
pub struct Models<'a> {
    pub(crate) w: Worker<'a>,
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
        if walked.is_err() || !found.deferred.is_empty() || found.defs.twice() {
            return None;
        }
        Some(validation(found.defs.len(), found.violations))
    }
}

/// After the pass: the index of every object, the large definitions, and
/// the checks that needed them.
pub(crate) fn finish(
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
    let mut residuals = std::mem::take(&mut all.residuals);
    residuals.sort_unstable_by_key(|(s, _)| *s);
    let ex = Executor::with_catalog(catalog.clone());
    let mut large = Large {
        ex: &ex,
        residuals: &residuals,
        defs: Vec::new(),
        deferred: Vec::new(),
        items: Vec::new(),
    };
    if let Err(why) = large.visit(&root) {
        return Outcome::Fallback(why);
    }
    let Large {
        defs: large_defs,
        deferred: large_deferred,
        items: large_items,
        ..
    } = large;
    all.deferred_items.extend(large_items);
    drop(residuals);
    lap("large containers", &mut phases);
    for (id, class) in large_defs {
        all.classes.push(class);
        all.defs.push(&id, all.classes.len() as u32 - 1);
    }
    all.deferred.extend(large_deferred);
    let mut fps = std::mem::take(&mut all.defs).0;
    fps.resize_with(all.classes.len(), Vec::new);
    let parts = std::mem::take(&mut all.classes)
        .into_iter()
        .zip(fps)
        .collect();
    let index = match Index::build(parts, jobs) {
        Ok(index) => Arc::new(index),
        Err(why) => return Outcome::Fallback(why),
    };
    let objects = index.len();
    lap("index", &mut phases);
    let mut violations = all.violations;
    let firsts = match first_items(catalog, &index, all.items, all.deferred_items, jobs) {
        Ok(f) => f,
        Err(why) => return Outcome::Fallback(why),
    };
    match check_deferred(catalog, &index, all.deferred, &firsts, jobs) {
        Ok(v) => violations.extend(v),
        Err(why) => return Outcome::Fallback(why),
    }
    let v = validation(objects, violations);
    lap("checks after the pass", &mut phases);
    let in_place = all.in_place;
    Outcome::Done(v, Stats { phases, in_place })
}

/// The validation of `objects` objects with these violations, in the
/// document's order.
pub(crate) fn validation(objects: usize, mut violations: Vec<Violation>) -> Validation {
    violations.sort_by_key(|v| v.seq);
    let places = (violations.iter())
        .map(|v| (v.seq.0, v.piece.to_string()))
        .collect();
    Validation {
        objects,
        violations: (violations.into_iter())
            .map(|v| (v.path, v.prop, v.error))
            .collect(),
        error: None,
        places,
    }
}

/// Runs `f` over `work` on `jobs` threads, each with an execution that
/// knows the objects of `index`; the outputs in the order of `work`.
fn on_threads<T: Sync, O: Send>(
    catalog: &Arc<Catalog>,
    index: &Arc<Index>,
    work: &[T],
    jobs: usize,
    f: impl Fn(&Executor, &T, &mut Vec<O>) -> Result<(), String> + Sync,
) -> Result<Vec<O>, String> {
    let per = work.len().div_ceil(jobs.max(1)).max(1);
    let f = &f;
    std::thread::scope(|s| {
        let handles: Vec<_> = work
            .chunks(per)
            .map(|part| {
                s.spawn(move || {
                    let ex = Executor::with_catalog(catalog.clone());
                    ex.set_foreign(index.clone());
                    let mut out = Vec::new();
                    for w in part {
                        f(&ex, w, &mut out)?;
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

/// The first violating item of each streamed list property (by its
/// number): of the items checked in the pass, and of those checked now
/// that every object is known.
pub(crate) fn first_items(
    catalog: &Arc<Catalog>,
    index: &Arc<Index>,
    mut items: Vec<Item<Error>>,
    deferred: Vec<Item<Value>>,
    jobs: usize,
) -> Result<FxHashMap<u32, Item<Error>>, String> {
    let checked = on_threads(catalog, index, &deferred, jobs, |ex, it, out| {
        let list = &it.list;
        let env = ex.env(list.declared.package.legacy);
        let ctx = ex.class_ctx(&list.declared, Value::Null);
        let contract = list.contract();
        match contract.check_item(ex, env, &ctx, it.index, it.what.clone(), list.name()) {
            Ok(_) => Ok(()),
            Err(e) if *e.error_kind() == runtime::ErrorKind::ContractViolationException => {
                out.push(Item {
                    list: list.clone(),
                    index: it.index,
                    what: e,
                });
                Ok(())
            }
            Err(e) => Err(format!("{}: {}", e.kind(), e.message())),
        }
    })?;
    items.extend(checked);
    let mut first: FxHashMap<u32, Item<Error>> = FxHashMap::default();
    for it in items {
        match first.get(&it.list.no) {
            Some(f) if f.index <= it.index => {}
            _ => {
                first.insert(it.list.no, it);
            }
        }
    }
    Ok(first)
}

/// Checks the deferred definitions with every object known, on `jobs`
/// threads; `firsts` are the first violating items of the streamed list
/// properties.
pub(crate) fn check_deferred(
    catalog: &Arc<Catalog>,
    index: &Arc<Index>,
    deferred: Vec<Deferred>,
    firsts: &FxHashMap<u32, Item<Error>>,
    jobs: usize,
) -> Result<Vec<Violation>, String> {
    on_threads(catalog, index, &deferred, jobs, |ex, d, out| {
        // A list's length is checked before its items.
        let lists: Vec<(Arc<ListProp>, Option<Error>)> = d
            .lists
            .iter()
            .map(|(list, len)| {
                let e = (list.contract())
                    .length_violation(*len as usize, list.name())
                    .or_else(|| firsts.get(&list.no).map(|f| f.what.clone()));
                (list.clone(), e)
            })
            .collect();
        let path = || (d.path.clone(), d.piece.clone());
        check(ex, &d.class, &d.props, &lists, d.seq, &path, out)
    })
}

/// The large containers, read back: the definitions among them.
pub(crate) struct Large<'a> {
    pub(crate) ex: &'a Executor,
    /// The values of the pieces, by slot (sorted).
    pub(crate) residuals: &'a [(u32, Value)],
    pub(crate) defs: Vec<(Arc<String>, Arc<Class>)>,
    pub(crate) deferred: Vec<Deferred>,
    /// The items of list properties too long for a piece.
    pub(crate) items: Vec<Item<Value>>,
}

impl Large<'_> {
    pub(crate) fn residual(&self, slot: u32) -> Value {
        match self.residuals.binary_search_by_key(&slot, |(s, _)| *s) {
            Ok(i) => self.residuals[i].1.clone(),
            Err(_) => Value::Null,
        }
    }

    /// Visits a large container; returns the value it stands for (a
    /// definition by its id).
    pub(crate) fn visit(&mut self, node: &Node) -> Result<Value, String> {
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
            Node::Items(..) => Err("a list property outside a definition".into()),
        }
    }

    pub(crate) fn visit_dict(&mut self, spine: &Spine) -> Result<Value, String> {
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
        let mut lists = Vec::new();
        for (k, n) in &spine.entries {
            if def.is_some() && k.as_str() == Some("?") {
                continue;
            }
            match n {
                Node::Items(s) => {
                    for (i, n) in &s.large {
                        let what = self.visit(n)?;
                        self.items.push(Item {
                            list: s.list.clone(),
                            index: *i as usize,
                            what,
                        });
                    }
                    lists.push((s.list.clone(), s.len));
                }
                n => {
                    out.insert(k.clone(), self.visit(n)?);
                }
            }
        }
        if def.is_none() && !lists.is_empty() {
            return Err("a list property outside a definition".into());
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
            piece: spine.path.as_str().into(),
            class,
            props: Arc::new(out),
            lists,
        });
        Ok(Value::Str(id))
    }
}
