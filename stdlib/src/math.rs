//! `yaql/standard_library/math.py`: arithmetic operators on numbers,
//! comparisons, conversions (`int`, `float`), `round`, `pow`, bitwise
//! functions, `max`/`min` of two values and `random`.
//!
//! Numbers follow Python: integers are exact (i64 promoting to big
//! integers), `/` on two integers is floor division, floats are IEEE
//! doubles. The number parameters exclude booleans (`yaqltypes.Number`),
//! while the bitwise functions take Python `int`, which accepts booleans.

use runtime::ErrorKind;
use std::cmp::Ordering;

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, Signed, ToPrimitive, Zero};
use runtime::registry::{p, ArgIn, Args, Cx, Form, Registry, Ty};
use runtime::value::num_cmp;
use runtime::{num, Env, Error, Result, Value};

// ---------------------------------------------------------------------------
// helpers

fn big(v: &Value) -> BigInt {
    v.as_bigint().unwrap_or_default()
}

fn overflow(msg: &str) -> Error {
    Error::new(ErrorKind::OverflowError, msg)
}

/// A finite float as an exact `m * 2^e`.
fn float_ratio(f: f64) -> (BigInt, i64) {
    let bits = f.to_bits();
    let neg = bits >> 63 != 0;
    let exp = ((bits >> 52) & 0x7ff) as i64;
    let frac = bits & ((1u64 << 52) - 1);
    let (m, e) = if exp == 0 {
        (frac, -1074)
    } else {
        (frac | (1u64 << 52), exp - 1075)
    };
    let m = BigInt::from(m);
    (if neg { -m } else { m }, e)
}

/// Python `int(f)` for a float: truncation towards zero, exact.
fn float_to_int(f: f64) -> Result<Value> {
    if f.is_nan() {
        return Err(Error::value("cannot convert float NaN to integer"));
    }
    if f.is_infinite() {
        return Err(overflow("cannot convert float infinity to integer"));
    }
    if f.abs() < 9.0e18 {
        return Ok(Value::Int(f.trunc() as i64));
    }
    let (m, e) = float_ratio(f);
    // |f| >= 9e18 means e >= 0 here.
    Ok(Value::from_bigint(m << (e as usize)))
}

/// Python float conversion of an int (`OverflowError` when too large).
fn to_float(v: &Value) -> Result<f64> {
    match v {
        Value::BigInt(b) => b
            .to_f64()
            .filter(|f| f.is_finite())
            .ok_or_else(|| overflow("int too large to convert to float")),
        _ => Ok(v.as_f64().unwrap_or(f64::NAN)),
    }
}

/// Rounds `num / den` (den > 0) half to even.
fn round_half_even(num: &BigInt, den: &BigInt) -> BigInt {
    let (q, r) = num.div_mod_floor(den);
    let twice: BigInt = r << 1usize;
    match twice.cmp(den) {
        Ordering::Greater => q + 1,
        Ordering::Less => q,
        Ordering::Equal => {
            if q.is_odd() {
                q + 1
            } else {
                q
            }
        }
    }
}

fn pow10(n: u64) -> BigInt {
    num_traits::pow(BigInt::from(10), n as usize)
}

/// Python's whitespace (`str.isspace`).
fn py_space(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}

/// Code points of the digit zero in Unicode decimal-digit (Nd) ranges
/// that Python's `int()`/`float()` accept besides ASCII.
const ND_ZEROS: &[u32] = &[
    0x660, 0x6F0, 0x7C0, 0x966, 0x9E6, 0xA66, 0xAE6, 0xB66, 0xBE6, 0xC66, 0xCE6, 0xD66, 0xDE6,
    0xE50, 0xED0, 0xF20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90, 0x1B50,
    0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10,
    0x104A0, 0x11066, 0x1D7CE, 0x1D7D8, 0x1D7E2, 0x1D7EC, 0x1D7F6,
];

/// The ASCII digit for a Unicode decimal digit.
fn uni_digit(c: char) -> Option<char> {
    if c.is_ascii_digit() {
        return Some(c);
    }
    let u = c as u32;
    ND_ZEROS
        .iter()
        .find(|&&z| u >= z && u < z + 10)
        .map(|&z| char::from(b'0' + (u - z) as u8))
}

/// Strips Python whitespace and maps Unicode digits to ASCII (what CPython
/// does before parsing numbers).
fn normalise_number_text(s: &str) -> String {
    s.trim_matches(py_space)
        .chars()
        .map(|c| uni_digit(c).unwrap_or(c))
        .collect()
}

