//! The classes of the objects of a streamed model by id: what `class()`
//! contracts see of objects this execution does not hold (streaming
//! validation, see `stream/`, which builds it).
//!
//! A model of millions of objects must validate in little memory, so the
//! index keeps no id: each is a 64-bit fingerprint (XXH3), filed under its
//! object's class. Two ids with one fingerprint look like one id given
//! twice, which streaming answers by handing the model to the ordinary
//! load: a collision (about one chance in 10^6 for five million ids) costs
//! time, never a wrong answer.

use std::sync::Arc;

use runtime::{Error, ErrorKind};

use crate::class::Class;

/// The fingerprint of an object id.
pub(crate) fn fingerprint(id: &str) -> u64 {
    twox_hash::XxHash3_64::oneshot(id.as_bytes())
}

/// The classes of a streamed model's objects, by id: for each class, the
/// fingerprints of its objects' ids (8 bytes an object) in sorted chunks,
/// gathered into one sorted list per class the first time an id is looked
/// up (validation that looks up no id never holds them twice).
pub struct Index {
    parts: Vec<(Arc<Class>, Chunks)>,
    gathered: std::sync::OnceLock<Vec<(Arc<Class>, Vec<u64>)>>,
    len: usize,
}

/// The fingerprints of the objects of each class met in a pass (classes by
/// index into a list of the finder's), in chunks of a fixed size: a list
/// that doubles as it grows could hold twice what it needs.
#[derive(Default)]
pub(crate) struct Defs(pub(crate) Vec<Chunks>);

/// Fingerprints in chunks of [`CHUNK`].
pub(crate) type Chunks = Vec<Vec<u64>>;

const CHUNK: usize = 1 << 16;

impl Defs {
    /// Files the object `id` under class `class`.
    pub(crate) fn push(&mut self, id: &str, class: u32) {
        let c = class as usize;
        if self.0.len() <= c {
            self.0.resize_with(c + 1, Vec::new);
        }
        let chunks = &mut self.0[c];
        match chunks.last_mut() {
            Some(last) if last.len() < CHUNK => last.push(fingerprint(id)),
            _ => {
                let mut chunk = Vec::with_capacity(CHUNK);
                chunk.push(fingerprint(id));
                chunks.push(chunk);
            }
        }
    }

    /// The number of objects.
    pub(crate) fn len(&self) -> usize {
        self.0.iter().flatten().map(Vec::len).sum()
    }

    /// True when two objects have one id (or one fingerprint).
    pub(crate) fn twice(&self) -> bool {
        let mut all: Vec<u64> = self.0.iter().flatten().flatten().copied().collect();
        all.sort_unstable();
        all.windows(2).any(|w| w[0] == w[1])
    }
}

impl Index {
    /// The index of the objects in `parts` (a class and its objects'
    /// fingerprints; one class may come in several parts), sorted on
    /// `jobs` threads; two objects with one id are an error.
    pub(crate) fn build(parts: Vec<(Arc<Class>, Chunks)>, jobs: usize) -> Result<Index, String> {
        let mut by_class: Vec<(Arc<Class>, Chunks)> = Vec::new();
        for (class, chunks) in parts {
            match by_class.iter_mut().find(|(c, _)| Arc::ptr_eq(c, &class)) {
                Some((_, all)) => all.extend(chunks),
                None => by_class.push((class, chunks)),
            }
        }
        let mut chunks: Vec<&mut Vec<u64>> = by_class.iter_mut().flat_map(|(_, c)| c).collect();
        let per = chunks.len().div_ceil(jobs.max(1)).max(1);
        std::thread::scope(|s| {
            for part in chunks.chunks_mut(per) {
                s.spawn(move || part.iter_mut().for_each(|c| c.sort_unstable()));
            }
        });
        let all: Vec<&[u64]> = by_class
            .iter()
            .flat_map(|(_, c)| c)
            .map(Vec::as_slice)
            .collect();
        if merged(&all).any(|w| w[0] == w[1]) {
            return Err("two objects with one id".into());
        }
        let len = all.iter().map(|c| c.len()).sum();
        Ok(Index {
            parts: by_class,
            gathered: Default::default(),
            len,
        })
    }

    /// The number of objects.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The class of the object with this id.
    pub fn class_of(&self, id: &Arc<String>) -> Option<&Arc<Class>> {
        let fp = fingerprint(id);
        let gathered = self.gathered.get_or_init(|| {
            (self.parts.iter())
                .map(|(class, chunks)| {
                    let chunks: Vec<&[u64]> = chunks.iter().map(Vec::as_slice).collect();
                    let mut all = Vec::with_capacity(chunks.iter().map(|c| c.len()).sum());
                    all.extend(merged(&chunks).map(|w| w[0]));
                    if let Some(&last) = chunks.iter().filter_map(|c| c.last()).max() {
                        all.push(last);
                    }
                    (class.clone(), all)
                })
                .collect()
        });
        gathered
            .iter()
            .find(|(_, fps)| contains(fps, fp))
            .map(|(c, _)| c)
    }
}

/// The pairs of neighbours `[a, b]` of the merge of sorted `lists` (each
/// value but the greatest, with the one after it).
fn merged<'a>(lists: &[&'a [u64]]) -> impl Iterator<Item = [u64; 2]> + 'a {
    use std::cmp::Reverse;
    let mut heads: std::collections::BinaryHeap<Reverse<(u64, usize, usize)>> = (lists.iter())
        .enumerate()
        .filter(|(_, l)| !l.is_empty())
        .map(|(k, l)| Reverse((l[0], k, 0)))
        .collect();
    let lists: Vec<&'a [u64]> = lists.to_vec();
    let mut last: Option<u64> = None;
    std::iter::from_fn(move || loop {
        let Reverse((fp, k, i)) = heads.pop()?;
        if let Some(&next) = lists[k].get(i + 1) {
            heads.push(Reverse((next, k, i + 1)));
        }
        match last.replace(fp) {
            Some(prev) => return Some([prev, fp]),
            None => continue,
        }
    })
}

/// Whether sorted `fps` holds `fp`. Fingerprints are spread evenly over
/// the 64-bit range, so the place where `fp` would be is guessed from its
/// value, and only a few neighbours are searched from there.
fn contains(fps: &[u64], fp: u64) -> bool {
    let n = fps.len();
    if n == 0 {
        return false;
    }
    let guess = ((fp as u128 * n as u128) >> 64) as usize;
    let mut step = 16usize;
    let (mut lo, mut hi) = (guess.saturating_sub(step), (guess + step).min(n));
    // Widen the window until it brackets `fp`.
    while lo > 0 && fps[lo] > fp {
        step *= 2;
        lo = guess.saturating_sub(step);
    }
    while hi < n && fps[hi - 1] < fp {
        step *= 2;
        hi = (guess + step).min(n);
    }
    fps[lo..hi].binary_search(&fp).is_ok()
}

/// The error a check raises for what only the ordinary load can do.
pub fn not_streamable(why: &str) -> Error {
    Error::new(ErrorKind::Other("NotStreamable".into()), why.to_string())
}
