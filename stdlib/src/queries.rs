//! `yaql/standard_library/queries.py`: LINQ-like queries over collections
//! (`where`, `select`, `orderBy`, `groupBy`, `join`, `zip`, aggregation,
//! generators such as `range`, `sequence`, `generate`, ...).
//!
//! Functions that return Python generators in the reference return lazy,
//! one-shot sequences ([`Value::Iter`]) here; the iterator limit is applied
//! where the reference's `yaqltypes.Iterable()` parameters apply it (when the
//! function is called for materialised collections, when an element is
//! pulled for lazy ones).

#![allow(clippy::mutable_key_type, clippy::manual_repeat_n)]

use std::collections::HashSet;

use runtime::registry::{kw, lazy, p, var, ArgIn, Args, Cx, Form, Registry, Ty};
use runtime::seq::{iterate_unlimited, SeqIter};
use runtime::{Dict, Error, Result, Value};

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/// Returns early from an iterator closure with the error.
macro_rules! tri {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(e) => return Some(Err(e)),
        }
    };
}

// The groups of functions in files of their own (after `tri!`, which
// they use).
mod common;
use common::*;
mod fused;
use fused::call;
mod generators;
mod grouping;
mod ordering;
mod partitioning;
use generators::*;
use grouping::*;
use ordering::*;
use partitioning::*;

// ---------------------------------------------------------------------------
// Filtering and projection
// ---------------------------------------------------------------------------

/// `collection.where(predicate)` / `filter` (`queries.where`).
///
/// Matches yaql `queries.where` (`where`, `filter`). Lazy: the iterator limit
/// counts the source elements pulled, not the ones kept.
///
/// ```yaql
/// [1, 2, 3, 4, 5].where($ > 3)
/// # => [4, 5]
/// [1, 2, 3].filter($ mod 2 = 1)
/// # => [1, 3]
/// sequence().where($ mod 3 = 0).take(3)
/// # => [0, 3, 6]
/// range(1, 200).where($ > 150).take(2)
/// # error: CollectionTooLargeException
/// ```
fn where_(cx: &Cx, a: Args) -> Result<Value> {
    fused::stage(cx, a.get(0), fused::Kind::Where, a.get(1))
}

/// `collection.select(selector)` / `map` (`queries.select`).
///
/// Matches yaql `queries.select` (`select`, `map`).
///
/// ```yaql
/// [1, 2, 3, 4, 5].select($ * $)
/// # => [1, 4, 9, 16, 25]
/// [1, 2].map([$, $ * 10])
/// # => [[1, 10], [2, 20]]
/// ```
fn select(cx: &Cx, a: Args) -> Result<Value> {
    fused::stage(cx, a.get(0), fused::Kind::Select, a.get(1))
}

/// `collection.attribute` (`queries.collection_attribution`): the
/// attribute of every element.
///
/// Matches yaql `queries.collection_attribution` (`#operator_.`,
/// `collection.attribute`).
///
/// ```yaql
/// [{"a" => 1}, {"a" => 2, "b" => 3}].a
/// # => [1, 2]
/// # data: {"users": [{"name": "ann"}, {"name": "bob"}]}
/// $.users.name
/// # => ["ann", "bob"]
/// ```
fn collection_attribution(cx: &Cx, a: Args) -> Result<Value> {
    let it = cx.iter(a.get(0))?;
    let name = a.get(1).clone();
    let env = cx.env.clone();
    let ctx = cx.ctx.clone();
    Ok(gen(it.map(move |x| {
        let x = x?;
        let cx = Cx::new(&env, &ctx);
        env.registry().call(
            &cx,
            "#attr",
            None,
            Form::Function,
            &[ArgIn::Val(x), ArgIn::Val(name.clone())],
            &[],
        )
    })))
}

/// `collection.selectMany(selector)` (`queries.select_many`).
///
/// Matches yaql `queries.select_many` (`selectMany`). Strings and dicts
/// returned by the selector are not expanded.
///
/// ```yaql
/// range(4).selectMany(range($))
/// # => [0, 0, 1, 0, 1, 2]
/// [0, [1, 2], 3].selectMany($ * 2)
/// # => [0, 1, 2, 1, 2, 6]
/// ['ab', {'a' => 1}].selectMany($)
/// # => ["ab", {"a": 1}]
/// ```
fn select_many(cx: &Cx, a: Args) -> Result<Value> {
    let mut it = cx.iter(a.get(0))?;
    let f = a.get(1).clone();
    let env = cx.env.clone();
    let mut inner: Option<SeqIter> = None;
    Ok(gen(std::iter::from_fn(move || loop {
        if let Some(i) = inner.as_mut() {
            match i.next() {
                Some(r) => return Some(r),
                None => inner = None,
            }
        }
        let x = tri!(it.next()?);
        let r = tri!(call(&env, &f, &[x]));
        if r.is_iterable() {
            inner = Some(tri!(iterate_unlimited(&r)));
        } else {
            return Some(Ok(r));
        }
    })))
}

