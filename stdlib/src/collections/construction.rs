//! Construction: `list`, `#list`, `set`, `toList`, `toSet`, `dict`,
//! `#map`, `toDict`.

use super::common::*;
use runtime::registry::{lazy, p, var, Args, Cx, Registry, Ty};
use runtime::ErrorKind;

use runtime::seq::iterate_unlimited;
use runtime::{Dict, Error, Result, Value};

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
pub(super) fn list_(cx: &Cx, a: Args) -> Result<Value> {
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
pub(super) fn build_list(_: &Cx, a: Args) -> Result<Value> {
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
pub(super) fn set_(cx: &Cx, a: Args) -> Result<Value> {
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
pub(super) fn to_list(cx: &Cx, a: Args) -> Result<Value> {
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
pub(super) fn to_set(cx: &Cx, a: Args) -> Result<Value> {
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
pub(super) fn dict_(_: &Cx, a: Args) -> Result<Value> {
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
pub(super) fn dict_items_ctor(cx: &Cx, a: Args) -> Result<Value> {
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
pub(super) fn to_dict2(cx: &Cx, a: Args) -> Result<Value> {
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
pub(super) fn to_dict1(cx: &Cx, a: Args) -> Result<Value> {
    let mut d = Dict::default();
    for t in cx.iter(a.get(0))? {
        let t = t?;
        let k = cx.call(a.get(1), std::slice::from_ref(&t))?;
        d.insert(k, t);
    }
    Ok(Value::dict(d))
}

/// Registers this part of the group.
pub(super) fn register(r: &mut Registry) {
    let any = || Ty::Any;
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
}
