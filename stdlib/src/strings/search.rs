//! Membership, slicing and searching (`in`, `substring`, `indexOf`,
//! `lastIndexOf`), characters, `isString`, `startsWith`/`endsWith` and
//! `hex`.

use super::text::*;
use num_bigint::BigInt;
use num_traits::{Signed, Zero};
use runtime::registry::{p, var, Args, Cx, Registry, Ty};
use runtime::ErrorKind;
use runtime::{Error, Result, Value};

/// `strings.in_`: substring test.
///
/// Matches yaql `strings.in_` (`#operator_in` on two strings).
///
/// ```yaql
/// 'ab' in 'abc'
/// # => true
/// 'ab' in 'acb'
/// # => false
/// '' in 'abc'
/// # => true
/// ```
pub(super) fn in_(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Bool(a.str(1).contains(a.str(0))))
}

/// `strings.substring`: `string[start:start + length]` on code points.
///
/// Matches yaql `strings.substring` (`substring`). A negative start counts
/// from the end; a negative length means "to the end".
///
/// ```yaql
/// 'abcd'.substring(1)
/// # => "bcd"
/// 'abcd'.substring(1, 2)
/// # => "bc"
/// 'abcdef'.substring(-3, 2)
/// # => "de"
/// 'abc'.substring(5)
/// # => ""
/// ```
pub(super) fn substring(_: &Cx, a: Args) -> Result<Value> {
    let s = a.str(0);
    let len = char_len(s) as i64;
    let mut start = a.int(1)?;
    let mut length = a.int(2)?;
    if length < 0 {
        length = len;
    }
    if start < 0 {
        start += len;
    }
    Ok(Value::str(py_slice(s, start, start.saturating_add(length))))
}

/// `strings.index_of`: Python `str.find(sub, start)`.
///
/// Matches yaql `strings.index_of` (`indexOf(sub, start => 0)`).
///
/// ```yaql
/// 'cabcdab'.indexOf('ab')
/// # => 1
/// 'cabcdab'.indexOf('ab', 2)
/// # => 5
/// 'cabcdab'.indexOf('ab', 6)
/// # => -1
/// ```
pub(super) fn index_of(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Int(py_find(a.str(0), a.str(1), a.int(2)?, None)))
}

fn start_end(s: &str, a: &Args) -> Result<(i64, i64)> {
    let len = char_len(s) as i64;
    let mut start = a.int(2)?;
    let mut length = a.int(3)?;
    if start < 0 {
        start += len;
    }
    if length < 0 {
        length = len - start;
    }
    Ok((start, start.saturating_add(length)))
}

/// `strings.index_of_`: `find(sub, start, start + length)`.
///
/// Matches yaql `strings.index_of_` (`indexOf(sub, start, length)`): searches
/// `string[start:start + length]`; a negative length means "to the end".
///
/// ```yaql
/// 'cabcdab'.indexOf('bc', 2, 2)
/// # => 2
/// 'abcabc'.indexOf('c', 0, 2)
/// # => -1
/// 'abcabc'.indexOf('c', 3, -1)
/// # => 5
/// ```
pub(super) fn index_of_(_: &Cx, a: Args) -> Result<Value> {
    let s = a.str(0);
    let (st, en) = start_end(s, &a)?;
    Ok(Value::Int(py_find(s, a.str(1), st, Some(en))))
}

/// `strings.last_index_of`: Python `str.rfind(sub, start)`.
///
/// Matches yaql `strings.last_index_of` (`lastIndexOf(sub, start => 0)`).
///
/// ```yaql
/// 'cabcdab'.lastIndexOf('ab')
/// # => 5
/// 'abcabc'.lastIndexOf('x')
/// # => -1
/// ```
pub(super) fn last_index_of(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Int(py_rfind(a.str(0), a.str(1), a.int(2)?, None)))
}

