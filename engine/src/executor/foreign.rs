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
/// sorted fingerprints of its objects' ids (8 bytes an object).
pub struct Index {
    by_class: Vec<(Arc<Class>, Vec<u64>)>,
    len: usize,
}

/// The fingerprints of the objects of each class met in a pass (classes by
/// index into a list of the finder's).
#[derive(Default)]
pub(crate) struct Defs(pub(crate) Vec<Vec<u64>>);

impl Defs {
    /// Files the object `id` under class `class`.
    pub(crate) fn push(&mut self, id: &str, class: u32) {
        let c = class as usize;
        if self.0.len() <= c {
            self.0.resize_with(c + 1, Vec::new);
        }
        self.0[c].push(fingerprint(id));
    }

    /// The number of objects.
    pub(crate) fn len(&self) -> usize {
        self.0.iter().map(Vec::len).sum()
    }

    /// True when two objects have one id (or one fingerprint).
    pub(crate) fn twice(&self) -> bool {
        let mut all: Vec<u64> = self.0.concat();
        all.sort_unstable();
        all.windows(2).any(|w| w[0] == w[1])
    }
}

impl Index {
    /// The index of the objects in `parts` (a class and its objects'
    /// fingerprints; one class may come in several parts), sorted on
    /// `jobs` threads; two objects with one id are an error.
    pub(crate) fn build(parts: Vec<(Arc<Class>, Vec<u64>)>, jobs: usize) -> Result<Index, String> {
        let mut by_class: Vec<(Arc<Class>, Vec<u64>)> = Vec::new();
        for (class, fps) in parts {
            match by_class.iter_mut().find(|(c, _)| Arc::ptr_eq(c, &class)) {
                Some((_, all)) => all.extend(fps),
                None => by_class.push((class, fps)),
            }
        }
        sort_all(&mut by_class, jobs.max(1));
        let len = by_class.iter().map(|(_, v)| v.len()).sum();
        let index = Index { by_class, len };
        if index.has_twice() {
            return Err("two objects with one id".into());
        }
        Ok(index)
    }

    /// True when a fingerprint is filed twice, in one class or two.
    fn has_twice(&self) -> bool {
        if self
            .by_class
            .iter()
            .any(|(_, v)| v.windows(2).any(|w| w[0] == w[1]))
        {
            return true;
        }
        // Across classes: a merge of the sorted lists, smallest head first.
        let mut heads: std::collections::BinaryHeap<std::cmp::Reverse<(u64, usize, usize)>> = self
            .by_class
            .iter()
            .enumerate()
            .filter(|(_, (_, v))| !v.is_empty())
            .map(|(k, (_, v))| std::cmp::Reverse((v[0], k, 0)))
            .collect();
        let mut last = None;
        while let Some(std::cmp::Reverse((fp, k, i))) = heads.pop() {
            if last == Some(fp) {
                return true;
            }
            last = Some(fp);
            if let Some(&next) = self.by_class[k].1.get(i + 1) {
                heads.push(std::cmp::Reverse((next, k, i + 1)));
            }
        }
        false
    }

    /// The number of objects.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The class of the object with this id.
    pub fn class_of(&self, id: &Arc<String>) -> Option<&Arc<Class>> {
        let fp = fingerprint(id);
        self.by_class
            .iter()
            .find(|(_, fps)| contains(fps, fp))
            .map(|(c, _)| c)
    }
}

/// Sorts each class's fingerprints, the classes shared out over `jobs`
/// threads.
fn sort_all(by_class: &mut [(Arc<Class>, Vec<u64>)], jobs: usize) {
    let per = by_class.len().div_ceil(jobs).max(1);
    std::thread::scope(|s| {
        for part in by_class.chunks_mut(per) {
            s.spawn(move || part.iter_mut().for_each(|(_, v)| v.sort_unstable()));
        }
    });
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