/// `collection.skip(count)` (`queries.skip`).
///
/// Matches yaql `queries.skip` (`skip`). A negative count is an error (as
/// `itertools.islice`).
///
/// ```yaql
/// [1, 2, 3, 4, 5].skip(2)
/// # => [3, 4, 5]
/// [1, 2].skip(5)
/// # => []
/// [1, 2].skip(-1)
/// # error: ValueError
/// ```
fn skip(cx: &Cx, a: Args) -> Result<Value> {
    let n = islice_count(int_arg(&a, 1)?)?;
    let mut it = cx.iter(a.get(0))?;
    let mut skipped = false;
    Ok(gen(std::iter::from_fn(move || {
        if !skipped {
            skipped = true;
            for _ in 0..n {
                tri!(it.next()?);
            }
        }
        it.next()
    })))
}

/// `collection.limit(count)` / `take` (`queries.limit`).
///
/// Matches yaql `queries.limit` (`limit`, `take`). Lazy, so it works on
/// infinite sequences; a negative count is an error.
///
/// ```yaql
/// [1, 2, 3, 4, 5].limit(4)
/// # => [1, 2, 3, 4]
/// sequence(5).take(3)
/// # => [5, 6, 7]
/// [1, 2].take(-1)
/// # error: ValueError
/// ```
fn limit(cx: &Cx, a: Args) -> Result<Value> {
    let n = islice_count(int_arg(&a, 1)?)?;
    let mut it = cx.iter(a.get(0))?;
    let mut taken = 0usize;
    Ok(gen(std::iter::from_fn(move || {
        if taken >= n {
            return None;
        }
        taken += 1;
        it.next()
    })))
}

/// `collection.append(*args)` (`queries.append`).
///
/// Matches yaql `queries.append` (`append`).
///
/// ```yaql
/// [1, 2, 3].append(4, 5)
/// # => [1, 2, 3, 4, 5]
/// append([1], null)
/// # => [1, null]
/// ```
fn append(cx: &Cx, a: Args) -> Result<Value> {
    let it = cx.iter(a.get(0))?;
    Ok(gen(it.chain(a.rest.into_iter().map(Ok))))
}

/// `collection.distinct(keySelector => null)` (`queries.distinct`).
///
/// Matches yaql `queries.distinct` (`distinct`). The first element of each key
/// is kept, in order.
///
/// ```yaql
/// [1, 2, 3, 1].distinct()
/// # => [1, 2, 3]
/// [{'a' => 1}, {'b' => 2}, {'a' => 1}].distinct()
/// # => [{"a": 1}, {"b": 2}]
/// [['a', 1], ['b', 2], ['c', 1], ['a', 3]].distinct($[1])
/// # => [["a", 1], ["b", 2], ["a", 3]]
/// ```
fn distinct(cx: &Cx, a: Args) -> Result<Value> {
    let mut it = cx.iter(a.get(0))?;
    let f = opt_fn(a.get(1));
    let env = cx.env.clone();
    let mut seen: HashSet<Value> = HashSet::new();
    Ok(gen(std::iter::from_fn(move || loop {
        let x = tri!(it.next()?);
        let key = match &f {
            None => x.clone(),
            Some(f) => tri!(call(&env, f, std::slice::from_ref(&x))),
        };
        if seen.insert(key) {
            return Some(Ok(x));
        }
    })))
}

/// `collection.enumerate(start => 0)` (`queries.enumerate_`).
///
/// Matches yaql `queries.enumerate_` (`enumerate`).
///
/// ```yaql
/// ['a', 'b', 'c'].enumerate()
/// # => [[0, "a"], [1, "b"], [2, "c"]]
/// enumerate(['a', 'b'], 1)
/// # => [[1, "a"], [2, "b"]]
/// ```
fn enumerate(cx: &Cx, a: Args) -> Result<Value> {
    if a.get(1).is_null() {
        return Err(Error::type_(
            "'NoneType' object cannot be interpreted as an integer",
        ));
    }
    let start = int_arg(&a, 1)?;
    let it = cx.iter(a.get(0))?;
    let mut i = start;
    Ok(gen(it.map(move |x| {
        let r = Value::list(vec![Value::Int(i), x?]);
        i += 1;
        Ok(r)
    })))
}

/// `collection.any(predicate => null)` (`queries.any_`).
///
/// Matches yaql `queries.any_` (`any`). Without a predicate it only checks that
/// the collection is not empty (falsy elements count).
///
/// ```yaql
/// [[], 0, ''].any()
/// # => true
/// [[], 0, ''].any(predicate => $)
/// # => false
/// [].any()
/// # => false
/// ```
fn any(cx: &Cx, a: Args) -> Result<Value> {
    let f = opt_fn(a.get(1));
    for x in fused::items(cx, a.get(0))? {
        let x = x?;
        match &f {
            None => return Ok(Value::Bool(true)),
            Some(f) => {
                if cx.call(f, &[x])?.truthy() {
                    return Ok(Value::Bool(true));
                }
            }
        }
    }
    Ok(Value::Bool(false))
}