/// Checks `digit (_? digit)*` and returns the digits without underscores.
fn digit_part(s: &str) -> Option<String> {
    if s.is_empty() || s.starts_with('_') || s.ends_with('_') || s.contains("__") {
        return None;
    }
    if !s.chars().all(|c| c.is_ascii_digit() || c == '_') {
        return None;
    }
    Some(s.replace('_', ""))
}

fn py_str_repr(s: &str) -> String {
    runtime::pyrepr::str_repr(s)
}

/// Python `int(str)` in base 10.
fn parse_int(s: &str) -> Result<Value> {
    let bad = || {
        Error::value(format!(
            "invalid literal for int() with base 10: {}",
            py_str_repr(s)
        ))
    };
    let t = normalise_number_text(s);
    let (neg, body) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t.strip_prefix('+').unwrap_or(&t)),
    };
    let digits = digit_part(body).ok_or_else(bad)?;
    if digits.len() > 4300 {
        return Err(Error::value(format!(
            "Exceeds the limit (4300 digits) for integer string conversion: value has {} digits",
            digits.len()
        )));
    }
    let v = match digits.parse::<i64>() {
        Ok(i) => BigInt::from(i),
        Err(_) => digits.parse::<BigInt>().map_err(|_| bad())?,
    };
    Ok(Value::from_bigint(if neg { -v } else { v }))
}

/// Python `float(str)`.
fn parse_float(s: &str) -> Result<f64> {
    let bad = || {
        Error::value(format!(
            "could not convert string to float: {}",
            py_str_repr(s)
        ))
    };
    let t = normalise_number_text(s);
    let (neg, body) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t.strip_prefix('+').unwrap_or(&t)),
    };
    let lower = body.to_ascii_lowercase();
    let mag = if lower == "inf" || lower == "infinity" {
        f64::INFINITY
    } else if lower == "nan" {
        f64::NAN
    } else {
        let (mant, exp) = match lower.find('e') {
            Some(i) => (&lower[..i], Some(&lower[i + 1..])),
            None => (&lower[..], None),
        };
        let (ip, fp) = match mant.find('.') {
            Some(i) => (&mant[..i], Some(&mant[i + 1..])),
            None => (mant, None),
        };
        let ip = if ip.is_empty() {
            String::new()
        } else {
            digit_part(ip).ok_or_else(bad)?
        };
        let fp = match fp {
            Some("") | None => String::new(),
            Some(f) => digit_part(f).ok_or_else(bad)?,
        };
        if ip.is_empty() && fp.is_empty() {
            return Err(bad());
        }
        let mut text = format!(
            "{}.{}",
            if ip.is_empty() { "0" } else { &ip },
            if fp.is_empty() { "0" } else { &fp }
        );
        if let Some(e) = exp {
            let (esign, edig) = match e.strip_prefix('-') {
                Some(r) => ("-", r),
                None => ("", e.strip_prefix('+').unwrap_or(e)),
            };
            let edig = digit_part(edig).ok_or_else(bad)?;
            text.push('e');
            text.push_str(esign);
            text.push_str(&edig);
        }
        text.parse::<f64>().map_err(|_| bad())?
    };
    Ok(if neg { -mag } else { mag })
}

// ---------------------------------------------------------------------------
// operators

/// `#operator_+` (`math.binary_plus`): `left + right` for numbers.
///
/// Matches yaql `math.binary_plus` (`#operator_+`, `left + right`).
///
/// ```yaql
/// 1 + 2
/// # => 3
/// 1 + 2.5
/// # => 3.5
/// true + 1
/// # error: NoMatchingFunctionException
/// ```
fn op_add(_: &Cx, a: Args) -> Result<Value> {
    num::add(a.get(0), a.get(1))
}

/// `#operator_-` (`math.binary_minus`).
///
/// Matches yaql `math.binary_minus` (`#operator_-`, `left - right`).
///
/// ```yaql
/// 3 - 5
/// # => -2
/// 0.5 - 1
/// # => -0.5
/// ```
fn op_sub(_: &Cx, a: Args) -> Result<Value> {
    num::sub(a.get(0), a.get(1))
}

/// `#operator_*` (`math.multiplication`).
///
/// Matches yaql `math.multiplication` (`#operator_*`, `left * right`).
///
/// ```yaql
/// -3 * 4
/// # => -12
/// 2 * 3.0
/// # => 6.0
/// ```
fn op_mul(_: &Cx, a: Args) -> Result<Value> {
    num::mul(a.get(0), a.get(1))
}

/// `#operator_/` (`math.division`): floor division for two ints, true
/// division otherwise.
///
/// Matches yaql `math.division` (`#operator_/`, `left / right`).
///
/// ```yaql
/// 7 / 2
/// # => 3
/// 7 / -2
/// # => -4
/// 7 / 2.0
/// # => 3.5
/// 1 / 0
/// # error: ZeroDivisionError
/// ```
fn op_div(_: &Cx, a: Args) -> Result<Value> {
    num::div(a.get(0), a.get(1))
}

