//! Comparison, `len`, case, splitting, joining, `str` and concatenation.

use super::text::*;
use runtime::pyrepr::to_str;
use runtime::registry::{p, var, Args, Cx, Registry, Ty};
use runtime::{Result, Value};

pub(super) fn opt_str(v: &Value) -> Option<&str> {
    v.as_str()
}

/// `strings.gt`: `left > right` on strings.
///
/// Matches yaql `strings.gt` (`#operator_>`). Code points are compared one by
/// one, so a longer string can be smaller.
///
/// ```yaql
/// 'b' > 'abc'
/// # => true
/// 'abc' > 'abd'
/// # => false
/// ```
pub(super) fn gt(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Bool(a.str(0) > a.str(1)))
}
/// `strings.lt`: `left < right` on strings.
///
/// Matches yaql `strings.lt` (`#operator_<`). Uppercase letters sort before
/// lowercase ones (code point order).
///
/// ```yaql
/// 'Z' < 'a'
/// # => true
/// 'abc' < 'abc'
/// # => false
/// ```
pub(super) fn lt(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Bool(a.str(0) < a.str(1)))
}
/// `strings.gte`: `left >= right` on strings.
///
/// Matches yaql `strings.gte` (`#operator_>=`).
///
/// ```yaql
/// 'abc' >= 'abc'
/// # => true
/// 'ab' >= 'abc'
/// # => false
/// ```
pub(super) fn gte(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Bool(a.str(0) >= a.str(1)))
}
/// `strings.lte`: `left <= right` on strings.
///
/// Matches yaql `strings.lte` (`#operator_<=`).
///
/// ```yaql
/// 'ab' <= 'abc'
/// # => true
/// 'b' <= 'a'
/// # => false
/// ```
pub(super) fn lte(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Bool(a.str(0) <= a.str(1)))
}

/// `strings.len_`: number of code points.
///
/// Matches yaql `strings.len_` (`len`, an extension method). Counts code
/// points, not bytes.
///
/// ```yaql
/// 'aбв'.len()
/// # => 3
/// len('')
/// # => 0
/// ```
pub(super) fn len_(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Int(char_len(a.str(0)) as i64))
}

/// `strings.to_lower`: Python `str.lower()`.
///
/// Matches yaql `strings.to_lower` (`toLower`).
///
/// ```yaql
/// 'AB1c ПрИвЕт'.toLower()
/// # => "ab1c привет"
/// ```
pub(super) fn to_lower(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::str(a.str(0).to_lowercase()))
}

/// `strings.to_upper`: Python `str.upper()` (`ß` -> `SS`).
///
/// Matches yaql `strings.to_upper` (`toUpper`).
///
/// ```yaql
/// 'abc'.toUpper()
/// # => "ABC"
/// 'straße'.toUpper()
/// # => "STRASSE"
/// ```
pub(super) fn to_upper(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::str(a.str(0).to_uppercase()))
}

/// `strings.split`: Python `str.split(separator, maxSplits)`.
///
/// Matches yaql `strings.split` (`split`). Without a separator, runs of
/// whitespace split and leading/trailing whitespace is dropped; an empty
/// separator is a `ValueError`.
///
/// ```yaql
/// '  abc     de  f '.split()
/// # => ["abc", "de", "f"]
/// 'a,b,,c'.split(',')
/// # => ["a", "b", "", "c"]
/// 'abc     de  f'.split(maxSplits => 1)
/// # => ["abc", "de  f"]
/// 'abc'.split('')
/// # error: ValueError
/// ```
pub(super) fn split(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::list(py_split(
        a.str(0),
        opt_str(a.get(1)),
        a.int(2)?,
    )?))
}

/// `strings.right_split`: Python `str.rsplit(separator, maxSplits)`.
///
/// Matches yaql `strings.right_split` (`rightSplit`): like `split`, but
/// `maxSplits` counts from the right.
///
/// ```yaql
/// 'a,b,c'.rightSplit(',', 1)
/// # => ["a,b", "c"]
/// 'abc     de  f'.rightSplit(maxSplits => 1)
/// # => ["abc     de", "f"]
/// ```
pub(super) fn right_split(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::list(py_rsplit(
        a.str(0),
        opt_str(a.get(1)),
        a.int(2)?,
    )?))
}

fn join_impl(cx: &Cx, seq: &Value, sep: &str) -> Result<Value> {
    let mut out = String::new();
    for (i, x) in cx.iter(seq)?.enumerate() {
        let x = x?;
        let piece = match &x {
            Value::Str(s) => std::borrow::Cow::Borrowed(&**s),
            other => std::borrow::Cow::Owned(to_str(other)),
        };
        let sep = if i > 0 { sep } else { "" };
        guard_size(cx, out.len() + sep.len() + piece.len())?;
        out.push_str(sep);
        out.push_str(&piece);
    }
    Ok(Value::str(out))
}