/// `collection.all(predicate => null)` (`queries.all_`).
///
/// Matches yaql `queries.all_` (`all`). Without a predicate the elements' truth
/// values are checked.
///
/// ```yaql
/// [1, [], ''].all()
/// # => false
/// [1, [0], 'a'].all()
/// # => true
/// [].all()
/// # => true
/// [2, 3].all($ > 1)
/// # => true
/// ```
fn all(cx: &Cx, a: Args) -> Result<Value> {
    let f = opt_fn(a.get(1));
    for x in fused::items(cx, a.get(0))? {
        let x = x?;
        let ok = match &f {
            None => x.truthy(),
            Some(f) => cx.call(f, &[x])?.truthy(),
        };
        if !ok {
            return Ok(Value::Bool(false));
        }
    }
    Ok(Value::Bool(true))
}

/// `concat(*collections)` (`queries.concat`).
///
/// Matches yaql `queries.concat` (`concat`).
///
/// ```yaql
/// [1].concat([2, 3], [4, 5])
/// # => [1, 2, 3, 4, 5]
/// concat([1], [], [2])
/// # => [1, 2]
/// ```
fn concat(cx: &Cx, a: Args) -> Result<Value> {
    let its: Vec<SeqIter> = a.rest.iter().map(|c| cx.iter(c)).collect::<Result<_>>()?;
    Ok(gen(its.into_iter().flatten()))
}

/// `len(collection)` for iterators (`queries.count_`).
///
/// Matches yaql `queries.count_` (`len` of an iterator; lists, sets and dicts
/// use the `collections` overloads).
///
/// ```yaql
/// range(3).len()
/// # => 3
/// [1, 2, 3].where($ > 1).len()
/// # => 2
/// ```
fn len_iter(cx: &Cx, a: Args) -> Result<Value> {
    let mut n: i64 = 0;
    // The reference counts without the iterator limit; counting an
    // infinite sequence must end, so the limit applies here too.
    for x in fused::items(cx, a.get(0))? {
        x?;
        n += 1;
    }
    Ok(Value::Int(n))
}

/// `collection.count()` (`queries.count`).
///
/// Matches yaql `queries.count` (`count`). A method only: `count(x)` is not a
/// function.
///
/// ```yaql
/// [1, 2].count()
/// # => 2
/// range(10).where($ mod 3 = 0).count()
/// # => 4
/// count([1, 2])
/// # error: NoFunctionRegisteredException
/// ```
fn count(cx: &Cx, a: Args) -> Result<Value> {
    let mut n: i64 = 0;
    for x in fused::items(cx, a.get(0))? {
        x?;
        n += 1;
    }
    Ok(Value::Int(n))
}

/// `collection.memorize()` (`queries.memorize`): the collection itself
/// (lazy sequences stay one-shot here, wrapped as a plain iterator).
///
/// Matches yaql `queries.memorize` (`memorize`). In the reference the result
/// can be iterated several times; a plain lazy sequence is one-shot.
///
/// ```yaql
/// let(range(4).memorize()) -> $.sum() + $.len()
/// # => 10
/// let(range(4)) -> $.sum() + $.len()
/// # => 6
/// ```
fn memorize(cx: &Cx, a: Args) -> Result<Value> {
    let it = cx.iter(a.get(0))?;
    Ok(match a.get(0) {
        // The iterable parameter turns an `orderBy` result into a plain
        // iterator (utils.limit_iterable), which memorize then wraps.
        Value::Iter(_) => Value::Iter(runtime::value::LazySeq::memo(Box::new(it))),
        other => other.clone(),
    })
}

// ---------------------------------------------------------------------------
// Aggregation
// ---------------------------------------------------------------------------

fn reduce(
    cx: &Cx,
    coll: &Value,
    seed: &Value,
    mut f: impl FnMut(Value, Value) -> Result<Value>,
) -> Result<Value> {
    let mut it = fused::items(cx, coll)?;
    let mut acc = if is_novalue(seed) {
        match it.next() {
            None => {
                return Err(Error::type_(
                    "reduce() of empty iterable with no initial value",
                ))
            }
            Some(r) => r?,
        }
    } else {
        seed.clone()
    };
    for x in it {
        acc = f(acc, x?)?;
    }
    Ok(acc)
}

