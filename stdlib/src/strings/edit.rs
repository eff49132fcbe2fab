//! Trimming, normalising, replacing and repetition.

use super::basic::opt_str;
use super::text::*;
use runtime::pyrepr::to_str;
use runtime::registry::{p, Args, Cx, Registry, Ty};
use runtime::{Result, Value};

/// `strings.trim`: Python `str.strip(chars)`.
///
/// Matches yaql `strings.trim` (`trim`).
///
/// ```yaql
/// '  abcd \n'.trim()
/// # => "abcd"
/// 'aababa'.trim('a')
/// # => "bab"
/// ```
pub(super) fn trim(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::from(py_strip(
        a.str(0),
        opt_str(a.get(1)),
        true,
        true,
    )))
}

/// `strings.trim_left`: Python `str.lstrip(chars)`.
///
/// Matches yaql `strings.trim_left` (`trimLeft`).
///
/// ```yaql
/// '  abcd '.trimLeft()
/// # => "abcd "
/// 'aababa'.trimLeft('a')
/// # => "baba"
/// ```
pub(super) fn trim_left(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::from(py_strip(
        a.str(0),
        opt_str(a.get(1)),
        true,
        false,
    )))
}

/// `strings.trim_right`: Python `str.rstrip(chars)`.
///
/// Matches yaql `strings.trim_right` (`trimRight`).
///
/// ```yaql
/// '  abcd '.trimRight()
/// # => "  abcd"
/// 'aababa'.trimRight('a')
/// # => "aabab"
/// ```
pub(super) fn trim_right(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::from(py_strip(
        a.str(0),
        opt_str(a.get(1)),
        false,
        true,
    )))
}

/// `strings.norm`: strip, and null when the result is empty.
///
/// Matches yaql `strings.norm` (`norm`, an extension method).
///
/// ```yaql
/// '  abcd '.norm()
/// # => "abcd"
/// 'aaaa'.norm('a')
/// # => null
/// norm(null)
/// # => null
/// ```
pub(super) fn norm(_: &Cx, a: Args) -> Result<Value> {
    let Some(s) = a.get(0).as_str() else {
        return Ok(Value::Null);
    };
    let r = py_strip(s, opt_str(a.get(1)), true, true);
    Ok(if r.is_empty() {
        Value::Null
    } else {
        Value::from(r)
    })
}

/// `strings.is_empty`: true for null or a string empty after trimming.
///
/// Matches yaql `strings.is_empty` (`isEmpty`, an extension method; the
/// `trimSpaces` parameter is spelled `trim`).
///
/// ```yaql
/// isEmpty(null)
/// # => true
/// '  '.isEmpty()
/// # => true
/// '  '.isEmpty(trim => false)
/// # => false
/// 'abaab'.isEmpty(chars => 'ab')
/// # => true
/// ```
pub(super) fn is_empty(_: &Cx, a: Args) -> Result<Value> {
    let Some(s) = a.get(0).as_str() else {
        return Ok(Value::Bool(true));
    };
    let s = if a.bool(1) {
        py_strip(s, opt_str(a.get(2)), true, true)
    } else {
        s
    };
    Ok(Value::Bool(s.is_empty()))
}

/// `strings.replace`: Python `str.replace(old, new, count)`.
///
/// Matches yaql `strings.replace` (`string.replace(old, new, count => -1)`).
///
/// ```yaql
/// 'abaab'.replace('ab', 'cd')
/// # => "cdacd"
/// 'aaa'.replace('a', 'b', 2)
/// # => "bba"
/// 'abc'.replace('', '-')
/// # => "-a-b-c-"
/// ```
pub(super) fn replace(cx: &Cx, a: Args) -> Result<Value> {
    let (text, old, new) = (a.str(0), a.str(1), a.str(2));
    guard_replace(cx, text, old, new)?;
    Ok(Value::str(py_replace(text, old, new, a.int(3)?)))
}

