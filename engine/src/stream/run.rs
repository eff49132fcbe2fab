//! A stream's run: the pass over the text, the index of the objects, the
//! checks left for after the pass, and the result; small models one by one.

use std::io::Read;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{mpsc, Arc, Mutex};

use runtime::json::split::{self};
use runtime::{Dict, Error, Value};

use crate::catalog::Catalog;
use crate::class::Class;
use crate::defs;
use crate::executor::Executor;
use crate::executor::{Def, Index};
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
    Done(Validation, Phases),
    /// The model needs the ordinary load, for this reason.
    Fallback(String),
}

/// The phases of a stream and their wall times.
pub type Phases = Vec<(&'static str, std::time::Duration)>;

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
        if walked.is_err() || !found.deferred.is_empty() || twice(&found.defs) {
            return None;
        }
        Some(validation(found.defs.len(), found.violations))
    }
}

/// Whether two definitions have one id.
pub(crate) fn twice(defs: &[Def]) -> bool {
    let mut seen = rustc_hash::FxHashSet::default();
    defs.len() > 1 && !defs.iter().all(|d| seen.insert(d.id.as_str()))
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
pub(crate) fn validation(
    objects: usize,
    mut violations: Vec<(Seq, String, String, Error)>,
) -> Validation {
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
pub(crate) fn check_deferred(
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
pub(crate) struct Large<'a> {
    pub(crate) ex: &'a Executor,
    pub(crate) residuals: &'a [Value],
    pub(crate) defs: Vec<(Arc<String>, Arc<Class>)>,
    pub(crate) deferred: Vec<Deferred>,
}

impl Large<'_> {
    pub(crate) fn residual(&self, slot: u32) -> Value {
        self.residuals
            .get(slot as usize)
            .cloned()
            .unwrap_or(Value::Null)
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