/// `collection.aggregate(selector, seed => NoValue)` / `reduce`
/// (`queries.aggregate`).
///
/// Matches yaql `queries.aggregate` (`aggregate`, `reduce`).
///
/// ```yaql
/// [a, a, b, a, a].aggregate($1 + $2)
/// # => "aabaa"
/// [1, 2, 3].reduce($1 * $2, 10)
/// # => 60
/// [].aggregate($1 + $2, 1)
/// # => 1
/// [].aggregate($1 + $2)
/// # error: TypeError
/// ```
fn aggregate(cx: &Cx, a: Args) -> Result<Value> {
    let f = a.get(1).clone();
    reduce(cx, a.get(0), a.get(2), |x, y| cx.call(&f, &[x, y]))
}

/// `collection.sum(initial => NoValue)` (`queries.sum_`): reduces with
/// `#operator_+`.
///
/// Matches yaql `queries.sum_` (`sum`).
///
/// ```yaql
/// [3, 1, 2].sum()
/// # => 6
/// ['a', 'b'].sum('c')
/// # => "cab"
/// [1, 2.5].sum()
/// # => 3.5
/// [].sum()
/// # error: TypeError
/// ```
fn sum(cx: &Cx, a: Args) -> Result<Value> {
    reduce(cx, a.get(0), a.get(1), |x, y| {
        // Numbers add directly (the `#operator_+` overload for two numbers
        // does exactly this); anything else goes through the registry.
        let num = |v: &Value| matches!(v, Value::Int(_) | Value::BigInt(_) | Value::Float(_));
        if num(&x) && num(&y) && !cx.ctx.has_funcs {
            return runtime::num::add(&x, &y);
        }
        delegate(cx.env, cx.ctx, "#operator_+", &[x, y])
    })
}

fn minmax(cx: &Cx, a: &Args, max: bool) -> Result<Value> {
    let name = if max { "max" } else { "min" };
    let registered = cx.env.registry().get(name).is_some();
    reduce(cx, a.get(0), a.get(1), |x, y| {
        if registered {
            delegate(cx.env, cx.ctx, name, &[x, y])
        } else if compare_op(cx.env, cx.ctx, !max, &y, &x)? {
            Ok(y)
        } else {
            Ok(x)
        }
    })
}

/// `collection.max(initial => NoValue)` (`queries.max_`): reduces with
/// the `max` function.
///
/// Matches yaql `queries.max_` (`max`).
///
/// ```yaql
/// [3, 1, 2].max()
/// # => 3
/// [1, 5].max(10)
/// # => 10
/// [].max(0)
/// # => 0
/// [].max()
/// # error: TypeError
/// ```
fn max(cx: &Cx, a: Args) -> Result<Value> {
    minmax(cx, &a, true)
}

/// `collection.min(initial => NoValue)` (`queries.min_`): reduces with
/// the `min` function.
///
/// Matches yaql `queries.min_` (`min`).
///
/// ```yaql
/// [3, 1, 2].min()
/// # => 1
/// [].min(7)
/// # => 7
/// [].min()
/// # error: TypeError
/// ```
fn min(cx: &Cx, a: Args) -> Result<Value> {
    minmax(cx, &a, false)
}

/// `collection.accumulate(selector, seed => NoValue)`
/// (`queries.accumulate`).
///
/// Matches yaql `queries.accumulate` (`accumulate`).
///
/// ```yaql
/// [1, 2, 3].accumulate($1 + $2)
/// # => [1, 3, 6]
/// [1, 2, 3].accumulate($1 + $2, 100)
/// # => [100, 101, 103, 106]
/// [].accumulate($1 + $2, 1)
/// # => [1]
/// [].accumulate($1 + $2)
/// # error: TypeError
/// ```
fn accumulate(cx: &Cx, a: Args) -> Result<Value> {
    let mut it = cx.iter(a.get(0))?;
    let f = a.get(1).clone();
    let seed = opt_fn(a.get(2));
    let env = cx.env.clone();
    let mut total: Option<Value> = None;
    let mut seed = Some(seed);
    Ok(gen(std::iter::from_fn(move || {
        if let Some(s) = seed.take() {
            let s = match s {
                Some(s) => s,
                None => match it.next() {
                    Some(r) => tri!(r),
                    None => {
                        return Some(Err(Error::type_(
                            "accumulate() of empty sequence with no initial value",
                        )))
                    }
                },
            };
            total = Some(s.clone());
            return Some(Ok(s));
        }
        let x = tri!(it.next()?);
        let t = tri!(call(&env, &f, &[total.take().unwrap_or(Value::Null), x]));
        total = Some(t.clone());
        Some(Ok(t))
    })))
}

// ---------------------------------------------------------------------------
// Element access
// ---------------------------------------------------------------------------

/// `collection.first(default => NoValue)` (`queries.first`).
///
/// Matches yaql `queries.first` (`first`).
///
/// ```yaql
/// [3, 1, 2].first()
/// # => 3
/// range(3).where($ > 0).first()
/// # => 1
/// [].first(99)
/// # => 99
/// [].first()
/// # error: StopIteration
/// ```
fn first(cx: &Cx, a: Args) -> Result<Value> {
    match fused::items(cx, a.get(0))?.next() {
        Some(r) => r,
        None => {
            if is_novalue(a.get(1)) {
                Err(stop_iteration("first() of an empty collection"))
            } else {
                Ok(a.get(1).clone())
            }
        }
    }
}

