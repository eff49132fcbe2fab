//! `yaql/standard_library/boolean.py`: `bool`, `isBoolean` and the
//! logical operators. `and`, `or` and `not` are compiled by the VM
//! directly; the functions are registered for completeness.

use runtime::registry::{lazy, p, Args, Cx, Registry, Ty};
use runtime::{Result, Value};

/// `bool(value)` (`boolean.bool_`): Python truthiness.
///
/// Matches yaql `boolean.bool_` (`bool`). False for null, `false`, 0,
/// 0.0 and empty strings and collections; true otherwise.
///
/// ```yaql
/// bool([])
/// # => false
/// bool('0')
/// # => true
/// bool(0.0)
/// # => false
/// bool(null)
/// # => false
/// ```
fn bool_(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Bool(a.get(0).truthy()))
}

/// `isBoolean(value)` (`boolean.is_boolean`).
///
/// Matches yaql `boolean.is_boolean` (`isBoolean`).
///
/// ```yaql
/// isBoolean(false)
/// # => true
/// isBoolean(0)
/// # => false
/// ```
fn is_boolean(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Bool(matches!(a.get(0), Value::Bool(_))))
}

/// `#operator_and(left, right)` (`boolean.and_`): `left() and right()`.
///
/// Matches yaql `boolean.and_` (`#operator_and`, `left and right`):
/// returns an operand, not necessarily a boolean; the right operand is not
/// evaluated when the left one is falsy.
///
/// ```yaql
/// 'a' and 'b'
/// # => "b"
/// 0 and 1 / 0
/// # => 0
/// null and true
/// # => null
/// ```
fn and_(cx: &Cx, a: Args) -> Result<Value> {
    let l = cx.call(a.get(0), &[])?;
    if !l.truthy() {
        return Ok(l);
    }
    cx.call(a.get(1), &[])
}

/// `#operator_or(left, right)` (`boolean.or_`): `left() or right()`.
///
/// Matches yaql `boolean.or_` (`#operator_or`, `left or right`):
/// returns an operand, not necessarily a boolean; the right operand is not
/// evaluated when the left one is truthy.
///
/// ```yaql
/// null or 'x'
/// # => "x"
/// 12 or 1 / 0
/// # => 12
/// false or 0
/// # => 0
/// ```
fn or_(cx: &Cx, a: Args) -> Result<Value> {
    let l = cx.call(a.get(0), &[])?;
    if l.truthy() {
        return Ok(l);
    }
    cx.call(a.get(1), &[])
}

/// `#unary_operator_not(arg)` (`boolean.not_`): `not arg`.
///
/// Matches yaql `boolean.not_` (`#unary_operator_not`, `not arg`).
///
/// ```yaql
/// not ''
/// # => true
/// not [0]
/// # => false
/// ```
fn not_(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Bool(!a.get(0).truthy()))
}

/// Registers the group.
pub fn register(r: &mut Registry) {
    r.function("bool", vec![p("value", Ty::Any).nullable()], bool_)
        .pure_();
    r.function(
        "isBoolean",
        vec![p("value", Ty::Any).nullable()],
        is_boolean,
    )
    .pure_();
    r.function("#operator_and", vec![lazy("left"), lazy("right")], and_);
    r.function("#operator_or", vec![lazy("left"), lazy("right")], or_);
    r.function(
        "#unary_operator_not",
        vec![p("arg", Ty::Any).nullable()],
        not_,
    )
    .pure_();
}

#[cfg(test)]
mod tests {
    use crate::util::show;
    use runtime::Value;

    #[test]
    fn truthiness() {
        assert_eq!(show("bool([])", Value::Null), "false");
        assert_eq!(show("bool('x')", Value::Null), "true");
        assert_eq!(show("bool(null)", Value::Null), "false");
        assert_eq!(show("isBoolean(1)", Value::Null), "false");
        assert_eq!(show("isBoolean(false)", Value::Null), "true");
    }

    #[test]
    fn lazy_operators() {
        assert_eq!(show("$ and 10 / $", Value::Int(0)), "0");
        assert_eq!(show("12 or 1 / 0", Value::Null), "12");
        assert_eq!(show("not ''", Value::Null), "true");
    }
}
