//! `orderBy`/`thenBy`: the ordering iterable and its comparisons.

use super::common::*;
use super::fused::call;
use std::sync::{Arc, Mutex};

use runtime::registry::{Args, Cx};
use runtime::seq::SeqIter;
use runtime::value::LazySeq;
use runtime::{Env, Frame, Result, Value};

/// The state of an `orderBy` result (the reference's `OrderingIterable`):
/// the collection and the sort fields; sorted when first iterated.
pub(super) struct OrderState {
    source: Option<SeqIter>,
    fields: Vec<(Value, bool)>,
    env: Env,
    ctx: Arc<Frame>,
}

/// The state of an `orderBy` result, kept on the sequence itself
/// ([`LazySeq::ext`]), so that `thenBy` finds it from its receiver.
pub(super) fn find_ordering(v: &Value) -> Option<&Mutex<OrderState>> {
    let Value::Iter(seq) = v else { return None };
    seq.ext::<Mutex<OrderState>>()
}

/// Type check of `thenBy`'s receiver: an `orderBy` result.
pub(super) fn is_ordering(v: &Value) -> bool {
    find_ordering(v).is_some()
}

/// Type check of `len`'s `utils.IteratorType`: a lazy sequence that is not
/// an `orderBy` result (`OrderingIterable` is iterable, not an iterator).
pub(super) fn is_iterator(v: &Value) -> bool {
    matches!(v, Value::Iter(_)) && !is_ordering(v)
}

/// Sorts `items` as Python's `sorted(collection, key=Comparator)` does.
pub(super) struct Sorter<'a> {
    env: &'a Env,
    ctx: &'a Arc<Frame>,
    items: &'a [Value],
    fields: &'a [(Value, bool)],
    keys: Vec<Vec<Option<Value>>>,
}

impl Sorter<'_> {
    fn key(&mut self, level: usize, i: usize) -> Result<Value> {
        if let Some(k) = &self.keys[level][i] {
            return Ok(k.clone());
        }
        let k = call(self.env, &self.fields[level].0, &[self.items[i].clone()])?;
        self.keys[level][i] = Some(k.clone());
        Ok(k)
    }
    fn compare(&mut self, i: usize, j: usize) -> Result<i32> {
        for level in 0..self.fields.len() {
            let a = self.key(level, i)?;
            let b = self.key(level, j)?;
            let r = if compare_op(self.env, self.ctx, true, &a, &b)? {
                -1
            } else if compare_op(self.env, self.ctx, false, &a, &b)? {
                1
            } else {
                continue;
            };
            return Ok(if self.fields[level].1 { r } else { -r });
        }
        Ok(0)
    }
    fn lt(&mut self, i: usize, j: usize) -> Result<bool> {
        Ok(self.compare(i, j)? < 0)
    }

    /// CPython's sort for short lists: the initial run, then binary
    /// insertion; a stable merge sort for longer ones.
    fn sort(&mut self) -> Result<Vec<usize>> {
        let n = self.items.len();
        let mut perm: Vec<usize> = (0..n).collect();
        if n < 2 {
            return Ok(perm);
        }
        if n >= 64 {
            return self.merge_sort(perm);
        }
        // count_run
        let mut run = 2;
        if self.lt(perm[1], perm[0])? {
            while run < n && self.lt(perm[run], perm[run - 1])? {
                run += 1;
            }
            perm[..run].reverse();
        } else {
            while run < n && !self.lt(perm[run], perm[run - 1])? {
                run += 1;
            }
        }
        // binarysort
        for start in run..n {
            let pivot = perm[start];
            let (mut l, mut r) = (0, start);
            while l < r {
                let m = l + ((r - l) >> 1);
                if self.lt(pivot, perm[m])? {
                    r = m;
                } else {
                    l = m + 1;
                }
            }
            perm.copy_within(l..start, l + 1);
            perm[l] = pivot;
        }
        Ok(perm)
    }

    fn merge_sort(&mut self, v: Vec<usize>) -> Result<Vec<usize>> {
        if v.len() < 2 {
            return Ok(v);
        }
        let mid = v.len() / 2;
        let right = self.merge_sort(v[mid..].to_vec())?;
        let left = self.merge_sort(v[..mid].to_vec())?;
        let mut out = Vec::with_capacity(v.len());
        let (mut i, mut j) = (0, 0);
        while i < left.len() && j < right.len() {
            if self.lt(right[j], left[i])? {
                out.push(right[j]);
                j += 1;
            } else {
                out.push(left[i]);
                i += 1;
            }
        }
        out.extend_from_slice(&left[i..]);
        out.extend_from_slice(&right[j..]);
        Ok(out)
    }
}