/// `#operator_mod` (`math.modulo`): Python `%`.
///
/// Matches yaql `math.modulo` (`#operator_mod`, `left mod right`). The
/// result takes the sign of the divisor.
///
/// ```yaql
/// -7 mod 3
/// # => 2
/// 7.5 mod 2
/// # => 1.5
/// 5 mod 0
/// # error: ZeroDivisionError
/// ```
fn op_mod(_: &Cx, a: Args) -> Result<Value> {
    num::modulo(a.get(0), a.get(1))
}

/// `#unary_operator_+` (`math.unary_plus`).
///
/// Matches yaql `math.unary_plus` (`#unary_operator_+`, `+op`).
///
/// ```yaql
/// +5
/// # => 5
/// +true
/// # error: NoMatchingFunctionException
/// ```
fn op_uplus(_: &Cx, a: Args) -> Result<Value> {
    Ok(a.get(0).clone())
}

/// `#unary_operator_-` (`math.unary_minus`).
///
/// Matches yaql `math.unary_minus` (`#unary_operator_-`, `-op`).
///
/// ```yaql
/// -(2.5)
/// # => -2.5
/// -(-3)
/// # => 3
/// ```
fn op_uminus(_: &Cx, a: Args) -> Result<Value> {
    num::neg(a.get(0))
}

fn ord_of(a: &Args) -> Option<Ordering> {
    num_cmp(a.get(0), a.get(1))
}

/// `#operator_<` (`math.lt`).
///
/// Matches yaql `math.lt` (`#operator_<`, `left < right`).
///
/// ```yaql
/// 1 < 2.5
/// # => true
/// 2 < 2
/// # => false
/// true < 2
/// # error: NoMatchingFunctionException
/// ```
fn op_lt(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Bool(ord_of(&a) == Some(Ordering::Less)))
}

/// `#operator_<=` (`math.lte`).
///
/// Matches yaql `math.lte` (`#operator_<=`, `left <= right`).
///
/// ```yaql
/// 2 <= 2.0
/// # => true
/// 3 <= 2
/// # => false
/// ```
fn op_le(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Bool(matches!(
        ord_of(&a),
        Some(Ordering::Less | Ordering::Equal)
    )))
}

/// `#operator_>` (`math.gt`).
///
/// Matches yaql `math.gt` (`#operator_>`, `left > right`).
///
/// ```yaql
/// 3 > 2
/// # => true
/// float('nan') > 0
/// # => false
/// ```
fn op_gt(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Bool(ord_of(&a) == Some(Ordering::Greater)))
}

/// `#operator_>=` (`math.gte`).
///
/// Matches yaql `math.gte` (`#operator_>=`, `left >= right`).
///
/// ```yaql
/// 1 >= 2
/// # => false
/// 2.0 >= 2
/// # => true
/// ```
fn op_ge(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Bool(matches!(
        ord_of(&a),
        Some(Ordering::Greater | Ordering::Equal)
    )))
}

// ---------------------------------------------------------------------------
// functions

/// `abs(op)` (`math.abs_`).
///
/// Matches yaql `math.abs_` (`abs`).
///
/// ```yaql
/// abs(-3)
/// # => 3
/// abs(-2.5)
/// # => 2.5
/// ```
fn abs_(_: &Cx, a: Args) -> Result<Value> {
    num::abs(a.get(0))
}

/// `sign(num)` (`math.sign`): 1, 0 or -1 (0 for NaN).
///
/// Matches yaql `math.sign` (`sign`).
///
/// ```yaql
/// sign(-0.5)
/// # => -1
/// sign(0)
/// # => 0
/// sign(7)
/// # => 1
/// ```
fn sign(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Int(match num_cmp(a.get(0), &Value::Int(0)) {
        Some(Ordering::Greater) => 1,
        Some(Ordering::Less) => -1,
        _ => 0,
    }))
}

/// `int(value)` (`math.int_`): Python `int()`, null gives 0.
///
/// Matches yaql `math.int_` (`int`).
///
/// ```yaql
/// int('42')
/// # => 42
/// int(-3.9)
/// # => -3
/// int(null)
/// # => 0
/// int(true)
/// # => 1
/// int('3.5')
/// # error: ValueError
/// ```
fn int_(_: &Cx, a: Args) -> Result<Value> {
    match a.get(0) {
        Value::Null => Ok(Value::Int(0)),
        Value::Bool(b) => Ok(Value::Int(*b as i64)),
        v @ (Value::Int(_) | Value::BigInt(_)) => Ok(v.clone()),
        Value::Float(f) => float_to_int(*f),
        Value::Str(s) => parse_int(s),
        other => Err(Error::type_(format!(
            "int() argument must be a string, a bytes-like object or a real number, not '{}'",
            other.type_name()
        ))),
    }
}

