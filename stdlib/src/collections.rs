//! `yaql/standard_library/collections.py`: lists, dicts and sets —
//! construction (`list`, `set`, `dict`, `#list`, `#map`, `toList`, `toSet`,
//! `toDict`), access (`#indexer`, `x.key`, `get`, `keys`, `values`,
//! `items`, `len`, `contains*`, `in`), operators (`+`, `-`, `*`, set
//! comparisons) and the copy-on-write editors (`set`, `delete`, `insert`,
//! `replace`, set algebra, `flatten`).
//!
//! Functions the reference writes as Python generators return lazy
//! sequences here (`Value::iter`), so they are one-shot and are rejected by
//! `sequence` parameters (`[1, 2].delete(0)[0]` has no matching `#indexer`),
//! exactly as in yaql.

use runtime::ErrorKind;
use std::collections::VecDeque;
use std::sync::Arc;

use num_bigint::Sign;
use runtime::registry::{lazy, p, var, Args, Cx, Registry, Ty};
use runtime::seq::{iterate_unlimited, SeqIter};
use runtime::{pyrepr, Dict, Error, Result, Set, Value};

// ---------------------------------------------------------------------------
// helpers

/// An `int` parameter as a wide integer; big integers saturate far beyond
/// any collection index, which keeps the reference's comparisons exact.
fn ival(v: &Value) -> i128 {
    match v {
        Value::Int(i) => *i as i128,
        Value::Bool(b) => *b as i128,
        Value::BigInt(b) => {
            if b.sign() == Sign::Minus {
                -(1i128 << 100)
            } else {
                1i128 << 100
            }
        }
        _ => 0,
    }
}

/// The reference's `count >= 0 and position <= i < position + count or
/// count < 0 and i >= position` (a negative count reaches the end).
#[allow(clippy::nonminimal_bool)]
fn in_window(i: i128, pos: i128, count: i128) -> bool {
    (count >= 0 && pos <= i && i < pos + count) || (count < 0 && i >= pos)
}

fn too_large() -> Error {
    Error::too_large()
}

fn limit_len(cx: &Cx, n: usize) -> Result<()> {
    if n > cx.env.limit() {
        Err(too_large())
    } else {
        Ok(())
    }
}

/// Python `is_iterable`: lists, sets and lazy sequences (not strings/dicts).
fn not_set_iterable(v: &Value) -> bool {
    matches!(v, Value::List(_) | Value::Iter(_))
}

/// Any value except a mapping rule (plain parameters of the reference do
/// not take `k => v` arguments).
fn not_pair(v: &Value) -> bool {
    !matches!(v, Value::Pair(_))
}

fn pair_of(v: &Value) -> (Value, Value) {
    match v {
        Value::Pair(pr) => (pr.0.clone(), pr.1.clone()),
        other => (other.clone(), Value::Null),
    }
}

fn key_error(k: &Value) -> Error {
    Error::key(pyrepr::repr(k))
}

/// Pushes the elements of `it` into `q`, stopping after the first error
/// (a too-long lazy sequence keeps failing on every pull).
fn drain_into(it: SeqIter, q: &mut VecDeque<Result<Value>>) {
    for x in it {
        let err = x.is_err();
        q.push_back(x);
        if err {
            break;
        }
    }
}

fn set_of(cx: &Cx, v: &Value) -> Result<Arc<Set>> {
    match v {
        Value::Set(s) => Ok(s.clone()),
        other => {
            let mut s = Set::default();
            for x in cx.iter(other)? {
                s.insert(x?);
            }
            Ok(runtime::value::set_arc(s))
        }
    }
}

fn as_set(v: &Value) -> &Set {
    // An immutable empty set, made once.
    static EMPTY: std::sync::OnceLock<Set> = std::sync::OnceLock::new();
    match v {
        Value::Set(s) => s,
        _ => EMPTY.get_or_init(Set::default),
    }
}

fn as_dict(v: &Value) -> &Dict {
    // An immutable empty dict, made once.
    static EMPTY: std::sync::OnceLock<Dict> = std::sync::OnceLock::new();
    match v {
        Value::Dict(d) => d,
        _ => EMPTY.get_or_init(Dict::default),
    }
}

/// Flattens lazy sequences (Python iterators) among `args`, recursively,
/// as `list_`/`set_`'s inner `rec` does; the result passes through an
/// iterable parameter, hence the iterator limit on its length.
fn flatten_iterators(cx: &Cx, args: &[Value]) -> Result<Vec<Value>> {
    fn rec(v: &Value, out: &mut Vec<Value>, limit: usize) -> Result<()> {
        if let Value::Iter(_) = v {
            for x in iterate_unlimited(v)? {
                rec(&x?, out, limit)?;
            }
        } else {
            if out.len() >= limit {
                return Err(too_large());
            }
            out.push(v.clone());
        }
        Ok(())
    }
    let limit = cx.env.limit();
    let mut out = Vec::new();
    for a in args {
        rec(a, &mut out, limit)?;
    }
    Ok(out)
}

/// `value in collection` for an iterable parameter.
fn contains_in(cx: &Cx, coll: &Value, v: &Value) -> Result<bool> {
    let it = cx.iter(coll)?;
    if let Value::Set(s) = coll {
        return Ok(s.contains(v));
    }
    for x in it {
        if x? == *v {
            return Ok(true);
        }
    }
    Ok(false)
}

// ---------------------------------------------------------------------------
// construction

/// `list(*args)` (`collections.list_`): the args, with lazy sequences among
/// them unpacked recursively.
///
/// Matches yaql `collections.list_` (`list`). Lists among the args stay
/// nested; only lazy sequences (iterators) are unpacked.
///
/// ```yaql
/// list(1, 2, list(3, 4))
/// # => [1, 2, [3, 4]]
/// list(1, {a => 2, b => 3}.values(), 4)
/// # => [1, 2, 3, 4]
/// list()
/// # => []
/// ```
fn list_(cx: &Cx, a: Args) -> Result<Value> {
    Ok(Value::list(flatten_iterators(cx, &a.rest)?))
}

/// `#list(*args)` (`collections.build_list`): the args as a list.
///
/// Matches yaql `collections.build_list` (`#list`, the `[...]` literal).
///
/// ```yaql
/// [1, [2, 3], null]
/// # => [1, [2, 3], null]
/// []
/// # => []
/// ```
fn build_list(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::list(a.rest))
}

/// `set(*args)` (`collections.set_`): a set of the args, lazy sequences
/// among them unpacked recursively.
///
/// Matches yaql `collections.set_` (`set`). Equal values collapse (`1`,
/// `1.0` and `true` are one element, as in Python); a list argument stays a
/// single element while a lazy sequence is unpacked.
///
/// ```yaql
/// set(1, 2, 2, 1)
/// # => [1, 2]
/// set([1, 2].select($), [3, 4])
/// # => [1, 2, [3, 4]]
/// set(1, 1.0, true)
/// # => [1]
/// set()
/// # => []
/// ```
fn set_(cx: &Cx, a: Args) -> Result<Value> {
    Ok(Value::set(
        flatten_iterators(cx, &a.rest)?.into_iter().collect(),
    ))
}