/// Bounds the result of replacing `old` by `new` everywhere in `text`
/// before building it.
fn guard_replace(cx: &Cx, text: &str, old: &str, new: &str) -> Result<()> {
    if new.len() <= old.len() {
        return Ok(());
    }
    let n = if old.is_empty() {
        text.chars().count() + 1
    } else {
        super::count_matches(text, old)
    };
    guard_size(
        cx,
        text.len()
            .saturating_add(n.saturating_mul(new.len() - old.len())),
    )
}

/// `strings.replace_with_dict`: replaces every key (through `str()`) in turn.
///
/// Matches yaql `strings.replace_with_dict` (`string.replace(replacements,
/// count => -1)`): keys are applied in dict order, so earlier replacements
/// affect later ones.
///
/// ```yaql
/// 'abc ab abc'.replace({abc => xx, ab => yy})
/// # => "xx yy xx"
/// 'abc ab abc'.replace({ab => yy, abc => xx})
/// # => "yyc yy yyc"
/// 'abc ab abc'.replace({ab => yy, abc => xx}, 1)
/// # => "yyc ab xx"
/// 'a1'.replace({1 => 2})
/// # => "a2"
/// ```
pub(super) fn replace_with_dict(cx: &Cx, a: Args) -> Result<Value> {
    let mut s = a.str(0).to_string();
    let count = a.int(2)?;
    if let Value::Dict(d) = a.get(1) {
        for (k, v) in d.iter() {
            let (old, new) = (to_str(k), to_str(v));
            guard_replace(cx, &s, &old, &new)?;
            s = py_replace(&s, &old, &new, count);
        }
    }
    Ok(Value::str(s))
}

pub(super) fn repeat(cx: &Cx, s: &str, n: i64) -> Result<Value> {
    check_repeat_memory(cx, s, n)?;
    Ok(Value::str(if n <= 0 {
        String::new()
    } else {
        s.repeat(n as usize)
    }))
}

/// `strings.string_by_int`: `string * int`.
///
/// Matches yaql `strings.string_by_int` (`#operator_*` with the string on the
/// left); a count of zero or less gives an empty string.
///
/// ```yaql
/// 'ab' * 3
/// # => "ababab"
/// 'ab' * -1
/// # => ""
/// ```
pub(super) fn string_by_int(cx: &Cx, a: Args) -> Result<Value> {
    repeat(cx, a.str(0), a.int(1)?)
}

/// `strings.int_by_string`: `int * string`.
///
/// Matches yaql `strings.int_by_string` (`#operator_*` with the count on the
/// left; booleans count as integers).
///
/// ```yaql
/// 2 * 'ab'
/// # => "abab"
/// true * 'ab'
/// # => "ab"
/// ```
pub(super) fn int_by_string(cx: &Cx, a: Args) -> Result<Value> {
    repeat(cx, a.str(1), a.int(0)?)
}

/// Registers this part of the group.
pub(super) fn register(r: &mut Registry) {
    let s = |n: &str| p(n, Ty::Str);
    let sn = |n: &str| p(n, Ty::Str).nullable().default(Value::Null);
    r.method("trim", vec![s("string"), sn("chars")], trim)
        .pure_();
    r.method("trimLeft", vec![s("string"), sn("chars")], trim_left)
        .pure_();
    r.method("trimRight", vec![s("string"), sn("chars")], trim_right)
        .pure_();
    r.method(
        "replace",
        vec![
            s("string"),
            s("old"),
            s("new"),
            p("count", Ty::Int).default(-1i64),
        ],
        replace,
    )
    .pure_();
    r.method(
        "replace",
        vec![
            s("string"),
            p("replacements", Ty::Mapping),
            p("count", Ty::Int).default(-1i64),
        ],
        replace_with_dict,
    )
    .pure_();
    r.extension(
        "isEmpty",
        vec![
            p("string", Ty::Str).nullable(),
            p("trim", Ty::Bool).default(true),
            sn("chars"),
        ],
        is_empty,
    )
    .pure_();
    r.function(
        "#operator_*",
        vec![s("left"), p("right", Ty::Int)],
        string_by_int,
    );
    r.function(
        "#operator_*",
        vec![p("left", Ty::Int), s("right")],
        int_by_string,
    );
    r.extension(
        "norm",
        vec![p("string", Ty::Str).nullable(), sn("chars")],
        norm,
    )
    .pure_();
}