/// `float(value)` (`math.float_`): Python `float()`, null gives 0.0.
///
/// Matches yaql `math.float_` (`float`).
///
/// ```yaql
/// float('1e3')
/// # => 1000.0
/// float(2)
/// # => 2.0
/// float(null)
/// # => 0.0
/// float('x')
/// # error: ValueError
/// ```
fn float_(_: &Cx, a: Args) -> Result<Value> {
    match a.get(0) {
        Value::Null => Ok(Value::Float(0.0)),
        Value::Float(f) => Ok(Value::Float(*f)),
        v @ (Value::Bool(_) | Value::Int(_) | Value::BigInt(_)) => Ok(Value::Float(to_float(v)?)),
        Value::Str(s) => Ok(Value::Float(parse_float(s)?)),
        other => Err(Error::type_(format!(
            "float() argument must be a string or a real number, not '{}'",
            other.type_name()
        ))),
    }
}

/// `isInteger(value)` (`math.is_integer`): an int, not a bool.
///
/// Matches yaql `math.is_integer` (`isInteger`).
///
/// ```yaql
/// isInteger(3)
/// # => true
/// isInteger(3.0)
/// # => false
/// isInteger(true)
/// # => false
/// ```
fn is_integer(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Bool(a.get(0).is_int()))
}

/// `isNumber(value)` (`math.is_number`): an int or float, not a bool.
///
/// Matches yaql `math.is_number` (`isNumber`).
///
/// ```yaql
/// isNumber(3.5)
/// # => true
/// isNumber('3')
/// # => false
/// isNumber(true)
/// # => false
/// ```
fn is_number(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Bool(a.get(0).is_number()))
}

/// `b > a` through `#operator_>`, as the reference's injected delegate does.
fn greater(cx: &Cx, b: &Value, a: &Value) -> Result<bool> {
    if b.is_number() && a.is_number() {
        return Ok(num_cmp(b, a) == Some(Ordering::Greater));
    }
    if let (Value::Str(x), Value::Str(y)) = (b, a) {
        return Ok(x.as_str() > y.as_str());
    }
    let r = cx.env.registry().call(
        cx,
        "#operator_>",
        None,
        Form::Function,
        &[ArgIn::Val(b.clone()), ArgIn::Val(a.clone())],
        &[],
    )?;
    Ok(r.truthy())
}

/// `max(a, b)` (`math.max_`): `b` when `b > a`, else `a`.
///
/// Matches yaql `math.max_` (`max`). Works on any values `>` can
/// compare; null is below everything.
///
/// ```yaql
/// max(1, 2.5)
/// # => 2.5
/// max(null, -1)
/// # => -1
/// max('a', 'b')
/// # => "b"
/// max(1, 'a')
/// # error: NoMatchingFunctionException
/// ```
fn max_(cx: &Cx, a: Args) -> Result<Value> {
    let (x, y) = (a.get(0), a.get(1));
    Ok(if greater(cx, y, x)? {
        y.clone()
    } else {
        x.clone()
    })
}

/// `min(a, b)` (`math.min_`): `a` when `b > a`, else `b`.
///
/// Matches yaql `math.min_` (`min`).
///
/// ```yaql
/// min(3, 2)
/// # => 2
/// min(null, -1)
/// # => null
/// ```
fn min_(cx: &Cx, a: Args) -> Result<Value> {
    let (x, y) = (a.get(0), a.get(1));
    Ok(if greater(cx, y, x)? {
        x.clone()
    } else {
        y.clone()
    })
}

/// Largest result (in bits) `pow` and `shiftBitsLeft` will build.
const MAX_BITS: u64 = runtime::num::MAX_INT_BITS;

fn int_pow(base: &BigInt, exp: &BigInt) -> Result<Value> {
    // Trivial bases first: they never grow.
    if base.is_zero() {
        return Ok(Value::Int(if exp.is_zero() { 1 } else { 0 }));
    }
    if base.is_one() {
        return Ok(Value::Int(1));
    }
    if *base == BigInt::from(-1) {
        return Ok(Value::Int(if exp.is_even() { 1 } else { -1 }));
    }
    let e = exp
        .to_u64()
        .filter(|e| e.saturating_mul(base.bits()) <= MAX_BITS)
        .ok_or_else(|| Error::new(ErrorKind::MemoryError, "the power would be too large"))?;
    Ok(Value::from_bigint(num_traits::pow(
        base.clone(),
        e as usize,
    )))
}