/// `collection.toList()` (`collections.to_list`).
///
/// Matches yaql `collections.to_list` (`toList`). The collection passes
/// through the iterator limit.
///
/// ```yaql
/// {a => 1, b => 2}.values().toList()
/// # => [1, 2]
/// isList([1, 2, 3].select($).toList())
/// # => true
/// range(200).toList()
/// # error: CollectionTooLargeException
/// ```
fn to_list(cx: &Cx, a: Args) -> Result<Value> {
    Ok(Value::List(runtime::seq::to_list(cx.env, a.get(0))?))
}

/// `collection.toSet()` (`collections.to_set`).
///
/// Matches yaql `collections.to_set` (`toSet`).
///
/// ```yaql
/// [1, 2, 2, 1].toSet()
/// # => [1, 2]
/// isSet([1, 2].toSet())
/// # => true
/// ```
fn to_set(cx: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Set(set_of(cx, a.get(0))?))
}

/// `dict(*args)` / `#map(*args)` (`collections.dict_`): a dict of mapping
/// rules `k => v`.
///
/// Matches yaql `collections.dict_` (`dict` and `#map`, the `{k => v}`
/// literal). A repeated key keeps the last value; keys need not be strings.
///
/// ```yaql
/// dict(a => 1, b => 2, a => 3)
/// # => {"a": 3, "b": 2}
/// dict(1 => one, null => none)
/// # => {"$dict": [[1, "one"], [null, "none"]]}
/// {a => 1, b => [2, 3]}
/// # => {"a": 1, "b": [2, 3]}
/// {}
/// # => {}
/// ```
fn dict_(_: &Cx, a: Args) -> Result<Value> {
    let mut d = Dict::default();
    for r in &a.rest {
        let (k, v) = pair_of(r);
        d.insert(k, v);
    }
    Ok(Value::dict(d))
}

/// The first two elements of `t` as Python's `iter(t)`/`next` give them.
fn first_two(t: &Value) -> Result<(Value, Value)> {
    let stop = || Error::new(ErrorKind::StopIteration, "a pair needs two elements");
    let mut two: Vec<Value> = Vec::with_capacity(2);
    match t {
        Value::Str(s) => {
            for c in s.chars().take(2) {
                two.push(Value::str(c.to_string()));
            }
        }
        Value::Dict(d) => two.extend(d.keys().take(2).cloned()),
        Value::List(_) | Value::Set(_) | Value::Iter(_) => {
            for x in iterate_unlimited(t)? {
                two.push(x?);
                if two.len() == 2 {
                    break;
                }
            }
        }
        other => {
            return Err(Error::type_(format!(
                "'{}' object is not iterable",
                other.type_name()
            )))
        }
    }
    let mut it = two.into_iter();
    let k = it.next().ok_or_else(stop)?;
    let v = it.next().ok_or_else(stop)?;
    Ok((k, v))
}

/// `dict(items)` (`collections.dict__`): a dict of `[key, value]` pairs.
///
/// Matches yaql `collections.dict__` (`dict`). Each item yields its first
/// two elements as key and value (a string item gives two characters); an
/// item with fewer than two elements raises `StopIteration`.
///
/// ```yaql
/// dict([[a, 1], [b, 2]])
/// # => {"a": 1, "b": 2}
/// dict({a => 1, b => 2}.items())
/// # => {"a": 1, "b": 2}
/// dict(['xy', [1, 2, 3]])
/// # => {"$dict": [["x", "y"], [1, 2]]}
/// dict([[1]])
/// # error: StopIteration
/// ```
fn dict_items_ctor(cx: &Cx, a: Args) -> Result<Value> {
    let mut d = Dict::default();
    for t in cx.iter(a.get(0))? {
        let (k, v) = first_two(&t?)?;
        d.insert(k, v);
    }
    Ok(Value::dict(d))
}

/// `collection.toDict(keySelector, valueSelector)` (`collections.to_dict`).
///
/// Matches yaql `collections.to_dict` (`toDict`). Later elements overwrite
/// earlier ones with the same key.
///
/// ```yaql
/// [1, 2, 3].toDict($, $ * $)
/// # => {"$dict": [[1, 1], [2, 4], [3, 9]]}
/// [a, bb, cc].toDict($, $.len())
/// # => {"a": 1, "bb": 2, "cc": 2}
/// ```
fn to_dict2(cx: &Cx, a: Args) -> Result<Value> {
    let mut d = Dict::default();
    for t in cx.iter(a.get(0))? {
        let t = t?;
        let k = cx.call(a.get(1), std::slice::from_ref(&t))?;
        let v = cx.call(a.get(2), &[t])?;
        d.insert(k, v);
    }
    Ok(Value::dict(d))
}

/// `collection.toDict(keySelector)` (`collections.to_dict` without a value
/// selector: values are the elements).
///
/// Matches yaql `collections.to_dict` (`toDict`) with the default
/// `valueSelector => null`.
///
/// ```yaql
/// [a, bb, cc].toDict($.len())
/// # => {"$dict": [[1, "a"], [2, "cc"]]}
/// ```
fn to_dict1(cx: &Cx, a: Args) -> Result<Value> {
    let mut d = Dict::default();
    for t in cx.iter(a.get(0))? {
        let t = t?;
        let k = cx.call(a.get(1), std::slice::from_ref(&t))?;
        d.insert(k, t);
    }
    Ok(Value::dict(d))
}

// ---------------------------------------------------------------------------
// access

/// `dict.key` (`collections.dict_keyword_access`): `d[key]`, `KeyError` when
/// missing.
///
/// Matches yaql `collections.dict_keyword_access` (`#operator_.`). The key
/// must be a bare identifier.
///
/// ```yaql
/// # data: {"a": {"b": [5]}}
/// $.a.b
/// # => [5]
/// # data: {"a": 1}
/// $.x
/// # error: KeyError
/// # data: {"a": 1, "b c": 2}
/// $.'b c'
/// # error: NoMatchingFunctionException
/// ```
fn dict_keyword_access(_: &Cx, a: Args) -> Result<Value> {
    as_dict(a.get(0))
        .get(a.get(1))
        .cloned()
        .ok_or_else(|| key_error(a.get(1)))
}

/// `dict[key]` (`collections.dict_indexer`).
///
/// Matches yaql `collections.dict_indexer` (`#indexer`). Any key type works;
/// a missing key raises `KeyError`.
///
/// ```yaql
/// # data: {"a": 1, "b c": 2}
/// $['b c']
/// # => 2
/// {1 => one, null => none}[null]
/// # => "none"
/// # data: {"a": 1}
/// $[x]
/// # error: KeyError
/// ```
fn dict_indexer(_: &Cx, a: Args) -> Result<Value> {
    as_dict(a.get(0))
        .get(a.get(1))
        .cloned()
        .ok_or_else(|| key_error(a.get(1)))
}

