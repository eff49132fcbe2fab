//! Python-compatible numbers: exact integers (i64 fast path promoting to
//! big integers), floor division and modulo, float repr.

use crate::error::ErrorKind;
use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{Signed, ToPrimitive, Zero};

use crate::error::{Error, Result};
use crate::value::Value;

fn big(v: &Value) -> BigInt {
    v.as_bigint().unwrap_or_default()
}

fn is_intlike(v: &Value) -> bool {
    matches!(v, Value::Int(_) | Value::BigInt(_) | Value::Bool(_))
}

fn float_of(v: &Value) -> Result<f64> {
    match v {
        Value::BigInt(b) => b.to_f64().filter(|f| f.is_finite()).ok_or_else(|| {
            Error::new(
                ErrorKind::OverflowError,
                "int too large to convert to float",
            )
        }),
        _ => Ok(v.as_f64().unwrap_or(f64::NAN)),
    }
}

/// Largest integer (in bits) arithmetic builds: 2^20 bits, 315,653
/// decimal digits. Python's ints have no bound, but CPython 3.11 (the
/// reference) refuses to turn one of more than 4,300 digits into text, so
/// no result past this bound could be printed there. It keeps each
/// multiplication, and each conversion to decimal (quadratic in
/// `num-bigint`), within milliseconds: under the old bound of 2^26 bits,
/// a 43M-bit power took 2 s and printing it 8 s, past any time budget,
/// which is only checked between operations.
pub const MAX_INT_BITS: u64 = 1 << 20;

/// An integer literal's value (decimal digits): a big integer when it does
/// not fit 64 bits. `num-bigint` converts in chunks, not digit by digit (a
/// million digits took 51 s digit by digit).
pub fn parse_int(digits: &str) -> Value {
    match digits.parse::<i64>() {
        Ok(i) => Value::Int(i),
        Err(_) => digits
            .parse::<BigInt>()
            .map(Value::from_bigint)
            .unwrap_or(Value::Null),
    }
}

/// `a + b` for numbers.
pub fn add(a: &Value, b: &Value) -> Result<Value> {
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
        return Ok(match x.checked_add(y) {
            Some(r) => Value::Int(r),
            None => Value::from_bigint(BigInt::from(x) + y),
        });
    }
    if is_intlike(a) && is_intlike(b) {
        return Ok(Value::from_bigint(big(a) + big(b)));
    }
    Ok(Value::Float(float_of(a)? + float_of(b)?))
}

/// `a - b` for numbers.
pub fn sub(a: &Value, b: &Value) -> Result<Value> {
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
        return Ok(match x.checked_sub(y) {
            Some(r) => Value::Int(r),
            None => Value::from_bigint(BigInt::from(x) - y),
        });
    }
    if is_intlike(a) && is_intlike(b) {
        return Ok(Value::from_bigint(big(a) - big(b)));
    }
    Ok(Value::Float(float_of(a)? - float_of(b)?))
}

/// `a * b` for numbers.
pub fn mul(a: &Value, b: &Value) -> Result<Value> {
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
        return Ok(match x.checked_mul(y) {
            Some(r) => Value::Int(r),
            None => Value::from_bigint(BigInt::from(x) * y),
        });
    }
    if is_intlike(a) && is_intlike(b) {
        let (x, y) = (big(a), big(b));
        if x.bits() + y.bits() > MAX_INT_BITS {
            return Err(Error::new(
                ErrorKind::MemoryError,
                "the product would be too large",
            ));
        }
        return Ok(Value::from_bigint(x * y));
    }
    Ok(Value::Float(float_of(a)? * float_of(b)?))
}

fn zero_div(msg: &str) -> Error {
    Error::new(ErrorKind::ZeroDivisionError, msg)
}

/// `a / b` as yaql does it: floor division for two integers, true
/// division otherwise.
pub fn div(a: &Value, b: &Value) -> Result<Value> {
    if is_intlike(a) && is_intlike(b) {
        return floordiv(a, b);
    }
    let (x, y) = (float_of(a)?, float_of(b)?);
    if y == 0.0 {
        return Err(zero_div("float division by zero"));
    }
    Ok(Value::Float(x / y))
}

/// Python `a // b` for integers.
pub fn floordiv(a: &Value, b: &Value) -> Result<Value> {
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
        if y == 0 {
            return Err(zero_div("integer division or modulo by zero"));
        }
        if !(x == i64::MIN && y == -1) {
            return Ok(Value::Int(Integer::div_floor(&x, &y)));
        }
        return Ok(Value::from_bigint(
            BigInt::from(x).div_floor(&BigInt::from(y)),
        ));
    }
    let y = big(b);
    if y.is_zero() {
        return Err(zero_div("integer division or modulo by zero"));
    }
    Ok(Value::from_bigint(big(a).div_floor(&y)))
}