/// Python float `**`.
fn float_pow(x: f64, y: f64) -> Result<Value> {
    if x == 0.0 && y < 0.0 {
        return Err(Error::new(
            ErrorKind::ZeroDivisionError,
            "0.0 cannot be raised to a negative power",
        ));
    }
    if x < 0.0 && x.is_finite() && y.is_finite() && y.fract() != 0.0 {
        // CPython returns a complex number here, which yaql cannot output.
        return Err(Error::value("math domain error"));
    }
    let r = x.powf(y);
    if r.is_infinite() && x.is_finite() && y.is_finite() {
        return Err(overflow("(34, 'Numerical result out of range')"));
    }
    Ok(Value::Float(r))
}

/// `pow(a, b, c => null)` (`math.pow_`): Python `pow`.
///
/// Matches yaql `math.pow_` (`pow`).
///
/// ```yaql
/// pow(2, 10)
/// # => 1024
/// pow(2, -1)
/// # => 0.5
/// pow(3, 4, 5)
/// # => 1
/// pow(2.0, 3, 5)
/// # error: TypeError
/// ```
fn pow_(_: &Cx, a: Args) -> Result<Value> {
    let (x, y, m) = (a.get(0), a.get(1), a.get(2));
    if !m.is_null() {
        if !(x.is_int() && y.is_int() && m.is_int()) {
            return Err(Error::type_(
                "pow() 3rd argument not allowed unless all arguments are integers",
            ));
        }
        let (b, e, m) = (big(x), big(y), big(m));
        if m.is_zero() {
            return Err(Error::value("pow() 3rd argument cannot be 0"));
        }
        let mut b = b;
        let mut e = e;
        if e.is_negative() {
            // Modular inverse of the base.
            let modulus = m.abs();
            let g = b.mod_floor(&modulus).extended_gcd(&modulus);
            if !g.gcd.is_one() {
                return Err(Error::value("base is not invertible for the given modulus"));
            }
            b = g.x.mod_floor(&modulus);
            e = -e;
        }
        if m.abs().is_one() {
            return Ok(Value::Int(0));
        }
        return Ok(Value::from_bigint(b.modpow(&e, &m)));
    }
    if x.is_int() && y.is_int() {
        let e = big(y);
        if !e.is_negative() {
            return int_pow(&big(x), &e);
        }
        return float_pow(to_float(x)?, to_float(y)?);
    }
    float_pow(to_float(x)?, to_float(y)?)
}

/// `round(number, ndigits => 0)` (`math.round_`): Python `round(x, n)`,
/// half to even; an int stays an int, a float stays a float.
///
/// Matches yaql `math.round_` (`round`).
///
/// ```yaql
/// round(2.5)
/// # => 2.0
/// round(3.5)
/// # => 4.0
/// round(2.675, 2)
/// # => 2.67
/// round(7)
/// # => 7
/// round(1250, -2)
/// # => 1200
/// ```
fn round_(_: &Cx, a: Args) -> Result<Value> {
    let n: i64 = match a.get(1) {
        Value::BigInt(b) => {
            if b.is_negative() {
                i64::MIN
            } else {
                i64::MAX
            }
        }
        v => v.as_i64().unwrap_or(0),
    };
    match a.get(0) {
        Value::Float(f) => round_float(*f, n),
        v => {
            let x = big(v);
            if n >= 0 {
                return Ok(Value::from_bigint(x));
            }
            let k = n.unsigned_abs();
            // 10^k far beyond |x|: the result is 0.
            if k > x.bits() / 3 + 2 {
                return Ok(Value::Int(0));
            }
            let den = pow10(k);
            Ok(Value::from_bigint(round_half_even(&x, &den) * den))
        }
    }
}

fn round_float(f: f64, n: i64) -> Result<Value> {
    if !f.is_finite() || n > 323 || f == 0.0 {
        return Ok(Value::Float(f));
    }
    if n < -308 {
        return Ok(Value::Float(0.0f64.copysign(f)));
    }
    let (m, e) = float_ratio(f);
    let (mut num, mut den) = (m, BigInt::one());
    if e >= 0 {
        num <<= e as usize;
    } else {
        den <<= (-e) as usize;
    }
    if n >= 0 {
        num *= pow10(n as u64);
    } else {
        den *= pow10(n.unsigned_abs());
    }
    let q = round_half_even(&num, &den);
    if q.is_zero() {
        return Ok(Value::Float(0.0f64.copysign(f)));
    }
    let r: f64 = format!("{}e{}", q, -n).parse().unwrap_or(f64::NAN);
    if r.is_infinite() {
        return Err(overflow("rounded value too large to represent"));
    }
    Ok(Value::Float(r))
}