/// `collection.single()` (`queries.single`).
///
/// Matches yaql `queries.single` (`single`).
///
/// ```yaql
/// ["abc"].single()
/// # => "abc"
/// [1, 2].single()
/// # error: StopIteration
/// [].single()
/// # error: StopIteration
/// ```
fn single(cx: &Cx, a: Args) -> Result<Value> {
    let mut it = cx.iter(a.get(0))?;
    let r = match it.next() {
        Some(r) => r?,
        None => return Err(stop_iteration("single() of an empty collection")),
    };
    match it.next() {
        None => Ok(r),
        Some(Err(e)) => Err(e),
        Some(Ok(_)) => Err(stop_iteration("Collection contains more than one item")),
    }
}

/// `collection.last(default => NoValue)` (`queries.last`).
///
/// Matches yaql `queries.last` (`last`).
///
/// ```yaql
/// [0, 1, 2].last()
/// # => 2
/// range(3).last()
/// # => 2
/// [].last(null)
/// # => null
/// [].last()
/// # error: StopIteration
/// ```
fn last(cx: &Cx, a: Args) -> Result<Value> {
    let mut last = None;
    for x in cx.iter(a.get(0))? {
        last = Some(x?);
    }
    match last {
        Some(v) => Ok(v),
        None => {
            if is_novalue(a.get(1)) {
                Err(stop_iteration("last() of an empty collection"))
            } else {
                Ok(a.get(1).clone())
            }
        }
    }
}

/// `collection.indexOf(item)` (`queries.index_of`).
///
/// Matches yaql `queries.index_of` (`indexOf`).
///
/// ```yaql
/// [1, 2, 3, 2].indexOf(2)
/// # => 1
/// [1, 2, 3, 2].indexOf(102)
/// # => -1
/// ```
fn index_of(cx: &Cx, a: Args) -> Result<Value> {
    for (i, x) in cx.iter(a.get(0))?.enumerate() {
        if x? == *a.get(1) {
            return Ok(Value::Int(i as i64));
        }
    }
    Ok(Value::Int(-1))
}

/// `collection.lastIndexOf(item)` (`queries.last_index_of`).
///
/// Matches yaql `queries.last_index_of` (`lastIndexOf`).
///
/// ```yaql
/// [1, 2, 3, 2].lastIndexOf(2)
/// # => 3
/// [1, 2].lastIndexOf(5)
/// # => -1
/// ```
fn last_index_of(cx: &Cx, a: Args) -> Result<Value> {
    let mut idx = -1i64;
    for (i, x) in cx.iter(a.get(0))?.enumerate() {
        if x? == *a.get(1) {
            idx = i as i64;
        }
    }
    Ok(Value::Int(idx))
}

/// `collection.indexWhere(predicate)` (`queries.index_where`).
///
/// Matches yaql `queries.index_where` (`indexWhere`).
///
/// ```yaql
/// [1, 2, 3, 2].indexWhere($ > 2)
/// # => 2
/// [1, 2, 3, 2].indexWhere($ > 3)
/// # => -1
/// ```
fn index_where(cx: &Cx, a: Args) -> Result<Value> {
    for (i, x) in cx.iter(a.get(0))?.enumerate() {
        if cx.call(a.get(1), &[x?])?.truthy() {
            return Ok(Value::Int(i as i64));
        }
    }
    Ok(Value::Int(-1))
}

/// `collection.lastIndexWhere(predicate)` (`queries.last_index_where`).
///
/// Matches yaql `queries.last_index_where` (`lastIndexWhere`).
///
/// ```yaql
/// [1, 2, 3, 2].lastIndexWhere($ = 2)
/// # => 3
/// [1, 2].lastIndexWhere($ > 5)
/// # => -1
/// ```
fn last_index_where(cx: &Cx, a: Args) -> Result<Value> {
    let mut idx = -1i64;
    for (i, x) in cx.iter(a.get(0))?.enumerate() {
        if cx.call(a.get(1), &[x?])?.truthy() {
            idx = i as i64;
        }
    }
    Ok(Value::Int(idx))
}