/// Python `a % b` (`mod`).
pub fn modulo(a: &Value, b: &Value) -> Result<Value> {
    if is_intlike(a) && is_intlike(b) {
        if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
            if y == 0 {
                return Err(zero_div("integer division or modulo by zero"));
            }
            if y == -1 {
                return Ok(Value::Int(0));
            }
            return Ok(Value::Int(x.mod_floor(&y)));
        }
        let y = big(b);
        if y.is_zero() {
            return Err(zero_div("integer division or modulo by zero"));
        }
        return Ok(Value::from_bigint(big(a).mod_floor(&y)));
    }
    let (x, y) = (float_of(a)?, float_of(b)?);
    if y == 0.0 {
        return Err(zero_div("float modulo"));
    }
    let mut r = x % y;
    if r != 0.0 && ((r < 0.0) != (y < 0.0)) {
        r += y;
    } else if r == 0.0 {
        r = 0.0f64.copysign(y);
    }
    Ok(Value::Float(r))
}

/// Unary minus.
pub fn neg(a: &Value) -> Result<Value> {
    Ok(match a {
        Value::Int(i) => match i.checked_neg() {
            Some(r) => Value::Int(r),
            None => Value::from_bigint(-BigInt::from(*i)),
        },
        Value::Bool(b) => Value::Int(-(*b as i64)),
        Value::BigInt(b) => Value::from_bigint(-(**b).clone()),
        Value::Float(f) => Value::Float(-f),
        _ => return Err(Error::type_("bad operand type for unary -")),
    })
}

/// Absolute value.
pub fn abs(a: &Value) -> Result<Value> {
    Ok(match a {
        Value::Int(i) => match i.checked_abs() {
            Some(r) => Value::Int(r),
            None => Value::from_bigint(BigInt::from(*i).abs()),
        },
        Value::Bool(b) => Value::Int(*b as i64),
        Value::BigInt(b) => Value::from_bigint(b.abs()),
        Value::Float(f) => Value::Float(f.abs()),
        _ => return Err(Error::type_("bad operand type for abs()")),
    })
}

/// Python `repr(float)`: the shortest round-tripping digits, exponent form
/// below 1e-4 and from 1e16 on.
pub fn float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if f == 0.0 {
        return if f.is_sign_negative() {
            "-0.0".into()
        } else {
            "0.0".into()
        };
    }
    let e = format!("{:e}", f);
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let neg = mant.starts_with('-');
    let digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    if !(-4..16).contains(&exp) {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        out.push_str(&format!("{:02}", exp.abs()));
    } else if exp < 0 {
        out.push_str("0.");
        for _ in 0..(-exp - 1) {
            out.push('0');
        }
        out.push_str(&digits);
    } else {
        let ip = (exp + 1) as usize;
        if digits.len() <= ip {
            out.push_str(&digits);
            for _ in 0..(ip - digits.len()) {
                out.push('0');
            }
            out.push_str(".0");
        } else {
            out.push_str(&digits[..ip]);
            out.push('.');
            out.push_str(&digits[ip..]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn repr_matches_python() {
        assert_eq!(float_repr(1.0), "1.0");
        assert_eq!(float_repr(0.1), "0.1");
        assert_eq!(float_repr(1e16), "1e+16");
        assert_eq!(float_repr(123456789012345.6), "123456789012345.6");
        assert_eq!(float_repr(0.0001), "0.0001");
        assert_eq!(float_repr(0.00001), "1e-05");
        assert_eq!(float_repr(-2.5e-7), "-2.5e-07");
        assert_eq!(float_repr(1.5e300), "1.5e+300");
    }
    #[test]
    fn floor_semantics() {
        assert_eq!(
            div(&Value::Int(-7), &Value::Int(2)).unwrap(),
            Value::Int(-4)
        );
        assert_eq!(
            modulo(&Value::Int(-7), &Value::Int(3)).unwrap(),
            Value::Int(2)
        );
        assert_eq!(
            modulo(&Value::Int(7), &Value::Int(-3)).unwrap(),
            Value::Int(-2)
        );
        assert_eq!(
            div(&Value::Float(7.0), &Value::Int(2)).unwrap(),
            Value::Float(3.5)
        );
        assert_eq!(
            div(&Value::Int(1), &Value::Int(0)).unwrap_err().kind(),
            "ZeroDivisionError"
        );
        let big = mul(&Value::Int(i64::MAX), &Value::Int(4)).unwrap();
        assert!(matches!(big, Value::BigInt(_)));
        assert_eq!(sub(&big, &big).unwrap(), Value::Int(0));
    }
}