/// `strings.last_index_of_`: `rfind(sub, start, start + length)`.
///
/// Matches yaql `strings.last_index_of_` (`lastIndexOf(sub, start, length)`).
///
/// ```yaql
/// 'cabcdbc'.lastIndexOf('bc', 2, 5)
/// # => 5
/// 'abcabc'.lastIndexOf('c', 1, 2)
/// # => 2
/// ```
pub(super) fn last_index_of_(_: &Cx, a: Args) -> Result<Value> {
    let s = a.str(0);
    let (st, en) = start_end(s, &a)?;
    Ok(Value::Int(py_rfind(s, a.str(1), st, Some(en))))
}

/// `strings.to_char_array`: tuple of one-character strings.
///
/// Matches yaql `strings.to_char_array` (`toCharArray`).
///
/// ```yaql
/// 'abc de'.toCharArray()
/// # => ["a", "b", "c", " ", "d", "e"]
/// ''.toCharArray()
/// # => []
/// ```
pub(super) fn to_char_array(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::list(
        a.str(0)
            .chars()
            .map(|c| Value::str(c.to_string()))
            .collect(),
    ))
}

/// `strings.characters`: distinct characters of the selected classes.
///
/// Matches yaql `strings.characters` (`characters`). The result comes from a
/// Python set, so its order is unspecified; the Python 2 only classes
/// (`letters`, `lowercase`, `uppercase`) raise `AttributeError`.
///
/// ```yaql
/// characters(digits => true, octdigits => true).orderBy($)
/// # => ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"]
/// characters(whitespace => true).len()
/// # => 6
/// characters()
/// # => []
/// characters(letters => true)
/// # error: AttributeError
/// ```
pub(super) fn characters(_: &Cx, a: Args) -> Result<Value> {
    const PUNCT: &str = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
    const WS: &str = " \t\n\r\x0b\x0c";
    const LOWER: &str = "abcdefghijklmnopqrstuvwxyz";
    const UPPER: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    let printable = format!("0123456789{LOWER}{UPPER}{PUNCT}{WS}");
    let letters = format!("{LOWER}{UPPER}");
    let parts: [(Option<&str>, &str); 12] = [
        (Some("0123456789"), "digits"),
        (Some("0123456789abcdefABCDEF"), "hexdigits"),
        (Some(LOWER), "ascii_lowercase"),
        (Some(UPPER), "ascii_uppercase"),
        (Some(&letters), "ascii_letters"),
        (None, "letters"),
        (Some("01234567"), "octdigits"),
        (Some(PUNCT), "punctuation"),
        (Some(&printable), "printable"),
        (None, "lowercase"),
        (None, "uppercase"),
        (Some(WS), "whitespace"),
    ];
    let mut seen = runtime::Set::default();
    for (i, (chars, name)) in parts.iter().enumerate() {
        if !a.bool(i) {
            continue;
        }
        let Some(chars) = chars else {
            return Err(Error::new(
                ErrorKind::AttributeError,
                format!("module 'string' has no attribute '{name}'"),
            ));
        };
        for c in chars.chars() {
            seen.insert(Value::str(c.to_string()));
        }
    }
    Ok(Value::list(seen.into_iter().collect()))
}

/// `strings.is_string`.
///
/// Matches yaql `strings.is_string` (`isString`).
///
/// ```yaql
/// isString('ab')
/// # => true
/// isString(1)
/// # => false
/// isString(null)
/// # => false
/// ```
pub(super) fn is_string(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Bool(matches!(a.get(0), Value::Str(_))))
}

/// `strings.starts_with`: true when the string starts with any argument.
///
/// Matches yaql `strings.starts_with` (`startsWith`).
///
/// ```yaql
/// 'abcd'.startsWith('ab', 'xx')
/// # => true
/// 'abcd'.startsWith('yy', 'xx', 'zz')
/// # => false
/// ```
pub(super) fn starts_with(_: &Cx, a: Args) -> Result<Value> {
    let s = a.str(0);
    Ok(Value::Bool(
        a.rest
            .iter()
            .any(|p| s.starts_with(p.as_str().unwrap_or(""))),
    ))
}