pub(super) fn do_sort(st: &Mutex<OrderState>) -> Result<Vec<Value>> {
    let mut g = st.lock().unwrap_or_else(|e| e.into_inner());
    let items: Vec<Value> = match g.source.take() {
        Some(it) => it.collect::<Result<_>>()?,
        None => Vec::new(),
    };
    let fields = g.fields.clone();
    let (env, ctx) = (g.env.clone(), g.ctx.clone());
    drop(g);
    let mut s = Sorter {
        env: &env,
        ctx: &ctx,
        items: &items,
        fields: &fields,
        keys: vec![vec![None; items.len()]; fields.len()],
    };
    let perm = s.sort()?;
    Ok(perm.into_iter().map(|i| items[i].clone()).collect())
}

pub(super) fn make_ordering(cx: &Cx, a: &Args, ascending: bool) -> Result<Value> {
    let source = cx.iter(a.get(0))?;
    let st = Arc::new(Mutex::new(OrderState {
        source: Some(source),
        fields: vec![(a.get(1).clone(), ascending)],
        env: cx.env.clone(),
        ctx: cx.ctx.clone(),
    }));
    let st2 = st.clone();
    let mut sorted: Option<std::vec::IntoIter<Value>> = None;
    let mut failed = false;
    let it = std::iter::from_fn(move || {
        if failed {
            return None;
        }
        if sorted.is_none() {
            match do_sort(&st2) {
                Ok(v) => sorted = Some(v.into_iter()),
                Err(e) => {
                    failed = true;
                    return Some(Err(e));
                }
            }
        }
        sorted.as_mut().and_then(|s| s.next()).map(Ok)
    });
    Ok(Value::Iter(LazySeq::with_ext(Box::new(it), st)))
}

/// `collection.orderBy(selector)` (`queries.order_by`).
///
/// Matches yaql `queries.order_by` (`orderBy`). The sort is stable.
///
/// ```yaql
/// [[1, 'c'], [2, 'b'], [3, 'c'], [0, 'd']].orderBy($[1])
/// # => [[2, "b"], [1, "c"], [3, "c"], [0, "d"]]
/// ['bb', 'a', 'ccc'].orderBy(len($))
/// # => ["a", "bb", "ccc"]
/// ```
pub(super) fn order_by(cx: &Cx, a: Args) -> Result<Value> {
    make_ordering(cx, &a, true)
}

/// `collection.orderByDescending(selector)` (`queries.order_by_descending`).
///
/// Matches yaql `queries.order_by_descending` (`orderByDescending`).
///
/// ```yaql
/// [4, 2, 3, 1].orderByDescending($)
/// # => [4, 3, 2, 1]
/// ```
pub(super) fn order_by_descending(cx: &Cx, a: Args) -> Result<Value> {
    make_ordering(cx, &a, false)
}

pub(super) fn add_field(a: &Args, ascending: bool) -> Result<Value> {
    if let Some(st) = find_ordering(a.get(0)) {
        let mut g = st.lock().unwrap_or_else(|e| e.into_inner());
        g.fields.push((a.get(1).clone(), ascending));
    }
    Ok(a.get(0).clone())
}

/// `collection.thenBy(selector)` (`queries.then_by`).
///
/// Matches yaql `queries.then_by` (`thenBy`). The receiver must be an `orderBy`
/// result.
///
/// ```yaql
/// [[3, 'c'], [2, 'b'], [1, 'c']].orderBy($[1]).thenBy($[0])
/// # => [[2, "b"], [1, "c"], [3, "c"]]
/// [2, 1].thenBy($)
/// # error: NoMatchingMethodException
/// ```
pub(super) fn then_by(_: &Cx, a: Args) -> Result<Value> {
    add_field(&a, true)
}

/// `collection.thenByDescending(selector)` (`queries.then_by_descending`).
///
/// Matches yaql `queries.then_by_descending` (`thenByDescending`).
///
/// ```yaql
/// [[3, 'c'], [2, 'b'], [1, 'c']].orderBy($[1]).thenByDescending($[0])
/// # => [[2, "b"], [3, "c"], [1, "c"]]
/// ```
pub(super) fn then_by_descending(_: &Cx, a: Args) -> Result<Value> {
    add_field(&a, false)
}