fn bool_or_int(
    a: &Value,
    b: &Value,
    f: fn(bool, bool) -> bool,
    g: fn(BigInt, BigInt) -> BigInt,
) -> Value {
    if let (Value::Bool(x), Value::Bool(y)) = (a, b) {
        return Value::Bool(f(*x, *y));
    }
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
        return Value::from_bigint(g(BigInt::from(x), BigInt::from(y)));
    }
    Value::from_bigint(g(big(a), big(b)))
}

/// `bitwiseAnd(left, right)` (`math.bitwise_and`).
///
/// Matches yaql `math.bitwise_and` (`bitwiseAnd`).
///
/// ```yaql
/// bitwiseAnd(12, 10)
/// # => 8
/// bitwiseAnd(true, true)
/// # => true
/// ```
fn bitwise_and(_: &Cx, a: Args) -> Result<Value> {
    Ok(bool_or_int(a.get(0), a.get(1), |x, y| x & y, |x, y| x & y))
}

/// `bitwiseOr(left, right)` (`math.bitwise_or`).
///
/// Matches yaql `math.bitwise_or` (`bitwiseOr`).
///
/// ```yaql
/// bitwiseOr(12, 10)
/// # => 14
/// bitwiseOr(false, 2)
/// # => 2
/// ```
fn bitwise_or(_: &Cx, a: Args) -> Result<Value> {
    Ok(bool_or_int(a.get(0), a.get(1), |x, y| x | y, |x, y| x | y))
}

/// `bitwiseXor(left, right)` (`math.bitwise_xor`).
///
/// Matches yaql `math.bitwise_xor` (`bitwiseXor`).
///
/// ```yaql
/// bitwiseXor(12, 10)
/// # => 6
/// bitwiseXor(true, false)
/// # => true
/// ```
fn bitwise_xor(_: &Cx, a: Args) -> Result<Value> {
    Ok(bool_or_int(a.get(0), a.get(1), |x, y| x ^ y, |x, y| x ^ y))
}

/// `bitwiseNot(arg)` (`math.bitwise_not`): `~arg` = `-arg - 1`.
///
/// Matches yaql `math.bitwise_not` (`bitwiseNot`).
///
/// ```yaql
/// bitwiseNot(5)
/// # => -6
/// bitwiseNot(true)
/// # => -2
/// ```
fn bitwise_not(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::from_bigint(-big(a.get(0)) - 1))
}

fn shift_count(v: &Value) -> Result<Option<u64>> {
    let n = big(v);
    if n.is_negative() {
        return Err(Error::value("negative shift count"));
    }
    Ok(n.to_u64())
}

/// `shiftBitsLeft(value, bitsNumber)` (`math.shift_bits_left`).
///
/// Matches yaql `math.shift_bits_left` (`shiftBitsLeft`).
///
/// ```yaql
/// shiftBitsLeft(1, 10)
/// # => 1024
/// shiftBitsLeft(1, 70)
/// # => 1180591620717411303424
/// shiftBitsLeft(1, -1)
/// # error: ValueError
/// ```
fn shift_left(_: &Cx, a: Args) -> Result<Value> {
    let x = big(a.get(0));
    let n = shift_count(a.get(1))?;
    if x.is_zero() {
        return Ok(Value::Int(0));
    }
    match n {
        Some(n) if n.saturating_add(x.bits()) <= MAX_BITS => {
            Ok(Value::from_bigint(x << (n as usize)))
        }
        _ => Err(overflow("too many digits in integer")),
    }
}

/// `shiftBitsRight(value, bitsNumber)` (`math.shift_bits_right`):
/// arithmetic shift (floor).
///
/// Matches yaql `math.shift_bits_right` (`shiftBitsRight`).
///
/// ```yaql
/// shiftBitsRight(1024, 3)
/// # => 128
/// shiftBitsRight(-7, 1)
/// # => -4
/// ```
fn shift_right(_: &Cx, a: Args) -> Result<Value> {
    let x = big(a.get(0));
    let n = shift_count(a.get(1))?;
    match n {
        Some(n) if n < x.bits() + 1 => Ok(Value::from_bigint(x >> (n as usize))),
        _ => Ok(Value::Int(if x.is_negative() { -1 } else { 0 })),
    }
}

/// A uniform integer in `[0, n)` for `n > 0`, from the run's generator
/// (see [`runtime::rand`]: the host's, or the evaluation's).
fn below(env: &Env, n: &BigInt) -> BigInt {
    let bits = n.bits();
    loop {
        let mut r = BigInt::zero();
        let mut got = 0;
        while got < bits {
            r = (r << 64usize) + BigInt::from(runtime::rand::draw(env));
            got += 64;
        }
        r >>= (got - bits) as usize;
        if r < *n {
            return r;
        }
    }
}

