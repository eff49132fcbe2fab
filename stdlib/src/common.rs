//! `yaql/standard_library/common.py`: `=`/`!=` (`*equal`, `*not_equal`)
//! with Python equality, and ordering of null against anything (null is
//! smaller than every other value; `null < null` is false).

use runtime::registry::{p, Args, Cx, Registry, Ty};
use runtime::{Result, Value};

/// `*equal(left, right)` (`common.eq`): Python `left == right`.
///
/// Matches yaql `common.eq` (`*equal`, the `=` operator). Ints, floats
/// and booleans compare by value, as in Python.
///
/// ```yaql
/// 1 = 1.0
/// # => true
/// [1, 2] = [1, 2]
/// # => true
/// '1' = 1
/// # => false
/// ```
fn eq(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Bool(a.get(0) == a.get(1)))
}

/// `*not_equal(left, right)` (`common.neq`): Python `left != right`.
///
/// Matches yaql `common.neq` (`*not_equal`, the `!=` operator).
///
/// ```yaql
/// 'a' != 'b'
/// # => true
/// null != 0
/// # => true
/// 1 != true
/// # => false
/// ```
fn neq(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Bool(a.get(0) != a.get(1)))
}

/// `common.left_lt_null`, `null_lt_null`, `left_lte_null`, `null_gt_null`,
/// `null_gt_right`, `null_gte_right`: false.
///
/// Matches yaql `common.left_lt_null`, `common.null_lt_null`,
/// `common.left_lte_null`, `common.null_gt_null`, `common.null_gt_right` and
/// `common.null_gte_right` (overloads of `#operator_<`, `#operator_<=`,
/// `#operator_>`, `#operator_>=` with a null operand).
///
/// ```yaql
/// 1 < null
/// # => false
/// null < null
/// # => false
/// 'a' <= null
/// # => false
/// null > null
/// # => false
/// null > 0
/// # => false
/// null >= [1]
/// # => false
/// ```
fn false_(_: &Cx, _: Args) -> Result<Value> {
    Ok(Value::Bool(false))
}

/// `common.null_lt_right`, `null_lte_null`, `null_lte_right`,
/// `left_gt_null`, `left_gte_null`, `null_gte_null`: true.
///
/// Matches yaql `common.null_lt_right`, `common.null_lte_null`,
/// `common.null_lte_right`, `common.left_gt_null`, `common.left_gte_null` and
/// `common.null_gte_null` (overloads of `#operator_<`, `#operator_<=`,
/// `#operator_>`, `#operator_>=` with a null operand).
///
/// ```yaql
/// null < 0
/// # => true
/// null <= null
/// # => true
/// null <= 'a'
/// # => true
/// [1] > null
/// # => true
/// 0 >= null
/// # => true
/// null >= null
/// # => true
/// ```
fn true_(_: &Cx, _: Args) -> Result<Value> {
    Ok(Value::Bool(true))
}

/// Registers the group.
pub fn register(r: &mut Registry) {
    let any2 = || {
        vec![
            p("left", Ty::Any).nullable(),
            p("right", Ty::Any).nullable(),
        ]
    };
    r.function("*equal", any2(), eq).pure_();
    r.function("*not_equal", any2(), neq).pure_();
    // (left, right) shapes: any/null, null/null, null/any.
    let any_null = || vec![p("left", Ty::Any), p("right", Ty::Null)];
    let null_null = || vec![p("left", Ty::Null), p("right", Ty::Null)];
    let null_any = || vec![p("left", Ty::Null), p("right", Ty::Any)];
    type F = runtime::registry::NativeFn;
    let table: [(&str, F, F, F); 4] = [
        ("#operator_<", false_, false_, true_),
        ("#operator_<=", false_, true_, true_),
        ("#operator_>", true_, false_, false_),
        ("#operator_>=", true_, true_, false_),
    ];
    for (name, f_any_null, f_null_null, f_null_any) in table {
        r.function(name, any_null(), f_any_null).pure_();
        r.function(name, null_null(), f_null_null).pure_();
        r.function(name, null_any(), f_null_any).pure_();
    }
}

#[cfg(test)]
mod tests {
    use runtime::Value;

    fn show(expr: &str) -> String {
        crate::util::show(expr, Value::Null)
    }

    #[test]
    fn null_ordering() {
        assert_eq!(show("null < 0"), "true");
        assert_eq!(show("null < null"), "false");
        assert_eq!(show("null <= null"), "true");
        assert_eq!(show("null >= 0"), "false");
        assert_eq!(show("0 > null"), "true");
        assert_eq!(show("'a' <= null"), "false");
        assert_eq!(show("[1] > null"), "true");
    }

    #[test]
    fn equality_and_mixed() {
        assert_eq!(show("1 = 1.0"), "true");
        assert_eq!(show("1 = true"), "true");
        assert_eq!(show("a != null"), "true");
        assert_eq!(show("1 < 'a'"), "!NoMatchingFunctionException");
    }
}
