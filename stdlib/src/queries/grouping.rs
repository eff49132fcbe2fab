//! Grouping, joining and zipping.

use super::common::*;
use super::fused::call;
use runtime::ErrorKind;

use runtime::registry::{Args, Cx};
use runtime::seq::SeqIter;
use runtime::{Env, Error, Result, Value};

/// The reference's `GroupAggregator` with the pre-1.1.1 fallback (the
/// aggregator may take `[key, values]` and return `[key, result]`).
pub(super) struct GroupAgg {
    agg: Option<Value>,
    allow_fallback: bool,
    failure: Option<Error>,
}

impl GroupAgg {
    fn apply(&mut self, env: &Env, key: Value, values: Vec<Value>) -> Result<Value> {
        let Some(agg) = self.agg.clone() else {
            return Ok(Value::list(vec![key, Value::list(values)]));
        };
        let first = values.first().cloned();
        let n = values.len();
        let vl = Value::list(values);
        if self.failure.is_none() {
            match call(env, &agg, std::slice::from_ref(&vl)) {
                Err(e)
                    if matches!(
                        e.error_kind(),
                        ErrorKind::NoMatchingMethodException
                            | ErrorKind::NoMatchingFunctionException
                            | ErrorKind::IndexError
                    ) =>
                {
                    self.failure = Some(e)
                }
                Err(e) => return Err(e),
                Ok(result) => {
                    let compatible = n == 2
                        && matches!(&result, Value::List(r) if r.len() == 2
                            && Some(&r[0]) == first.as_ref());
                    if !compatible {
                        self.allow_fallback = false;
                    }
                    return Ok(Value::list(vec![key, result]));
                }
            }
        }
        if self.allow_fallback {
            if let Ok(r) = call(env, &agg, &[Value::list(vec![key, vl])]) {
                if py_len(&r) == Some(2) {
                    return Ok(r);
                }
            }
        }
        Err(self
            .failure
            .clone()
            .unwrap_or_else(|| Error::value("aggregation failed")))
    }
}

/// `collection.groupBy(keySelector, valueSelector => null,
/// aggregator => null)` (`queries.group_by`).
///
/// Matches yaql `queries.group_by` (`groupBy`). Groups come in the order of
/// their first key; an aggregator written for `[key, values]` still works.
///
/// ```yaql
/// [["a", 1], ["b", 2], ["c", 1], ["d", 2]].groupBy($[1], $[0])
/// # => [[1, ["a", "c"]], [2, ["b", "d"]]]
/// [["a", 1], ["b", 2], ["c", 1]].groupBy($[1], $[0], $.sum())
/// # => [[1, "ac"], [2, "b"]]
/// [1, 2, 3, 4, 5].groupBy($ mod 2, aggregator => $.sum())
/// # => [[1, 9], [0, 6]]
/// # data: {"a": 1, "b": 2, "c": 1, "d": 3, "e": 2}
/// $.items().orderBy($[0]).groupBy($[1], $[0], [$[0], $[1].sum()])
/// # => [[1, "ac"], [2, "be"], [3, "d"]]
/// ```
pub(super) fn group_by(cx: &Cx, a: Args) -> Result<Value> {
    let key_sel = a.get(1).clone();
    let val_sel = opt_fn(a.get(2));
    let mut groups: indexmap::IndexMap<Value, Vec<Value>, runtime::value::FxBuild> =
        Default::default();
    for x in cx.iter(a.get(0))? {
        let x = x?;
        let v = match &val_sel {
            None => x.clone(),
            Some(f) => cx.call(f, std::slice::from_ref(&x))?,
        };
        let k = cx.call(&key_sel, &[x])?;
        groups.entry(k).or_default().push(v);
    }
    let mut agg = GroupAgg {
        agg: opt_fn(a.get(3)),
        allow_fallback: true,
        failure: None,
    };
    let env = cx.env.clone();
    Ok(gen(groups
        .into_iter()
        .map(move |(k, vs)| agg.apply(&env, k, vs))))
}