/// `strings.join`: `sequence.join(separator)`, elements through `str()`.
///
/// Matches yaql `strings.join` (`sequence.join(separator)`); elements go
/// through yaql `str()`.
///
/// ```yaql
/// ['abc', 'de', 'f'].join('|')
/// # => "abc|de|f"
/// [1, 'a', null, true].join('-')
/// # => "1-a-null-true"
/// [].join(',')
/// # => ""
/// ```
pub(super) fn join(cx: &Cx, a: Args) -> Result<Value> {
    join_impl(cx, a.get(0), a.str(1))
}

/// `strings.join_`: `separator.join(sequence)`.
///
/// Matches yaql `strings.join_` (`separator.join(sequence)`). A string is not
/// accepted as the sequence.
///
/// ```yaql
/// '|'.join(['abc', 'de', 'f'])
/// # => "abc|de|f"
/// ', '.join('abc')
/// # error: NoMatchingMethodException
/// ```
pub(super) fn join_(cx: &Cx, a: Args) -> Result<Value> {
    join_impl(cx, a.get(1), a.str(0))
}

/// `strings.str_`: yaql `str()` (`null`, `true`, Python reprs of collections).
///
/// Matches yaql `strings.str_` (`str`): `null`/`true`/`false` are spelled the
/// yaql way, everything else goes through Python `str()` (lists are tuples).
///
/// ```yaql
/// str(null)
/// # => "null"
/// str(false)
/// # => "false"
/// str(1.0)
/// # => "1.0"
/// str([1, 'a', null])
/// # => "(1, 'a', None)"
/// ```
pub(super) fn str_(_: &Cx, a: Args) -> Result<Value> {
    Ok(match a.get(0) {
        Value::Str(s) => Value::Str(s.clone()),
        v => Value::str(to_str(v)),
    })
}

/// `strings.concat` (also `#operator_+` on strings).
///
/// Matches yaql `strings.concat` (`concat`, also registered as `#operator_+`
/// for strings).
///
/// ```yaql
/// concat('abc', 'de', 'f')
/// # => "abcdef"
/// concat()
/// # => ""
/// 'a' + 'b'
/// # => "ab"
/// 'a' + 1
/// # error: NoMatchingFunctionException
/// ```
pub(super) fn concat(cx: &Cx, a: Args) -> Result<Value> {
    guard_size(
        cx,
        a.rest.iter().map(|x| x.as_str().map_or(0, str::len)).sum(),
    )?;
    let mut out = String::new();
    for x in &a.rest {
        out.push_str(x.as_str().unwrap_or(""));
    }
    Ok(Value::str(out))
}

/// Registers this part of the group.
pub(super) fn register(r: &mut Registry) {
    let s = |n: &str| p(n, Ty::Str);
    let sn = |n: &str| p(n, Ty::Str).nullable().default(Value::Null);
    r.function("#operator_>", vec![s("left"), s("right")], gt)
        .pure_();
    r.function("#operator_<", vec![s("left"), s("right")], lt)
        .pure_();
    r.function("#operator_>=", vec![s("left"), s("right")], gte)
        .pure_();
    r.function("#operator_<=", vec![s("left"), s("right")], lte)
        .pure_();
    r.extension("len", vec![s("string")], len_).pure_();
    r.method("toLower", vec![s("string")], to_lower).pure_();
    r.method("toUpper", vec![s("string")], to_upper).pure_();
    r.method(
        "split",
        vec![
            s("string"),
            sn("separator"),
            p("maxSplits", Ty::Int).default(-1i64),
        ],
        split,
    )
    .pure_();
    r.method(
        "rightSplit",
        vec![
            s("string"),
            sn("separator"),
            p("maxSplits", Ty::Int).default(-1i64),
        ],
        right_split,
    )
    .pure_();
    r.method(
        "join",
        vec![p("sequence", Ty::Iterable), s("separator")],
        join,
    );
    r.method(
        "join",
        vec![s("separator"), p("sequence", Ty::Iterable)],
        join_,
    );
    r.function("str", vec![p("value", Ty::Any).nullable()], str_)
        .pure_();
    r.function("concat", vec![var("args", Ty::Str)], concat)
        .pure_();
    r.function("#operator_+", vec![var("args", Ty::Str)], concat)
        .pure_();
}
