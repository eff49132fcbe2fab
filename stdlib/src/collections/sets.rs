//! The set algebra: `union`, `intersect`, `difference`,
//! `symmetricDifference`, `add`, `remove`.

use super::common::*;
use runtime::registry::{p, var, Args, Cx, Registry, Ty};

use runtime::{Result, Set, Value};

/// `left.union(right)` (`collections.union`).
///
/// Matches yaql `collections.union` (`union`). Both operands must be sets.
///
/// ```yaql
/// set(1, 2).union(set(2, 3))
/// # => [1, 2, 3]
/// [1, 2].union([2])
/// # error: NoMatchingMethodException
/// ```
pub(super) fn union(_: &Cx, a: Args) -> Result<Value> {
    let mut s = as_set(a.get(0)).clone();
    s.extend(as_set(a.get(1)).iter().cloned());
    Ok(Value::set(s))
}

/// `left.intersect(right)` (`collections.intersect`).
///
/// Matches yaql `collections.intersect` (`intersect`).
///
/// ```yaql
/// set(1, 2, 3).intersect(set(2, 3, 4))
/// # => [2, 3]
/// set(1, 2).intersect(set(3))
/// # => []
/// ```
pub(super) fn intersect(_: &Cx, a: Args) -> Result<Value> {
    let r = as_set(a.get(1));
    Ok(Value::set(
        as_set(a.get(0))
            .iter()
            .filter(|x| r.contains(*x))
            .cloned()
            .collect(),
    ))
}

/// `left.difference(right)` and `left - right` (`collections.difference`).
///
/// Matches yaql `collections.difference` (`difference` and `#operator_-`).
///
/// ```yaql
/// set(1, 2, 3).difference(set(2))
/// # => [1, 3]
/// set(1, 2, 3) - set(2, 4)
/// # => [1, 3]
/// isSet(set(1, 2) - set(1, 2))
/// # => true
/// ```
pub(super) fn difference(_: &Cx, a: Args) -> Result<Value> {
    let r = as_set(a.get(1));
    Ok(Value::set(
        as_set(a.get(0))
            .iter()
            .filter(|x| !r.contains(*x))
            .cloned()
            .collect(),
    ))
}

/// `left.symmetricDifference(right)` (`collections.symmetric_difference`).
///
/// Matches yaql `collections.symmetric_difference` (`symmetricDifference`).
///
/// ```yaql
/// set(1, 2, 3).symmetricDifference(set(3, 4))
/// # => [1, 2, 4]
/// ```
pub(super) fn symmetric_difference(_: &Cx, a: Args) -> Result<Value> {
    let (l, r) = (as_set(a.get(0)), as_set(a.get(1)));
    let mut s: Set = l.iter().filter(|x| !r.contains(*x)).cloned().collect();
    s.extend(r.iter().filter(|x| !l.contains(*x)).cloned());
    Ok(Value::set(s))
}

/// `set.add(*values)` (`collections.set_add`).
///
/// Matches yaql `collections.set_add` (`add`): a new set; the receiver is
/// unchanged.
///
/// ```yaql
/// set(1, 2).add(3, [4, 5])
/// # => [1, 2, 3, [4, 5]]
/// set(1, 2).add(2)
/// # => [1, 2]
/// ```
pub(super) fn set_add(_: &Cx, a: Args) -> Result<Value> {
    let mut s = as_set(a.get(0)).clone();
    s.extend(a.rest.iter().cloned());
    Ok(Value::set(s))
}

/// `set.remove(*values)` (`collections.set_remove`).
///
/// Matches yaql `collections.set_remove` (`remove`). Values not in the set
/// are ignored.
///
/// ```yaql
/// set(1, 2, 3).remove(2, 5)
/// # => [1, 3]
/// set(1, null).remove(null)
/// # => [1]
/// ```
pub(super) fn set_remove(_: &Cx, a: Args) -> Result<Value> {
    let r: Set = a.rest.iter().cloned().collect();
    Ok(Value::set(
        as_set(a.get(0))
            .iter()
            .filter(|x| !r.contains(*x))
            .cloned()
            .collect(),
    ))
}

/// Registers this part of the group.
pub(super) fn register(r: &mut Registry) {
    let any = || Ty::Any;
    let sets = || vec![p("left", Ty::Set), p("right", Ty::Set)];
    r.function(
        "#operator_-",
        vec![p("left", Ty::Set), p("right", Ty::Set)],
        difference,
    );
    r.method("union", sets(), union);
    r.method("intersect", sets(), intersect);
    r.method("difference", sets(), difference);
    r.method("symmetricDifference", sets(), symmetric_difference);
    r.method(
        "add",
        vec![p("set", Ty::Set), var("values", any()).nullable()],
        set_add,
    );
    r.method(
        "remove",
        vec![p("set", Ty::Set), var("values", any()).nullable()],
        set_remove,
    );
}