/// `strings.ends_with`: true when the string ends with any argument.
///
/// Matches yaql `strings.ends_with` (`endsWith`).
///
/// ```yaql
/// 'abcd'.endsWith('cd', 'xx')
/// # => true
/// 'abcd'.endsWith('yy', 'xx', 'zz')
/// # => false
/// ```
pub(super) fn ends_with(_: &Cx, a: Args) -> Result<Value> {
    let s = a.str(0);
    Ok(Value::Bool(
        a.rest.iter().any(|p| s.ends_with(p.as_str().unwrap_or(""))),
    ))
}

/// `strings.hex_`: Python `hex(num)` (integers only).
///
/// Matches yaql `strings.hex_` (`hex`). Floats and null pass the `Number`
/// check but Python `hex()` rejects them; booleans do not match.
///
/// ```yaql
/// hex(256)
/// # => "0x100"
/// hex(-42)
/// # => "-0x2a"
/// hex(1.5)
/// # error: TypeError
/// hex(true)
/// # error: NoMatchingFunctionException
/// ```
pub(super) fn hex_(_: &Cx, a: Args) -> Result<Value> {
    let n = match a.get(0) {
        Value::Int(i) => BigInt::from(*i),
        Value::BigInt(b) => (**b).clone(),
        other => {
            return Err(Error::type_(format!(
                "'{}' object cannot be interpreted as an integer",
                other.type_name()
            )))
        }
    };
    let digits = n.abs().to_str_radix(16);
    Ok(Value::str(if n.is_negative() {
        format!("-0x{digits}")
    } else if n.is_zero() {
        "0x0".to_string()
    } else {
        format!("0x{digits}")
    }))
}

/// Registers this part of the group.
pub(super) fn register(r: &mut Registry) {
    let s = |n: &str| p(n, Ty::Str);
    let flag = |n: &str| p(n, Ty::Bool).nullable().default(false);
    r.method(
        "substring",
        vec![
            s("string"),
            p("start", Ty::Int),
            p("length", Ty::Int).default(-1i64),
        ],
        substring,
    )
    .pure_();
    r.method(
        "indexOf",
        vec![s("string"), s("sub"), p("start", Ty::Int).default(0i64)],
        index_of,
    )
    .pure_();
    r.method(
        "indexOf",
        vec![
            s("string"),
            s("sub"),
            p("start", Ty::Int),
            p("length", Ty::Int),
        ],
        index_of_,
    )
    .pure_();
    r.method(
        "lastIndexOf",
        vec![s("string"), s("sub"), p("start", Ty::Int).default(0i64)],
        last_index_of,
    )
    .pure_();
    r.method(
        "lastIndexOf",
        vec![
            s("string"),
            s("sub"),
            p("start", Ty::Int),
            p("length", Ty::Int),
        ],
        last_index_of_,
    )
    .pure_();
    r.method("toCharArray", vec![s("string")], to_char_array)
        .pure_();
    r.function(
        "characters",
        vec![
            flag("digits"),
            flag("hexdigits"),
            flag("asciiLowercase"),
            flag("asciiUppercase"),
            flag("asciiLetters"),
            flag("letters"),
            flag("octdigits"),
            flag("punctuation"),
            flag("printable"),
            flag("lowercase"),
            flag("uppercase"),
            flag("whitespace"),
        ],
        characters,
    )
    .pure_();
    r.function("isString", vec![p("arg", Ty::Any).nullable()], is_string)
        .pure_();
    r.function("#operator_in", vec![s("left"), s("right")], in_)
        .pure_();
    r.method(
        "startsWith",
        vec![s("string"), var("prefixes", Ty::Str)],
        starts_with,
    )
    .pure_();
    r.method(
        "endsWith",
        vec![s("string"), var("suffixes", Ty::Str)],
        ends_with,
    )
    .pure_();
    r.function("hex", vec![p("num", Ty::Number).nullable()], hex_)
        .pure_();
}
