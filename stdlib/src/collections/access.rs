//! Access: `#indexer`, `x.key`, `get`, `keys`, `values`, `items`, `in`,
//! `contains*`, `len` and the type tests.

use super::common::*;
use runtime::registry::{p, Args, Cx, Registry, Ty};
use std::sync::Arc;

use runtime::{Dict, Error, Result, Value};

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
pub(super) fn dict_keyword_access(_: &Cx, a: Args) -> Result<Value> {
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
pub(super) fn dict_indexer(_: &Cx, a: Args) -> Result<Value> {
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
pub(super) fn dict_get(_: &Cx, a: Args) -> Result<Value> {
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
pub(super) fn list_indexer(_: &Cx, a: Args) -> Result<Value> {
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
pub(super) fn dict_keys(_: &Cx, a: Args) -> Result<Value> {
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
pub(super) fn dict_values(_: &Cx, a: Args) -> Result<Value> {
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
pub(super) fn dict_items(_: &Cx, a: Args) -> Result<Value> {
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
pub(super) fn in_(cx: &Cx, a: Args) -> Result<Value> {
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
pub(super) fn contains(cx: &Cx, a: Args) -> Result<Value> {
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
pub(super) fn contains_key(_: &Cx, a: Args) -> Result<Value> {
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
pub(super) fn contains_value(_: &Cx, a: Args) -> Result<Value> {
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
pub(super) fn len_(_: &Cx, a: Args) -> Result<Value> {
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
pub(super) fn is_list(_: &Cx, a: Args) -> Result<Value> {
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
pub(super) fn is_dict(_: &Cx, a: Args) -> Result<Value> {
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
pub(super) fn is_set(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Bool(matches!(a.get(0), Value::Set(_))))
}

/// Registers this part of the group.
pub(super) fn register(r: &mut Registry) {
    let any = || Ty::Any;
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
}