/// `dict[key, default]` (`collections.dict_indexer_with_default`) and
/// `dict.get(key, default => null)` (`collections.dict_get`).
///
/// Matches yaql `collections.dict_indexer_with_default` (`#indexer`) and
/// `collections.dict_get` (`get`).
///
/// ```yaql
/// # data: {"a": 1}
/// $[x, 0]
/// # => 0
/// # data: {"a": 1}
/// $.get(a, 0)
/// # => 1
/// # data: {"a": 1}
/// $.get(x)
/// # => null
/// # data: {"a": 1}
/// $.get(x, default => 0)
/// # => 0
/// ```
fn dict_get(_: &Cx, a: Args) -> Result<Value> {
    Ok(as_dict(a.get(0))
        .get(a.get(1))
        .cloned()
        .unwrap_or_else(|| a.get(2).clone()))
}

/// `sequence[index]` (`collections.list_indexer`): Python indexing,
/// negative indexes from the end.
///
/// Matches yaql `collections.list_indexer` (`#indexer`). Only lists (not
/// lazy sequences) are indexable; `true`/`false` count as `1`/`0`.
///
/// ```yaql
/// [1, 2, 3][0]
/// # => 1
/// [1, 2, 3][-1]
/// # => 3
/// [1, 2, 3][true]
/// # => 2
/// [1, 2, 3][3]
/// # error: IndexError
/// [1, 2, 3].select($)[0]
/// # error: NoMatchingFunctionException
/// ```
fn list_indexer(_: &Cx, a: Args) -> Result<Value> {
    let Value::List(l) = a.get(0) else {
        return Err(Error::type_("not a sequence"));
    };
    if let Value::BigInt(_) = a.get(1) {
        return Err(Error::index("cannot fit 'int' into an index-sized integer"));
    }
    let n = l.len() as i128;
    let mut i = ival(a.get(1));
    if i < 0 {
        i += n;
    }
    if i < 0 || i >= n {
        return Err(Error::index("tuple index out of range"));
    }
    Ok(l[i as usize].clone())
}

fn dict_seq(d: &Value, f: fn(&Value, &Value) -> Value) -> Value {
    let d = match d {
        Value::Dict(d) => d.clone(),
        _ => Arc::new(Dict::default()),
    };
    let mut i = 0;
    Value::iter(std::iter::from_fn(move || {
        let (k, v) = d.get_index(i)?;
        i += 1;
        Some(Ok(f(k, v)))
    }))
}

/// `dict.keys()` (`collections.dict_keys`): an iterator over the keys.
///
/// Matches yaql `collections.dict_keys` (`keys`).
///
/// ```yaql
/// {a => 1, b => 2}.keys()
/// # => ["a", "b"]
/// isList({a => 1}.keys())
/// # => false
/// ```
fn dict_keys(_: &Cx, a: Args) -> Result<Value> {
    Ok(dict_seq(a.get(0), |k, _| k.clone()))
}

/// `dict.values()` (`collections.dict_values`): an iterator over the values.
///
/// Matches yaql `collections.dict_values` (`values`).
///
/// ```yaql
/// {a => 1, b => [2]}.values()
/// # => [1, [2]]
/// ```
fn dict_values(_: &Cx, a: Args) -> Result<Value> {
    Ok(dict_seq(a.get(0), |_, v| v.clone()))
}

/// `dict.items()` (`collections.dict_items`): an iterator over
/// `[key, value]` pairs.
///
/// Matches yaql `collections.dict_items` (`items`).
///
/// ```yaql
/// {a => 1, b => 2}.items()
/// # => [["a", 1], ["b", 2]]
/// {}.items()
/// # => []
/// ```
fn dict_items(_: &Cx, a: Args) -> Result<Value> {
    Ok(dict_seq(a.get(0), |k, v| {
        Value::list(vec![k.clone(), v.clone()])
    }))
}

/// `value in collection` (`collections.in_`).
///
/// Matches yaql `collections.in_` (`#operator_in`). The collection is any
/// iterable except strings and dicts.
///
/// ```yaql
/// 2.0 in set(1, 2)
/// # => true
/// [1, 2] in [[1, 2], 3]
/// # => true
/// 4 in [1, 2, 3].select($ + 1)
/// # => true
/// a in {a => 1}
/// # error: NoMatchingFunctionException
/// ```
fn in_(cx: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Bool(contains_in(cx, a.get(1), a.get(0))?))
}

/// `collection.contains(value)` (`collections.contains`).
///
/// Matches yaql `collections.contains` (`contains`).
///
/// ```yaql
/// [1, 2, 3].contains(2)
/// # => true
/// set(1, 2).contains(3)
/// # => false
/// {a => 1}.values().contains(1)
/// # => true
/// ```
fn contains(cx: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Bool(contains_in(cx, a.get(0), a.get(1))?))
}

/// `dict.containsKey(key)` (`collections.contains_key`).
///
/// Matches yaql `collections.contains_key` (`containsKey`).
///
/// ```yaql
/// {a => 1, null => 2}.containsKey(null)
/// # => true
/// {a => 1}.containsKey(1)
/// # => false
/// ```
fn contains_key(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Bool(as_dict(a.get(0)).contains_key(a.get(1))))
}

/// `dict.containsValue(value)` (`collections.contains_value`).
///
/// Matches yaql `collections.contains_value` (`containsValue`).
///
/// ```yaql
/// {a => [1, 2]}.containsValue([1, 2])
/// # => true
/// {a => 1}.containsValue(a)
/// # => false
/// ```
fn contains_value(_: &Cx, a: Args) -> Result<Value> {
    let v = a.get(1);
    Ok(Value::Bool(as_dict(a.get(0)).values().any(|x| x == v)))
}

/// `len(dict)` / `len(sequence)` / `len(set)` (`collections.dict_len`,
/// `sequence_len`, `set_len`).
///
/// Matches yaql `collections.dict_len`, `collections.sequence_len` and
/// `collections.set_len` (`len`).
///
/// ```yaql
/// len({a => 1, b => 2})
/// # => 2
/// [1, [2, 3]].len()
/// # => 2
/// len(set(1, 1, 2))
/// # => 2
/// {}.len()
/// # => 0
/// ```
fn len_(_: &Cx, a: Args) -> Result<Value> {
    let n = match a.get(0) {
        Value::Dict(d) => d.len(),
        Value::List(l) => l.len(),
        Value::Set(s) => s.len(),
        _ => 0,
    };
    Ok(Value::Int(n as i64))
}

/// `isList(arg)` (`collections.is_list`).
///
/// Matches yaql `collections.is_list` (`isList`). Lazy sequences and sets
/// are not lists.
///
/// ```yaql
/// isList([1, 2])
/// # => true
/// isList([1, 2].select($))
/// # => false
/// isList(set(1))
/// # => false
/// isList(null)
/// # => false
/// ```
fn is_list(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Bool(matches!(a.get(0), Value::List(_))))
}

