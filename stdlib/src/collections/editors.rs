//! The copy-on-write editors: dict `set`, `delete` and `deleteAll`, and
//! the sequence editors (generators in the reference): `delete`,
//! `replace`, `replaceMany`, `insert`, `insertMany`, `flatten`.

use super::common::*;
use runtime::registry::{p, var, Args, Cx, Registry, Ty};
use std::collections::VecDeque;

use runtime::seq::{iterate_unlimited, SeqIter};
use runtime::{Error, Result, Value};

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
pub(super) fn dict_set(_: &Cx, a: Args) -> Result<Value> {
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
pub(super) fn dict_set_many(_: &Cx, a: Args) -> Result<Value> {
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
pub(super) fn dict_set_many_inline(_: &Cx, a: Args) -> Result<Value> {
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
pub(super) fn delete_keys(_: &Cx, a: Args) -> Result<Value> {
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
pub(super) fn delete_keys_seq(cx: &Cx, a: Args) -> Result<Value> {
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
pub(super) fn delete(cx: &Cx, a: Args) -> Result<Value> {
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
pub(super) fn replace(cx: &Cx, a: Args) -> Result<Value> {
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
pub(super) fn replace_many(cx: &Cx, a: Args) -> Result<Value> {
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
pub(super) fn list_insert(_: &Cx, a: Args) -> Result<Value> {
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
pub(super) fn iter_insert(cx: &Cx, a: Args) -> Result<Value> {
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
pub(super) fn insert_many(cx: &Cx, a: Args) -> Result<Value> {
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
pub(super) fn flatten(cx: &Cx, a: Args) -> Result<Value> {
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

/// Registers this part of the group.
pub(super) fn register(r: &mut Registry) {
    let any = || Ty::Any;
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