/// `collection.defaultIfEmpty(default)` (`queries.default_if_empty`).
///
/// Matches yaql `queries.default_if_empty` (`defaultIfEmpty`). A non-empty
/// lazy collection keeps all its elements.
///
/// ```yaql
/// [].defaultIfEmpty([1, 2])
/// # => [1, 2]
/// [3, 4].defaultIfEmpty([1, 2])
/// # => [3, 4]
/// range(5).where($ > 5).defaultIfEmpty([0])
/// # => [0]
/// range(3, 5).defaultIfEmpty([1, 2])
/// # => [3, 4]
/// ```
fn default_if_empty(cx: &Cx, a: Args) -> Result<Value> {
    cx.iter(a.get(1))?;
    match a.get(0) {
        Value::List(l) => {
            cx.iter(a.get(0))?;
            Ok(if l.is_empty() {
                a.get(1).clone()
            } else {
                a.get(0).clone()
            })
        }
        Value::Set(s) => {
            cx.iter(a.get(0))?;
            Ok(if s.is_empty() {
                a.get(1).clone()
            } else {
                a.get(0).clone()
            })
        }
        other => {
            let mut it = cx.iter(other)?;
            match it.next() {
                None => Ok(a.get(1).clone()),
                Some(Err(e)) => Err(e),
                Some(Ok(x)) => Ok(gen(std::iter::once(Ok(x)).chain(it))),
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Dictionaries and predicates
// ---------------------------------------------------------------------------

fn merge_dicts(
    d1: &Dict,
    d2: &Dict,
    list_merger: &mut dyn FnMut(Value, Value) -> Result<Value>,
    item_merger: &mut dyn FnMut(Value, Value) -> Result<Value>,
    max_levels: i64,
) -> Result<Dict> {
    let mut result = Dict::default();
    for (key, v1) in d1.iter() {
        result.insert(key.clone(), v1.clone());
        if let Some(v2) = d2.get(key) {
            let merged = match v2 {
                Value::Dict(m2) if max_levels != 1 => {
                    let Value::Dict(m1) = v1 else {
                        return Err(cannot_merge(v1, v2));
                    };
                    let next = if max_levels == 0 { 0 } else { max_levels - 1 };
                    Value::dict(merge_dicts(m1, m2, list_merger, item_merger, next)?)
                }
                Value::List(_) if max_levels != 1 => {
                    if !matches!(v1, Value::List(_)) {
                        return Err(cannot_merge(v1, v2));
                    }
                    list_merger(v1.clone(), v2.clone())?
                }
                _ => item_merger(v1.clone(), v2.clone())?,
            };
            result.insert(key.clone(), merged);
        }
    }
    for (k, v) in d2.iter() {
        if !result.contains_key(k) {
            result.insert(k.clone(), v.clone());
        }
    }
    Ok(result)
}

fn cannot_merge(a: &Value, b: &Value) -> Error {
    Error::type_(format!(
        "Cannot merge <class '{}'> with <class '{}'>",
        a.type_name(),
        b.type_name()
    ))
}

/// `dict.mergeWith(another, listMerger => null, itemMerger => null,
/// maxLevels => 0)` (`queries.merge_with`).
///
/// Matches yaql `queries.merge_with` (`mergeWith`). Lists are merged with
/// `distinct(a + b)` and other values replaced by default.
///
/// ```yaql
/// {'a' => 1, 'b' => 2, 'c' => [1, 2]}.mergeWith({'d' => 5, 'b' => 3, 'c' => [2, 3]})
/// # => {"a": 1, "b": 3, "c": [1, 2, 3], "d": 5}
/// {'a' => 1, 'b' => 2, 'c' => [1, 2]}.mergeWith({'d' => 5, 'b' => 3, 'c' => [2, 3]}, $1 + $2, $1)
/// # => {"a": 1, "b": 2, "c": [1, 2, 2, 3], "d": 5}
/// {'a' => {'x' => 1}}.mergeWith({'a' => {'y' => 2}})
/// # => {"a": {"x": 1, "y": 2}}
/// {'a' => {'x' => 1}}.mergeWith({'a' => {'y' => 2}}, maxLevels => 1)
/// # => {"a": {"y": 2}}
/// {'a' => 1}.mergeWith({'a' => [1]})
/// # error: TypeError
/// ```
fn merge_with(cx: &Cx, a: Args) -> Result<Value> {
    let (Value::Dict(d1), Value::Dict(d2)) = (a.get(0), a.get(1)) else {
        return Err(Error::type_("mergeWith needs two dictionaries"));
    };
    let lm = opt_fn(a.get(2));
    let im = opt_fn(a.get(3));
    let max_levels = int_arg(&a, 4)?;
    let mut list_merger = |x: Value, y: Value| -> Result<Value> {
        match &lm {
            Some(f) => cx.call(f, &[x, y]),
            None => {
                let mut seen = HashSet::new();
                let mut out = Vec::new();
                for v in cx.to_vec(&x)?.into_iter().chain(cx.to_vec(&y)?) {
                    if seen.insert(v.clone()) {
                        out.push(v);
                    }
                }
                Ok(Value::list(out))
            }
        }
    };
    let mut item_merger = |x: Value, y: Value| -> Result<Value> {
        match &im {
            Some(f) => cx.call(f, &[x, y]),
            None => Ok(y),
        }
    };
    Ok(Value::dict(merge_dicts(
        d1,
        d2,
        &mut list_merger,
        &mut item_merger,
        max_levels,
    )?))
}

/// `isIterable(value)` (`queries.is_iterable`).
///
/// Matches yaql `queries.is_iterable` (`isIterable`). Strings and dicts are
/// not iterable here.
///
/// ```yaql
/// isIterable([])
/// # => true
/// isIterable(set(1, 2))
/// # => true
/// isIterable(range(2))
/// # => true
/// isIterable("foo")
/// # => false
/// isIterable({"a" => 1})
/// # => false
/// ```
fn is_iterable(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Bool(a.get(0).is_iterable()))
}

// ---------------------------------------------------------------------------
// Registration
// ---------------------------------------------------------------------------

fn coll() -> runtime::registry::Param {
    p("collection", Ty::Iterable)
}

/// Registers the group, in the reference's order (the order overloads of
/// one name are tried in).
pub fn register(r: &mut Registry) {
    register_filters(r);
    register_order_and_aggregates(r);
}

/// Filtering, projection, partitioning and generators.
fn register_filters(r: &mut Registry) {
    let nv = novalue;
    let pred = || vec![coll(), lazy("predicate")];
    let selr = || vec![coll(), lazy("selector")];

    r.method("where", pred(), where_);
    r.method("filter", pred(), where_);
    r.method("select", selr(), select);
    r.method("map", selr(), select);
    r.function(
        "#attr",
        vec![coll(), p("attribute", Ty::Str)],
        collection_attribution,
    );
    r.method("limit", vec![coll(), p("count", Ty::Int)], limit);
    r.method("take", vec![coll(), p("count", Ty::Int)], limit);
    r.method("skip", vec![coll(), p("count", Ty::Int)], skip);
    r.extension(
        "append",
        vec![coll(), var("args", Ty::Any).nullable()],
        append,
    );
    r.extension(
        "distinct",
        vec![coll(), lazy("keySelector").default(nv())],
        distinct,
    );
    r.extension(
        "enumerate",
        vec![
            coll(),
            p("start", Ty::Int).nullable().default(Value::Int(0)),
        ],
        enumerate,
    );
    r.extension("any", vec![coll(), lazy("predicate").default(nv())], any);
    r.extension("all", vec![coll(), lazy("predicate").default(nv())], all);
    r.extension("concat", vec![var("collections", Ty::Iterable)], concat);
    r.extension(
        "len",
        vec![p("collection", Ty::Check(is_iterator))],
        len_iter,
    );
    r.method("count", vec![coll()], count);
    r.method("memorize", vec![coll()], memorize);
    let initial = || vec![coll(), p("initial", Ty::Any).nullable().default(nv())];
    r.method("sum", initial(), sum);
    r.method("min", initial(), min);
    r.method("max", initial(), max);
    let with_default = || vec![coll(), p("default", Ty::Any).nullable().default(nv())];
    r.method("first", with_default(), first);
    r.method("single", vec![coll()], single);
    r.method("last", with_default(), last);
    r.method("selectMany", selr(), select_many);
    r.function("range", vec![p("stop", Ty::Int)], range1);
    r.function(
        "range",
        vec![
            p("start", Ty::Int),
            p("stop", Ty::Int),
            p("step", Ty::Int).default(Value::Int(1)),
        ],
        range3,
    );
}

/// Ordering, slicing, searching and aggregation.
fn register_order_and_aggregates(r: &mut Registry) {
    let nv = novalue;
    let pred = || vec![coll(), lazy("predicate")];
    let selr = || vec![coll(), lazy("selector")];
    r.method("orderBy", selr(), order_by);
    r.method("orderByDescending", selr(), order_by_descending);
    let ordering = || vec![p("collection", Ty::Check(is_ordering)), lazy("selector")];
    r.method("thenBy", ordering(), then_by);
    r.method("thenByDescending", ordering(), then_by_descending);
    r.method(
        "groupBy",
        vec![
            coll(),
            lazy("keySelector"),
            lazy("valueSelector").default(nv()),
            lazy("aggregator").default(nv()),
        ],
        group_by,
    );
    r.method(
        "join",
        vec![
            p("collection1", Ty::Iterable),
            p("collection2", Ty::Iterable),
            lazy("predicate"),
            lazy("selector"),
        ],
        join,
    );
    r.method("zip", vec![var("collections", Ty::Iterable)], zip);
    r.method(
        "zipLongest",
        vec![
            var("collections", Ty::Iterable),
            kw("kwargs", Ty::Any).nullable(),
        ],
        zip_longest,
    );
    r.method(
        "repeat",
        vec![
            p("value", Ty::Any).nullable(),
            p("times", Ty::Int).default(Value::Int(-1)),
        ],
        repeat,
    );
    r.method("cycle", vec![coll()], cycle);
    r.method("takeWhile", pred(), take_while);
    r.method("skipWhile", pred(), skip_while);
    r.method(
        "indexOf",
        vec![coll(), p("item", Ty::Any).nullable()],
        index_of,
    );
    r.method(
        "lastIndexOf",
        vec![coll(), p("item", Ty::Any).nullable()],
        last_index_of,
    );
    r.method("indexWhere", pred(), index_where);
    r.method("lastIndexWhere", pred(), last_index_where);
    r.method("slice", vec![coll(), p("length", Ty::Int)], slice);
    r.method("splitWhere", pred(), split_where);
    r.method("sliceWhere", pred(), slice_where);
    r.method("splitAt", vec![coll(), p("index", Ty::Int)], split_at);
    let agg = || {
        vec![
            coll(),
            lazy("selector"),
            p("seed", Ty::Any).nullable().default(nv()),
        ]
    };
    r.method("aggregate", agg(), aggregate);
    r.method("reduce", agg(), aggregate);
    r.method("accumulate", agg(), accumulate);
    r.method("reverse", vec![coll()], reverse);
    r.method(
        "mergeWith",
        vec![
            p("dict", Ty::Mapping),
            p("another", Ty::Mapping),
            lazy("listMerger").default(nv()),
            lazy("itemMerger").default(nv()),
            p("maxLevels", Ty::Int).default(Value::Int(0)),
        ],
        merge_with,
    );
    r.function(
        "isIterable",
        vec![p("value", Ty::Any).nullable()],
        is_iterable,
    );
    r.function(
        "sequence",
        vec![
            p("start", Ty::Int).default(Value::Int(0)),
            p("step", Ty::Int).default(Value::Int(1)),
        ],
        sequence,
    );
    r.function(
        "generate",
        vec![
            p("initial", Ty::Any).nullable(),
            lazy("predicate"),
            lazy("producer"),
            lazy("selector").default(nv()),
            p("decycle", Ty::Bool).default(false),
        ],
        generate,
    );
    r.function(
        "generateMany",
        vec![
            p("initial", Ty::Any).nullable(),
            lazy("producer"),
            lazy("selector").default(nv()),
            p("decycle", Ty::Bool).default(false),
            p("depthFirst", Ty::Bool).default(false),
        ],
        generate_many,
    );
    r.method(
        "defaultIfEmpty",
        vec![coll(), p("default", Ty::Iterable)],
        default_if_empty,
    );
}

#[cfg(test)]
mod tests {
    use runtime::{json, Options, Value};

    pub(super) fn eval(expr: &str, data: &str) -> Result<String, String> {
        let env = crate::env(Options::test_suite(false));
        let prog = compiler::compile(expr, env.registry(), Default::default())
            .map_err(|e| e.kind().to_string())?;
        let data = json::from_tagged_str(data).unwrap_or(Value::Null);
        let v = prog
            .eval(&env, data)
            .and_then(|v| crate::finalize(&env, v))
            .map_err(|e| e.kind().to_string())?;
        Ok(json::to_tagged_string(&v))
    }

    pub(super) fn ok(expr: &str, data: &str, expected: &str) {
        assert_eq!(eval(expr, data), Ok(expected.to_string()), "{expr}");
    }

    #[test]
    fn lazy_pipelines() {
        ok("$.where($ > 2).select($ * 10)", "[1, 2, 3, 4]", "[30, 40]");
        ok("sequence().where($ mod 2 = 0).take(3)", "null", "[0, 2, 4]");
        ok("[1, 2].cycle().take(5)", "null", "[1, 2, 1, 2, 1]");
        ok(
            "range(4).selectMany(range($))",
            "null",
            "[0, 0, 1, 0, 1, 2]",
        );
        ok(
            "[1, 2, 3].zipLongest([4], default => 0)",
            "null",
            "[[1, 4], [2, 0], [3, 0]]",
        );
        assert_eq!(
            eval("sequence()", "null"),
            Err("CollectionTooLargeException".into())
        );
    }

    #[test]
    fn ordering_and_grouping() {
        ok(
            "$.orderBy($[0]).thenByDescending($[1])",
            "[[2, 2], [1, 5], [1, 0]]",
            "[[1, 5], [1, 0], [2, 2]]",
        );
        ok(
            "$.groupBy($[1], $[0], $.sum())",
            r#"[["a", 1], ["b", 2], ["c", 1]]"#,
            r#"[[1, "ac"], [2, "b"]]"#,
        );
        assert!(eval("[1].thenBy($)", "null").is_err());
    }

    #[test]
    fn element_access() {
        ok("[].first(7)", "null", "7");
        assert_eq!(eval("[].first()", "null"), Err("StopIteration".into()));
        ok("[1, 2, 3].last()", "null", "3");
        ok("[1, 2, 3, 2].lastIndexOf(2)", "null", "3");
        ok("[].aggregate($1 + $2, 1)", "null", "1");
    }
}