/// `isDict(arg)` (`collections.is_dict`).
///
/// Matches yaql `collections.is_dict` (`isDict`).
///
/// ```yaql
/// isDict({a => 1})
/// # => true
/// isDict([[a, 1]])
/// # => false
/// ```
fn is_dict(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Bool(matches!(a.get(0), Value::Dict(_))))
}

/// `isSet(arg)` (`collections.is_set`).
///
/// Matches yaql `collections.is_set` (`isSet`).
///
/// ```yaql
/// isSet(set(1, 2))
/// # => true
/// isSet([1, 2])
/// # => false
/// ```
fn is_set(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Bool(matches!(a.get(0), Value::Set(_))))
}

// ---------------------------------------------------------------------------
// operators

/// `left + right` for iterables (`collections.combine_lists`): tuple
/// concatenation, set union, otherwise a lazy concatenation.
///
/// Matches yaql `collections.combine_lists` (`#operator_+`).
///
/// ```yaql
/// [1, 2] + [3]
/// # => [1, 2, 3]
/// isSet(set(1, 2) + set(2, 3))
/// # => true
/// len(set(1, 2) + set(2, 3))
/// # => 3
/// isList([1, 2] + set(3))
/// # => false
/// [1, 2].select($ * 10) + [3]
/// # => [10, 20, 3]
/// ```
fn combine_lists(cx: &Cx, a: Args) -> Result<Value> {
    match (a.get(0), a.get(1)) {
        (Value::List(l), Value::List(r)) => {
            limit_len(cx, l.len())?;
            limit_len(cx, r.len())?;
            let mut v = Vec::with_capacity(l.len() + r.len());
            v.extend(l.iter().cloned());
            v.extend(r.iter().cloned());
            Ok(Value::list(v))
        }
        (Value::Set(l), Value::Set(r)) => {
            limit_len(cx, l.len())?;
            limit_len(cx, r.len())?;
            let mut s = (**l).clone();
            s.extend(r.iter().cloned());
            Ok(Value::set(s))
        }
        (l, r) => {
            let x = cx.iter(l)?;
            let y = cx.iter(r)?;
            Ok(Value::iter(x.chain(y)))
        }
    }
}

/// `left + right` for dicts (`collections.combine_dicts`): `left` updated
/// with `right`.
///
/// Matches yaql `collections.combine_dicts` (`#operator_+`).
///
/// ```yaql
/// {a => 1, b => 2} + {b => 3, c => 4}
/// # => {"a": 1, "b": 3, "c": 4}
/// ```
fn combine_dicts(_: &Cx, a: Args) -> Result<Value> {
    let mut d = as_dict(a.get(0)).clone();
    for (k, v) in as_dict(a.get(1)) {
        d.insert(k.clone(), v.clone());
    }
    Ok(Value::dict(d))
}

/// Python's `sequence * count`.
fn repeat(seq: &Value, count: &Value) -> Result<Value> {
    let Value::List(l) = seq else {
        return Err(Error::type_("not a sequence"));
    };
    if let Value::BigInt(_) = count {
        return Err(Error::new(
            ErrorKind::OverflowError,
            "cannot fit 'int' into an index-sized integer",
        ));
    }
    let n = ival(count).max(0) as usize;
    if l.is_empty() {
        return Ok(Value::list(Vec::new()));
    }
    if l.len().saturating_mul(n) > 2_000_000 {
        return Err(Error::new(
            ErrorKind::MemoryQuotaExceededException,
            "Expression consumed too much memory",
        ));
    }
    let mut v = Vec::with_capacity(l.len() * n);
    for _ in 0..n {
        v.extend(l.iter().cloned());
    }
    Ok(Value::list(v))
}

/// `sequence * int` (`collections.list_by_int`).
///
/// Matches yaql `collections.list_by_int` (`#operator_*`): Python
/// repetition, so a count below one gives an empty list.
///
/// ```yaql
/// [1, 2] * 2
/// # => [1, 2, 1, 2]
/// [1] * -3
/// # => []
/// [1, 2].select($) * 2
/// # error: NoMatchingFunctionException
/// ```
fn list_by_int(_: &Cx, a: Args) -> Result<Value> {
    repeat(a.get(0), a.get(1))
}

/// `int * sequence` (`collections.int_by_list`).
///
/// Matches yaql `collections.int_by_list` (`#operator_*`).
///
/// ```yaql
/// 3 * [1, 2]
/// # => [1, 2, 1, 2, 1, 2]
/// 0 * [1]
/// # => []
/// ```
fn int_by_list(_: &Cx, a: Args) -> Result<Value> {
    repeat(a.get(1), a.get(0))
}

/// `left < right` for sets (`collections.set_lt`): proper subset.
///
/// Matches yaql `collections.set_lt` (`#operator_<`).
///
/// ```yaql
/// set(1, 2) < set(1, 2, 3)
/// # => true
/// set(1, 2) < set(1, 2)
/// # => false
/// ```
fn set_lt(_: &Cx, a: Args) -> Result<Value> {
    let (l, r) = (as_set(a.get(0)), as_set(a.get(1)));
    Ok(Value::Bool(l.len() < r.len() && l.is_subset(r)))
}

/// `left <= right` for sets (`collections.set_lte`): subset.
///
/// Matches yaql `collections.set_lte` (`#operator_<=`).
///
/// ```yaql
/// set(1, 2) <= set(1, 2)
/// # => true
/// set(1, 2) <= set(1, 3)
/// # => false
/// ```
fn set_lte(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Bool(as_set(a.get(0)).is_subset(as_set(a.get(1)))))
}

/// `left > right` for sets (`collections.set_gt`): proper superset.
///
/// Matches yaql `collections.set_gt` (`#operator_>`).
///
/// ```yaql
/// set(1, 2, 3) > set(1, 2)
/// # => true
/// set(1, 2) > set(1, 2)
/// # => false
/// ```
fn set_gt(_: &Cx, a: Args) -> Result<Value> {
    let (l, r) = (as_set(a.get(0)), as_set(a.get(1)));
    Ok(Value::Bool(l.len() > r.len() && r.is_subset(l)))
}

/// `left >= right` for sets (`collections.set_gte`): superset.
///
/// Matches yaql `collections.set_gte` (`#operator_>=`).
///
/// ```yaql
/// set(1, 2) >= set(1, 2)
/// # => true
/// set(1, 2) >= set(3)
/// # => false
/// ```
fn set_gte(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Bool(as_set(a.get(1)).is_subset(as_set(a.get(0)))))
}

// ---------------------------------------------------------------------------
// set algebra

/// `left.union(right)` (`collections.union`).
///
/// Matches yaql `collections.union` (`union`). Both operands must be sets.
///
/// ```yaql
/// set(1, 2).union(set(2, 3))
/// # => [1, 2, 3]
/// [1, 2].union([2])
/// # error: NoMatchingMethodException
/// ```
fn union(_: &Cx, a: Args) -> Result<Value> {
    let mut s = as_set(a.get(0)).clone();
    s.extend(as_set(a.get(1)).iter().cloned());
    Ok(Value::set(s))
}