/// `collection1.join(collection2, predicate, selector)` (`queries.join`).
///
/// Matches yaql `queries.join` (`join`). `collection2` is memorized, so it may
/// be lazy.
///
/// ```yaql
/// [1, 2, 3, 4].join([2, 5, 6], $1 > $2, [$1, $2])
/// # => [[3, 2], [4, 2]]
/// [1, 2].join([3, 4], true, [$1, $2])
/// # => [[1, 3], [1, 4], [2, 3], [2, 4]]
/// [1, 2].join(range(3), $1 = $2, $1)
/// # => [1, 2]
/// ```
pub(super) fn join(cx: &Cx, a: Args) -> Result<Value> {
    let mut it1 = cx.iter(a.get(0))?;
    let mut src2 = Some(cx.iter(a.get(1))?);
    let pred = a.get(2).clone();
    let sel = a.get(3).clone();
    let env = cx.env.clone();
    let mut cache: Vec<Value> = Vec::new();
    let mut cur: Option<Value> = None;
    let mut j = 0usize;
    Ok(gen(std::iter::from_fn(move || loop {
        if cur.is_none() {
            cur = Some(tri!(it1.next()?));
            j = 0;
        }
        let other = if j < cache.len() {
            Some(cache[j].clone())
        } else {
            match src2.as_mut().and_then(|s| s.next()) {
                Some(r) => {
                    let v = tri!(r);
                    cache.push(v.clone());
                    Some(v)
                }
                None => {
                    src2 = None;
                    None
                }
            }
        };
        let Some(other) = other else {
            cur = None;
            continue;
        };
        j += 1;
        let x = cur.clone().unwrap_or(Value::Null);
        if tri!(call(&env, &pred, &[x.clone(), other.clone()])).truthy() {
            return Some(call(&env, &sel, &[x, other]));
        }
    })))
}

/// `collection.zip(*collections)` (`queries.zip_`).
///
/// Matches yaql `queries.zip_` (`zip`).
///
/// ```yaql
/// [1, 2, 3].zip([4, 5], [6, 7, 8])
/// # => [[1, 4, 6], [2, 5, 7]]
/// [1, 2].zip(sequence())
/// # => [[1, 0], [2, 1]]
/// ```
pub(super) fn zip(cx: &Cx, a: Args) -> Result<Value> {
    let mut its: Vec<SeqIter> = a.rest.iter().map(|c| cx.iter(c)).collect::<Result<_>>()?;
    Ok(gen(std::iter::from_fn(move || {
        if its.is_empty() {
            return None;
        }
        let mut row = Vec::with_capacity(its.len());
        for it in its.iter_mut() {
            row.push(tri!(it.next()?));
        }
        Some(Ok(Value::list(row)))
    })))
}

/// `collection.zipLongest(*collections, default => null)`
/// (`queries.zip_longest`).
///
/// Matches yaql `queries.zip_longest` (`zipLongest`).
///
/// ```yaql
/// [1, 2, 3].zipLongest([4, 5])
/// # => [[1, 4], [2, 5], [3, null]]
/// [1, 2, 3].zipLongest([4, 5], [6], default => 0)
/// # => [[1, 4, 6], [2, 5, 0], [3, 0, 0]]
/// ```
pub(super) fn zip_longest(cx: &Cx, a: Args) -> Result<Value> {
    let mut its: Vec<Option<SeqIter>> = a
        .rest
        .iter()
        .map(|c| cx.iter(c).map(Some))
        .collect::<Result<_>>()?;
    let fill =
        a.kw.iter()
            .find(|(k, _)| &**k == "default")
            .map(|(_, v)| v.clone())
            .unwrap_or(Value::Null);
    Ok(gen(std::iter::from_fn(move || {
        let mut row = Vec::with_capacity(its.len());
        let mut active = 0;
        for slot in its.iter_mut() {
            let v = match slot.as_mut().and_then(|it| it.next()) {
                Some(r) => {
                    active += 1;
                    tri!(r)
                }
                None => {
                    *slot = None;
                    fill.clone()
                }
            };
            row.push(v);
        }
        if active == 0 {
            return None;
        }
        Some(Ok(Value::list(row)))
    })))
}