/// `random()` (`math.random_`): a float in [0.0, 1.0).
///
/// Matches yaql `math.random_` (`random()`).
///
/// ```yaql
/// random() < 1.0
/// # => true
/// random() >= 0.0
/// # => true
/// ```
fn random_(cx: &Cx, _: Args) -> Result<Value> {
    let bits = runtime::rand::draw(cx.env) >> 11;
    Ok(Value::Float(bits as f64 / (1u64 << 53) as f64))
}

/// `random(from, to)` (`math.random__`): Python `random.randint`.
///
/// Matches yaql `math.random__` (`random(from, to)`). Both bounds are inclusive.
///
/// ```yaql
/// random(5, 5)
/// # => 5
/// random(1, 6) in range(1, 7)
/// # => true
/// random(5, 3)
/// # error: ValueError
/// random('a', 2)
/// # error: TypeError
/// ```
fn random_range(cx: &Cx, a: Args) -> Result<Value> {
    let (lo, hi) = (a.get(0), a.get(1));
    for v in [lo, hi] {
        if v.as_bigint().is_none() {
            return Err(Error::type_(format!(
                "'{}' object cannot be interpreted as an integer",
                v.type_name()
            )));
        }
    }
    let (lo, hi) = (big(lo), big(hi));
    let width: BigInt = &hi - &lo + 1;
    if !width.is_positive() {
        return Err(Error::value(format!(
            "empty range in randrange({}, {})",
            lo,
            &hi + 1
        )));
    }
    Ok(Value::from_bigint(lo + below(cx.env, &width)))
}

/// Registers the group.
pub fn register(r: &mut Registry) {
    let num2 = || vec![p("left", Ty::Number), p("right", Ty::Number)];
    r.function("#operator_+", num2(), op_add).pure_();
    r.function("#operator_-", num2(), op_sub).pure_();
    r.function("#operator_*", num2(), op_mul).pure_();
    r.function("#operator_/", num2(), op_div).pure_();
    r.function("#operator_mod", num2(), op_mod).pure_();
    r.function("#operator_<", num2(), op_lt).pure_();
    r.function("#operator_<=", num2(), op_le).pure_();
    r.function("#operator_>", num2(), op_gt).pure_();
    r.function("#operator_>=", num2(), op_ge).pure_();
    r.function("#unary_operator_+", vec![p("op", Ty::Number)], op_uplus)
        .pure_();
    r.function("#unary_operator_-", vec![p("op", Ty::Number)], op_uminus)
        .pure_();
    r.function("abs", vec![p("op", Ty::Number)], abs_).pure_();
    r.function("sign", vec![p("num", Ty::Number)], sign).pure_();
    r.function("int", vec![p("value", Ty::Any).nullable()], int_)
        .pure_();
    r.function("float", vec![p("value", Ty::Any).nullable()], float_)
        .pure_();
    r.function(
        "isInteger",
        vec![p("value", Ty::Any).nullable()],
        is_integer,
    )
    .pure_();
    r.function("isNumber", vec![p("value", Ty::Any).nullable()], is_number)
        .pure_();
    r.function(
        "max",
        vec![p("a", Ty::Any).nullable(), p("b", Ty::Any).nullable()],
        max_,
    );
    r.function(
        "min",
        vec![p("a", Ty::Any).nullable(), p("b", Ty::Any).nullable()],
        min_,
    );
    r.function(
        "pow",
        vec![
            p("a", Ty::Number),
            p("b", Ty::Number),
            p("c", Ty::Number).opt(),
        ],
        pow_,
    )
    .pure_();
    r.function(
        "round",
        vec![p("number", Ty::Number), p("ndigits", Ty::Int).default(0i64)],
        round_,
    )
    .pure_();
    let int2 = || vec![p("left", Ty::Int), p("right", Ty::Int)];
    r.function("bitwiseAnd", int2(), bitwise_and).pure_();
    r.function("bitwiseOr", int2(), bitwise_or).pure_();
    r.function("bitwiseXor", int2(), bitwise_xor).pure_();
    r.function("bitwiseNot", vec![p("arg", Ty::Int)], bitwise_not)
        .pure_();
    let shift = || vec![p("value", Ty::Int), p("bitsNumber", Ty::Int)];
    r.function("shiftBitsLeft", shift(), shift_left).pure_();
    r.function("shiftBitsRight", shift(), shift_right).pure_();
    r.function("random", vec![], random_);
    r.function(
        "random",
        vec![p("from", Ty::Any).nullable(), p("to", Ty::Any).nullable()],
        random_range,
    );
}

#[cfg(test)]
mod tests {
    use runtime::{Options, Value};