/// `left.intersect(right)` (`collections.intersect`).
///
/// Matches yaql `collections.intersect` (`intersect`).
///
/// ```yaql
/// set(1, 2, 3).intersect(set(2, 3, 4))
/// # => [2, 3]
/// set(1, 2).intersect(set(3))
/// # => []
/// ```
fn intersect(_: &Cx, a: Args) -> Result<Value> {
    let r = as_set(a.get(1));
    Ok(Value::set(
        as_set(a.get(0))
            .iter()
            .filter(|x| r.contains(*x))
            .cloned()
            .collect(),
    ))
}

/// `left.difference(right)` and `left - right` (`collections.difference`).
///
/// Matches yaql `collections.difference` (`difference` and `#operator_-`).
///
/// ```yaql
/// set(1, 2, 3).difference(set(2))
/// # => [1, 3]
/// set(1, 2, 3) - set(2, 4)
/// # => [1, 3]
/// isSet(set(1, 2) - set(1, 2))
/// # => true
/// ```
fn difference(_: &Cx, a: Args) -> Result<Value> {
    let r = as_set(a.get(1));
    Ok(Value::set(
        as_set(a.get(0))
            .iter()
            .filter(|x| !r.contains(*x))
            .cloned()
            .collect(),
    ))
}

/// `left.symmetricDifference(right)` (`collections.symmetric_difference`).
///
/// Matches yaql `collections.symmetric_difference` (`symmetricDifference`).
///
/// ```yaql
/// set(1, 2, 3).symmetricDifference(set(3, 4))
/// # => [1, 2, 4]
/// ```
fn symmetric_difference(_: &Cx, a: Args) -> Result<Value> {
    let (l, r) = (as_set(a.get(0)), as_set(a.get(1)));
    let mut s: Set = l.iter().filter(|x| !r.contains(*x)).cloned().collect();
    s.extend(r.iter().filter(|x| !l.contains(*x)).cloned());
    Ok(Value::set(s))
}

/// `set.add(*values)` (`collections.set_add`).
///
/// Matches yaql `collections.set_add` (`add`): a new set; the receiver is
/// unchanged.
///
/// ```yaql
/// set(1, 2).add(3, [4, 5])
/// # => [1, 2, 3, [4, 5]]
/// set(1, 2).add(2)
/// # => [1, 2]
/// ```
fn set_add(_: &Cx, a: Args) -> Result<Value> {
    let mut s = as_set(a.get(0)).clone();
    s.extend(a.rest.iter().cloned());
    Ok(Value::set(s))
}

/// `set.remove(*values)` (`collections.set_remove`).
///
/// Matches yaql `collections.set_remove` (`remove`). Values not in the set
/// are ignored.
///
/// ```yaql
/// set(1, 2, 3).remove(2, 5)
/// # => [1, 3]
/// set(1, null).remove(null)
/// # => [1]
/// ```
fn set_remove(_: &Cx, a: Args) -> Result<Value> {
    let r: Set = a.rest.iter().cloned().collect();
    Ok(Value::set(
        as_set(a.get(0))
            .iter()
            .filter(|x| !r.contains(*x))
            .cloned()
            .collect(),
    ))
}

// ---------------------------------------------------------------------------
// dict editors

/// `dict.set(key, value)` (`collections.dict_set`).
///
/// Matches yaql `collections.dict_set` (`set`): a new dict; the receiver is
/// unchanged.
///
/// ```yaql
/// {a => 1}.set(b, 2)
/// # => {"a": 1, "b": 2}
/// {a => 1}.set(a, null)
/// # => {"a": null}
/// {a => 1}.set(null, 2)
/// # => {"$dict": [["a", 1], [null, 2]]}
/// ```
fn dict_set(_: &Cx, a: Args) -> Result<Value> {
    let mut d = as_dict(a.get(0)).clone();
    d.insert(a.get(1).clone(), a.get(2).clone());
    Ok(Value::dict(d))
}

/// `dict.set(replacements)` (`collections.dict_set_many`).
///
/// Matches yaql `collections.dict_set_many` (`set`).
///
/// ```yaql
/// {a => 1, b => 2}.set({a => 3, c => 4})
/// # => {"a": 3, "b": 2, "c": 4}
/// ```
fn dict_set_many(_: &Cx, a: Args) -> Result<Value> {
    let mut d = as_dict(a.get(0)).clone();
    for (k, v) in as_dict(a.get(1)) {
        d.insert(k.clone(), v.clone());
    }
    Ok(Value::dict(d))
}

/// `dict.set(k => v, ...)` (`collections.dict_set_many_inline`).
///
/// Matches yaql `collections.dict_set_many_inline` (`set`).
///
/// ```yaql
/// {a => 1, b => 2}.set(a => 3, c => 4)
/// # => {"a": 3, "b": 2, "c": 4}
/// ```
fn dict_set_many_inline(_: &Cx, a: Args) -> Result<Value> {
    let mut d = as_dict(a.get(0)).clone();
    for r in &a.rest {
        let (k, v) = pair_of(r);
        d.insert(k, v);
    }
    Ok(Value::dict(d))
}

fn delete_keys_from(d: &Value, keys: impl Iterator<Item = Result<Value>>) -> Result<Value> {
    let mut d = as_dict(d).clone();
    for k in keys {
        d.shift_remove(&k?);
    }
    Ok(Value::dict(d))
}

/// `dict.delete(*keys)` (`collections.delete_keys`).
///
/// Matches yaql `collections.delete_keys` (`delete`). Missing keys are
/// ignored.
///
/// ```yaql
/// {a => 1, b => 2, c => 3}.delete(a, c, x)
/// # => {"b": 2}
/// {a => 1}.delete()
/// # => {"a": 1}
/// ```
fn delete_keys(_: &Cx, a: Args) -> Result<Value> {
    delete_keys_from(a.get(0), a.rest.iter().cloned().map(Ok))
}

/// `dict.deleteAll(keys)` (`collections.delete_keys_seq`).
///
/// Matches yaql `collections.delete_keys_seq` (`deleteAll`). Missing keys
/// are ignored.
///
/// ```yaql
/// {a => 1, b => 2, c => 3}.deleteAll([b, x])
/// # => {"a": 1, "c": 3}
/// {a => 1, b => 2}.deleteAll({a => 0}.keys())
/// # => {"b": 2}
/// ```
fn delete_keys_seq(cx: &Cx, a: Args) -> Result<Value> {
    delete_keys_from(a.get(0), cx.iter(a.get(1))?)
}

// ---------------------------------------------------------------------------
// sequence editors (generators in the reference)

