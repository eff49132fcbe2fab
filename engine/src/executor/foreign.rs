//! The classes of the objects of a streamed model by id: what `class()`
//! contracts see of objects this execution does not hold (streaming
//! validation, see `stream.rs`, which builds it).

use hashbrown::HashTable;
use std::sync::Arc;

use runtime::{Error, ErrorKind};

use crate::class::Class;

/// The classes of a streamed model's objects, by id (a string value).
///
/// Sharded by the ids' hashes, which the workers compute while an id is
/// fresh in their cache: after the pass, one thread per shard fills it
/// without reading an id again. A reference to an object is usually the
/// very string its definition's header holds (the walk puts it there), so
/// a lookup compares pointers before bytes.
pub struct Index {
    defs: Vec<Def>,
    classes: Vec<Arc<Class>>,
    shards: Vec<HashTable<Entry>>,
}

/// A definition met in the pass.
pub(crate) struct Def {
    pub(crate) hash: u64,
    pub(crate) id: Arc<String>,
    /// Into the classes of its `Found`.
    pub(crate) class: u32,
}

impl Def {
    pub(crate) fn new(id: Arc<String>, class: u32) -> Def {
        Def {
            hash: id_hash(&id),
            id,
            class,
        }
    }
}

/// An id in the index: its string's address, its definition and class.
#[derive(Clone, Copy)]
struct Entry {
    ptr: usize,
    def: u32,
    class: u32,
}

fn id_hash(id: &str) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one(id)
}

/// The shard of a hash (bits the tables' own bucket and tag bits leave).
fn shard(hash: u64, n: usize) -> usize {
    ((hash >> 32) % n as u64) as usize
}

impl Index {
    /// The index of `defs`, built on `jobs` threads; the id of a
    /// definition that is not the only one with its id is an error (the
    /// smallest such id, whatever the threads' timing).
    pub(crate) fn build(
        defs: Vec<Def>,
        classes: Vec<Arc<Class>>,
        jobs: usize,
    ) -> Result<Index, String> {
        let n = jobs.max(1);
        let results: Vec<Result<HashTable<Entry>, Arc<String>>> = std::thread::scope(|s| {
            let defs = &defs;
            let handles: Vec<_> = (0..n)
                .map(|k| s.spawn(move || Index::fill(defs, k, n)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        });
        let mut shards = Vec::with_capacity(n);
        let mut twice: Option<Arc<String>> = None;
        for r in results {
            match r {
                Ok(t) => shards.push(t),
                Err(id) => twice = Some(twice.map_or(id.clone(), |t| t.min(id))),
            }
        }
        match twice {
            Some(id) => Err(format!("two objects with the id {id}")),
            None => Ok(Index {
                defs,
                classes,
                shards,
            }),
        }
    }

    /// Shard `k` of `n`.
    fn fill(defs: &[Def], k: usize, n: usize) -> Result<HashTable<Entry>, Arc<String>> {
        let mut t = HashTable::with_capacity(defs.len() / n + defs.len() / (8 * n) + 1);
        let mut twice: Option<&Arc<String>> = None;
        for (i, d) in defs.iter().enumerate() {
            if shard(d.hash, n) != k {
                continue;
            }
            let ptr = Arc::as_ptr(&d.id) as usize;
            let same = |e: &Entry| e.ptr == ptr || defs[e.def as usize].id == d.id;
            match t.entry(d.hash, same, |e| defs[e.def as usize].hash) {
                hashbrown::hash_table::Entry::Occupied(_) => {
                    twice = Some(twice.map_or(&d.id, |t| t.min(&d.id)));
                }
                hashbrown::hash_table::Entry::Vacant(v) => {
                    v.insert(Entry {
                        ptr,
                        def: i as u32,
                        class: d.class,
                    });
                }
            }
        }
        match twice {
            Some(id) => Err(id.clone()),
            None => Ok(t),
        }
    }

    /// The number of objects.
    pub(crate) fn len(&self) -> usize {
        self.defs.len()
    }

    /// The class of the object with this id.
    pub fn class_of(&self, id: &Arc<String>) -> Option<&Arc<Class>> {
        let hash = id_hash(id);
        let ptr = Arc::as_ptr(id) as usize;
        self.shards[shard(hash, self.shards.len())]
            .find(hash, |e| {
                e.ptr == ptr || *self.defs[e.def as usize].id == **id
            })
            .map(|e| &self.classes[e.class as usize])
    }
}

/// The error a check raises for what only the ordinary load can do.
pub fn not_streamable(why: &str) -> Error {
    Error::new(ErrorKind::Other("NotStreamable".into()), why.to_string())
}