    fn eval(expr: &str) -> Result<Value, String> {
        let reg = crate::registry(false);
        let env = crate::env(Options::default());
        let prog =
            compiler::compile(expr, &reg, Default::default()).map_err(|e| e.kind().to_string())?;
        prog.eval(&env, Value::Null)
            .and_then(|v| crate::finalize(&env, v))
            .map_err(|e| e.kind().to_string())
    }

    fn show(expr: &str) -> String {
        crate::util::show(expr, Value::Null)
    }

    #[test]
    fn arithmetic() {
        assert_eq!(show("7 / -2"), "-4");
        assert_eq!(show("5 / 2.0"), "2.5");
        assert_eq!(show("7 / 0"), "!ZeroDivisionError");
        assert_eq!(show("true + 1"), "!NoMatchingFunctionException");
        assert_eq!(show("+true"), "!NoMatchingFunctionException");
        assert_eq!(show("true < 2"), "!NoMatchingFunctionException");
        assert_eq!(show("3++1"), "4");
    }

    #[test]
    fn rounding() {
        assert_eq!(show("round(2.5)"), "2.0");
        assert_eq!(show("round(3.5)"), "4.0");
        assert_eq!(show("round(2.675, 2)"), "2.67");
        assert_eq!(show("round(-0.5)"), "-0.0");
        assert_eq!(show("round(25, -1)"), "20");
        assert_eq!(show("round(35, -1)"), "40");
        assert_eq!(show("round(7)"), "7");
        assert_eq!(show("round(1234.5, -2)"), "1200.0");
    }

    #[test]
    fn conversions() {
        assert_eq!(show("int(' 5 ')"), "5");
        assert_eq!(show("int('1_000')"), "1000");
        assert_eq!(show("int('3.5')"), "!ValueError");
        assert_eq!(show("int(-3.9)"), "-3");
        assert_eq!(show("int(float('inf'))"), "!OverflowError");
        assert_eq!(show("float('1e3')"), "1000.0");
        assert_eq!(show("float('.5')"), "0.5");
        assert_eq!(show("float('-inf')"), r#"{"$float": "-inf"}"#);
        assert_eq!(show("float('x')"), "!ValueError");
        assert_eq!(show("int(true)"), "1");
    }

    #[test]
    fn powers_and_bits() {
        assert_eq!(show("pow(2, 100)"), "1267650600228229401496703205376");
        assert_eq!(show("pow(2, -1)"), "0.5");
        assert_eq!(show("pow(3, 4, 5)"), "1");
        assert_eq!(show("pow(3, -1, 7)"), "5");
        assert_eq!(show("pow(2, 3, -5)"), "-2");
        assert_eq!(show("pow(2.0, 3, 5)"), "!TypeError");
        assert_eq!(show("pow(0, -1)"), "!ZeroDivisionError");
        assert_eq!(show("bitwiseAnd(true, true)"), "true");
        assert_eq!(show("bitwiseAnd(-6, 7)"), "2");
        assert_eq!(show("bitwiseNot(true)"), "-2");
        assert_eq!(show("shiftBitsRight(-7, 1)"), "-4");
        assert_eq!(show("shiftBitsLeft(1, 70)"), "1180591620717411303424");
        assert_eq!(show("shiftBitsLeft(1, -1)"), "!ValueError");
    }

    #[test]
    fn max_min_random() {
        assert_eq!(show("max(null, -1)"), "-1");
        assert_eq!(show("min(null, -1)"), "null");
        assert_eq!(show("max('a', 'b')"), "\"b\"");
        assert_eq!(show("max(1, 'a')"), "!NoMatchingFunctionException");
        let r = eval("random(3, 5)").unwrap();
        assert!(matches!(r, Value::Int(3..=5)));
        let f = eval("random()").unwrap();
        assert!(matches!(f, Value::Float(x) if (0.0..1.0).contains(&x)));
        assert_eq!(show("random(5, 3)"), "!ValueError");
    }

    /// `Options::seed` replays `random()`: the same seed draws the same
    /// numbers (lazy ones too, drained within the evaluation's scope),
    /// another seed others.
    #[test]
    fn a_seed_replays_random() {
        let reg = crate::registry(false);
        let expr = "[random(), random(1, 1000000), range(3).select(random())]";
        let prog = compiler::compile(expr, &reg, Default::default()).unwrap();
        let draws = |seed: Option<u64>| {
            let env = crate::env(Options {
                seed,
                ..Options::default()
            });
            let _run = runtime::rand::Scope::enter(seed);
            let v = prog.eval(&env, Value::Null).unwrap();
            let v = crate::finalize(&env, v).unwrap();
            runtime::json::to_tagged_string(&v)
        };
        let first = draws(Some(7));
        assert_eq!(draws(Some(7)), first);
        assert_ne!(draws(Some(8)), first);
        assert_ne!(draws(None), draws(None));
    }
}