/// `collection.delete(position, count => 1)` (`collections.delete`): lazy.
///
/// Matches yaql `collections.delete` (`delete`). A negative count deletes
/// to the end; a negative position deletes nothing (with a non-negative
/// count).
///
/// ```yaql
/// [1, 2, 3, 4].delete(1)
/// # => [1, 3, 4]
/// [1, 2, 3, 4].delete(1, 2)
/// # => [1, 4]
/// [1, 2, 3, 4].delete(1, -1)
/// # => [1]
/// [1, 2, 3].delete(-1)
/// # => [1, 2, 3]
/// isList([1, 2].delete(0))
/// # => false
/// ```
fn delete(cx: &Cx, a: Args) -> Result<Value> {
    let src = cx.iter(a.get(0))?;
    let (pos, count) = (ival(a.get(1)), ival(a.get(2)));
    let mut i: i128 = -1;
    Ok(Value::iter(src.filter(move |r| {
        if r.is_err() {
            return true;
        }
        i += 1;
        if count >= 0 {
            !(pos <= i && i < pos + count)
        } else {
            i < pos
        }
    })))
}

/// `collection.replace(position, value, count => 1)`
/// (`collections.replace`): lazy.
///
/// Matches yaql `collections.replace` (`replace`). The whole
/// `[position, position + count)` window becomes one `value`; a negative
/// count reaches the end.
///
/// ```yaql
/// [1, 2, 3, 4].replace(1, x)
/// # => [1, "x", 3, 4]
/// [1, 2, 3, 4].replace(1, x, 2)
/// # => [1, "x", 4]
/// [1, 2, 3, 4].replace(1, x, -1)
/// # => [1, "x"]
/// [1, 2].replace(5, x)
/// # => [1, 2]
/// ```
fn replace(cx: &Cx, a: Args) -> Result<Value> {
    let src = cx.iter(a.get(0))?;
    let (pos, value, count) = (ival(a.get(1)), a.get(2).clone(), ival(a.get(3)));
    let mut i: i128 = -1;
    let mut yielded = false;
    Ok(Value::iter(src.filter_map(move |r| {
        let t = match r {
            Ok(t) => t,
            Err(e) => return Some(Err(e)),
        };
        i += 1;
        if in_window(i, pos, count) {
            if yielded {
                None
            } else {
                yielded = true;
                Some(Ok(value.clone()))
            }
        } else {
            Some(Ok(t))
        }
    })))
}

/// `collection.replaceMany(position, values, count => 1)`
/// (`collections.replace_many`): lazy.
///
/// Matches yaql `collections.replace_many` (`replaceMany`). The
/// `[position, position + count)` window is replaced by all of `values`; a
/// negative count reaches the end.
///
/// ```yaql
/// [1, 2, 3, 4].replaceMany(1, [x, y])
/// # => [1, "x", "y", 3, 4]
/// [1, 2, 3, 4].replaceMany(1, [x, y], 2)
/// # => [1, "x", "y", 4]
/// [1, 2, 3, 4].replaceMany(2, [x], -1)
/// # => [1, 2, "x"]
/// [1, 2, 3].replaceMany(1, [x], 0)
/// # => [1, 2, 3]
/// ```
fn replace_many(cx: &Cx, a: Args) -> Result<Value> {
    let mut src = cx.iter(a.get(0))?;
    let (pos, count) = (ival(a.get(1)), ival(a.get(3)));
    let mut values = Some(cx.iter(a.get(2))?);
    let mut q: VecDeque<Result<Value>> = VecDeque::new();
    let mut i: i128 = -1;
    let mut done = false;
    Ok(Value::iter(std::iter::from_fn(move || loop {
        if let Some(x) = q.pop_front() {
            return Some(x);
        }
        if done {
            return None;
        }
        match src.next() {
            None => done = true,
            Some(Err(e)) => {
                done = true;
                return Some(Err(e));
            }
            Some(Ok(t)) => {
                i += 1;
                if in_window(i, pos, count) {
                    if let Some(v) = values.take() {
                        drain_into(v, &mut q);
                    }
                } else {
                    return Some(Ok(t));
                }
            }
        }
    })))
}

/// `collection.insert(position, value)` on a sequence
/// (`collections.list_insert`): Python's `list.insert`.
///
/// Matches yaql `collections.list_insert` (`insert`): a negative position
/// counts from the end, a position past the end appends.
///
/// ```yaql
/// [1, 2].insert(1, a)
/// # => [1, "a", 2]
/// [1, 2].insert(-1, a)
/// # => [1, "a", 2]
/// [1, 2].insert(100, a)
/// # => [1, 2, "a"]
/// [1, 2].insert(0, [a, b])
/// # => [["a", "b"], 1, 2]
/// ```
fn list_insert(_: &Cx, a: Args) -> Result<Value> {
    let Value::List(l) = a.get(0) else {
        return Err(Error::type_("not a sequence"));
    };
    let n = l.len() as i64;
    let mut pos = a.int(1)?;
    if pos < 0 {
        pos = (pos + n).max(0);
    }
    let pos = pos.min(n) as usize;
    let mut v = Vec::with_capacity(l.len() + 1);
    v.extend(l[..pos].iter().cloned());
    v.push(a.get(2).clone());
    v.extend(l[pos..].iter().cloned());
    Ok(Value::list(v))
}

/// `collection.insert(position, value)` on other iterables, not sets
/// (`collections.iter_insert`): lazy; a negative position inserts nothing.
///
/// Matches yaql `collections.iter_insert` (`insert`); sets have no
/// `insert` at all.
///
/// ```yaql
/// [1, 2].select($).insert(1, a)
/// # => [1, "a", 2]
/// [1, 2].select($).insert(-1, a)
/// # => [1, 2]
/// [1, 2].select($).insert(5, a)
/// # => [1, 2, "a"]
/// set(1, 2).insert(0, a)
/// # error: NoMatchingMethodException
/// ```
fn iter_insert(cx: &Cx, a: Args) -> Result<Value> {
    let mut src = cx.iter(a.get(0))?;
    let (pos, value) = (ival(a.get(1)), a.get(2).clone());
    let mut i: i128 = -1;
    let mut pending: Option<Value> = None;
    let mut done = false;
    Ok(Value::iter(std::iter::from_fn(move || {
        if let Some(t) = pending.take() {
            return Some(Ok(t));
        }
        if done {
            return None;
        }
        match src.next() {
            Some(Ok(t)) => {
                i += 1;
                if i == pos {
                    pending = Some(t);
                    Some(Ok(value.clone()))
                } else {
                    Some(Ok(t))
                }
            }
            Some(Err(e)) => {
                done = true;
                Some(Err(e))
            }
            None => {
                done = true;
                (pos > i).then(|| Ok(value.clone()))
            }
        }
    })))
}

/// `collection.insertMany(position, values)` (`collections.insert_many`):
/// lazy; a negative position inserts at the start.
///
/// Matches yaql `collections.insert_many` (`insertMany`); a position past
/// the end appends.
///
/// ```yaql
/// [1, 2].insertMany(1, [a, b])
/// # => [1, "a", "b", 2]
/// [1, 2].insertMany(-1, [a, b])
/// # => ["a", "b", 1, 2]
/// [1, 2].insertMany(5, [a, b])
/// # => [1, 2, "a", "b"]
/// ```
fn insert_many(cx: &Cx, a: Args) -> Result<Value> {
    let mut src = cx.iter(a.get(0))?;
    let pos = ival(a.get(1));
    let mut values = Some(cx.iter(a.get(2))?);
    let mut q: VecDeque<Result<Value>> = VecDeque::new();
    let mut i: i128 = -1;
    let mut started = false;
    let mut done = false;
    Ok(Value::iter(std::iter::from_fn(move || loop {
        if let Some(x) = q.pop_front() {
            return Some(x);
        }
        if done {
            return None;
        }
        if !started {
            started = true;
            if pos < 0 {
                if let Some(v) = values.take() {
                    drain_into(v, &mut q);
                }
                continue;
            }
        }
        match src.next() {
            Some(Ok(t)) => {
                i += 1;
                if i == pos {
                    if let Some(v) = values.take() {
                        drain_into(v, &mut q);
                    }
                }
                q.push_back(Ok(t));
            }
            Some(Err(e)) => {
                done = true;
                return Some(Err(e));
            }
            None => {
                done = true;
                if pos > i {
                    if let Some(v) = values.take() {
                        drain_into(v, &mut q);
                    }
                }
            }
        }
    })))
}

/// `collection.flatten()` (`collections.flatten`): lazy recursive traversal
/// of nested lists, sets and sequences (strings and dicts are leaves).
///
/// Matches yaql `collections.flatten` (`flatten`).
///
/// ```yaql
/// [1, [2, [3, set(4)]], 'ab', {a => [5]}].flatten()
/// # => [1, 2, 3, 4, "ab", {"a": [5]}]
/// [[1, 2], [3]].select($).flatten()
/// # => [1, 2, 3]
/// ```
fn flatten(cx: &Cx, a: Args) -> Result<Value> {
    let mut stack: Vec<SeqIter> = vec![cx.iter(a.get(0))?];
    Ok(Value::iter(std::iter::from_fn(move || loop {
        let top = stack.last_mut()?;
        match top.next() {
            None => {
                stack.pop();
            }
            Some(Err(e)) => {
                stack.clear();
                return Some(Err(e));
            }
            Some(Ok(t)) => {
                if t.is_iterable() {
                    match iterate_unlimited(&t) {
                        Ok(it) => stack.push(it),
                        Err(e) => return Some(Err(e)),
                    }
                } else {
                    return Some(Ok(t));
                }
            }
        }
    })))
}

// ---------------------------------------------------------------------------

/// Registers the group.
pub fn register(r: &mut Registry) {
    let any = || Ty::Any;
    // construction
    r.function("list", vec![var("args", any()).nullable()], list_);
    r.function("#list", vec![var("args", any()).nullable()], build_list);
    r.function("dict", vec![var("args", Ty::Pair)], dict_)
        .no_kw();
    r.function("dict", vec![p("items", Ty::Iterable)], dict_items_ctor)
        .no_kw();
    r.function("#map", vec![var("args", Ty::Pair)], dict_)
        .no_kw();
    r.method("toList", vec![p("collection", Ty::Iterable)], to_list);
    r.method("toSet", vec![p("collection", Ty::Iterable)], to_set);
    r.method(
        "toDict",
        vec![
            p("collection", Ty::Iterable),
            lazy("keySelector"),
            lazy("valueSelector"),
        ],
        to_dict2,
    );
    r.method(
        "toDict",
        vec![p("collection", Ty::Iterable), lazy("keySelector")],
        to_dict1,
    );
    r.function("set", vec![var("args", any()).nullable()], set_);

    // access
    r.function(
        "#attr",
        vec![p("dict", Ty::Mapping), p("key", Ty::Str)],
        dict_keyword_access,
    );
    r.function(
        "#indexer",
        vec![p("dict", Ty::Mapping), p("key", any()).nullable()],
        dict_indexer,
    );
    r.function(
        "#indexer",
        vec![
            p("dict", Ty::Mapping),
            p("key", any()).nullable(),
            p("default", any()).nullable(),
        ],
        dict_get,
    );
    r.function(
        "#indexer",
        vec![p("list", Ty::Sequence), p("index", Ty::Int)],
        list_indexer,
    );
    r.method(
        "get",
        vec![
            p("dict", Ty::Mapping),
            p("key", any()).nullable(),
            p("default", any()).opt(),
        ],
        dict_get,
    );
    r.method("keys", vec![p("dict", Ty::Mapping)], dict_keys);
    r.method("values", vec![p("dict", Ty::Mapping)], dict_values);
    r.method("items", vec![p("dict", Ty::Mapping)], dict_items);
    r.function(
        "#operator_in",
        vec![p("value", any()).nullable(), p("collection", Ty::Iterable)],
        in_,
    );
    r.method(
        "contains",
        vec![p("collection", Ty::Iterable), p("value", any()).nullable()],
        contains,
    );
    r.method(
        "containsKey",
        vec![p("dict", Ty::Mapping), p("key", any()).nullable()],
        contains_key,
    );
    r.method(
        "containsValue",
        vec![p("dict", Ty::Mapping), p("value", any()).nullable()],
        contains_value,
    );
    r.extension("len", vec![p("dict", Ty::Mapping)], len_);
    r.extension("len", vec![p("sequence", Ty::Sequence)], len_);
    r.extension("len", vec![p("set", Ty::Set)], len_);
    r.function("isList", vec![p("arg", any()).nullable()], is_list);
    r.function("isDict", vec![p("arg", any()).nullable()], is_dict);
    r.function("isSet", vec![p("arg", any()).nullable()], is_set);

    // operators
    r.function(
        "#operator_+",
        vec![p("left", Ty::Mapping), p("right", Ty::Mapping)],
        combine_dicts,
    );
    r.function(
        "#operator_+",
        vec![p("left", Ty::Iterable), p("right", Ty::Iterable)],
        combine_lists,
    );
    r.function(
        "#operator_*",
        vec![p("left", Ty::Sequence), p("right", Ty::Int)],
        list_by_int,
    );
    r.function(
        "#operator_*",
        vec![p("left", Ty::Int), p("right", Ty::Sequence)],
        int_by_list,
    );
    r.function(
        "#operator_-",
        vec![p("left", Ty::Set), p("right", Ty::Set)],
        difference,
    );
    let sets = || vec![p("left", Ty::Set), p("right", Ty::Set)];
    r.function("#operator_<", sets(), set_lt);
    r.function("#operator_<=", sets(), set_lte);
    r.function("#operator_>", sets(), set_gt);
    r.function("#operator_>=", sets(), set_gte);

    // set algebra
    r.method("union", sets(), union);
    r.method("intersect", sets(), intersect);
    r.method("difference", sets(), difference);
    r.method("symmetricDifference", sets(), symmetric_difference);
    r.method(
        "add",
        vec![p("set", Ty::Set), var("values", any()).nullable()],
        set_add,
    );
    r.method(
        "remove",
        vec![p("set", Ty::Set), var("values", any()).nullable()],
        set_remove,
    );

    // dict editors
    r.method(
        "set",
        vec![
            p("dict", Ty::Mapping),
            p("key", Ty::Check(not_pair)).nullable(),
            p("value", Ty::Check(not_pair)).nullable(),
        ],
        dict_set,
    )
    .no_kw();
    r.method(
        "set",
        vec![p("dict", Ty::Mapping), p("replacements", Ty::Mapping)],
        dict_set_many,
    )
    .no_kw();
    r.method(
        "set",
        vec![p("dict", Ty::Mapping), var("args", Ty::Pair)],
        dict_set_many_inline,
    )
    .no_kw();
    r.method(
        "delete",
        vec![
            p("collection", Ty::Iterable),
            p("position", Ty::Int),
            p("count", Ty::Int).default(1i64),
        ],
        delete,
    );
    r.method(
        "delete",
        vec![p("dict", Ty::Mapping), var("keys", any()).nullable()],
        delete_keys,
    );
    r.method(
        "deleteAll",
        vec![p("dict", Ty::Mapping), p("keys", Ty::Iterable)],
        delete_keys_seq,
    );

    // sequence editors
    r.method(
        "insert",
        vec![
            p("collection", Ty::Sequence),
            p("position", Ty::Int),
            p("value", any()).nullable(),
        ],
        list_insert,
    );
    r.method(
        "insert",
        vec![
            p("collection", Ty::Check(not_set_iterable)),
            p("position", Ty::Int),
            p("value", any()).nullable(),
        ],
        iter_insert,
    );
    r.method(
        "insertMany",
        vec![
            p("collection", Ty::Iterable),
            p("position", Ty::Int),
            p("values", Ty::Iterable),
        ],
        insert_many,
    );
    r.method(
        "replace",
        vec![
            p("collection", Ty::Iterable),
            p("position", Ty::Int),
            p("value", any()).nullable(),
            p("count", Ty::Int).default(1i64),
        ],
        replace,
    );
    r.method(
        "replaceMany",
        vec![
            p("collection", Ty::Iterable),
            p("position", Ty::Int),
            p("values", Ty::Iterable),
            p("count", Ty::Int).default(1i64),
        ],
        replace_many,
    );
    r.method("flatten", vec![p("collection", Ty::Iterable)], flatten);
}

#[cfg(test)]
mod tests {
    use runtime::{json, Options, Value};

    fn eval(expr: &str, data: &str) -> Result<String, String> {
        let reg = crate::registry(false);
        let prog = compiler::compile(expr, &reg, Default::default()).map_err(|e| e.to_string())?;
        let env = crate::env(Options {
            limit_iterators: Some(100),
            ..Options::default()
        });
        let data = if data.is_empty() {
            Value::Null
        } else {
            json::from_tagged_str(data).unwrap()
        };
        let v = prog
            .eval(&env, data)
            .and_then(|v| crate::finalize(&env, v))
            .map_err(|e| e.kind().to_string())?;
        Ok(json::to_tagged_string(&v))
    }

    fn ok(expr: &str, data: &str) -> String {
        eval(expr, data).unwrap_or_else(|e| panic!("{expr}: {e}"))
    }

    #[test]
    fn constructors() {
        assert_eq!(ok("list(1, 2, list(3, 4))", ""), "[1, 2, [3, 4]]");
        assert_eq!(
            ok("list(1, {a => 2, b => 3}.values(), 4)", ""),
            "[1, 2, 3, 4]"
        );
        assert_eq!(
            ok("dict(list(list(a, 1), list('b', 2)))", ""),
            r#"{"a": 1, "b": 2}"#
        );
        assert_eq!(
            ok("$.toDict($, $*$)", "[1, 2]"),
            r#"{"$dict": [[1, 1], [2, 4]]}"#
        );
        assert_eq!(ok("len(set(1, 2, 2, 1.0))", ""), "2");
        assert_eq!(eval("{1}", "").unwrap_err(), "NoMatchingFunctionException");
    }

    #[test]
    fn indexing_and_access() {
        assert_eq!(ok("$[-1]", "[1, 2, 3]"), "3");
        assert_eq!(eval("$[3]", "[1, 2, 3]").unwrap_err(), "IndexError");
        assert_eq!(
            eval("$[a]", "[1, 2, 3]").unwrap_err(),
            "NoMatchingFunctionException"
        );
        assert_eq!(ok("$[c, 55]", r#"{"a": 1}"#), "55");
        assert_eq!(eval("$.b", r#"{"a": 1}"#).unwrap_err(), "KeyError");
        assert_eq!(
            eval("[1, 2].delete(0)[0]", "").unwrap_err(),
            "NoMatchingFunctionException"
        );
    }

    #[test]
    fn editors() {
        assert_eq!(ok("[1, 2].insert(-1, a)", ""), r#"[1, "a", 2]"#);
        assert_eq!(ok("{x => 1, y => 2}.values().insert(-1, a)", ""), "[1, 2]");
        assert_eq!(
            ok("[1, 2].insertMany(-1, [a, b])", ""),
            r#"["a", "b", 1, 2]"#
        );
        assert_eq!(
            ok("[1, 2, 3, 4].replaceMany(1, [7, 8], -1)", ""),
            "[1, 7, 8]"
        );
        assert_eq!(ok("[1, 2, 3, 4].delete(1, -1)", ""), "[1]");
        assert_eq!(
            ok("$.set('a' => 55, 'd x' => 99)", r#"{"a": 12, "b": 1}"#),
            r#"{"a": 55, "b": 1, "d x": 99}"#
        );
        assert_eq!(
            ok("$.delete(a)", r#"{"a": 1, "b": 2, "c": 3}"#),
            r#"{"b": 2, "c": 3}"#
        );
        assert_eq!(
            ok("[1, [2, [3, set(4)]], 'ab'].flatten()", ""),
            r#"[1, 2, 3, 4, "ab"]"#
        );
    }

    #[test]
    fn operators() {
        assert_eq!(ok("[1, 2] * 2", ""), "[1, 2, 1, 2]");
        assert_eq!(ok("{a => 1, b => 2} + {b => 3}", ""), r#"{"a": 1, "b": 3}"#);
        assert_eq!(ok("set(1, 2) < set(1, 2, 3)", ""), "true");
        assert_eq!(ok("set(1, 2) <= set(1, 3)", ""), "false");
        assert_eq!(ok("isSet(set(1, 2) - set(2))", ""), "true");
        assert_eq!(ok("[1, 2] in set([1, 2], 5)", ""), "true");
        assert_eq!(
            eval("a in $", r#"{"a": 1}"#).unwrap_err(),
            "NoMatchingFunctionException"
        );
    }
}
