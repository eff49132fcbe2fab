//! Generators: `range`, `sequence`, `generate`, `repeat`, `cycle` and the like.

use super::common::*;
use super::fused::call;
use runtime::ErrorKind;
use std::collections::{HashSet, VecDeque};

use runtime::registry::{Args, Cx};
use runtime::{Error, Result, Value};

/// Python ints from `start` by `step`, up to `stop` (exclusive) when one
/// is given, exact at any size as Python's are: i128 arithmetic while the
/// arguments fit in i64 (the count would have to pass 2^64 before i128
/// could overflow), big integers otherwise.
pub(super) fn int_steps(start: &Value, stop: Option<&Value>, step: &Value) -> Result<Value> {
    let small = |v: &Value| match v {
        Value::Int(i) => Some(i128::from(*i)),
        _ => None,
    };
    if let (Some(mut cur), Some(step)) = (small(start), small(step)) {
        let stop = match stop {
            None => None,
            Some(v) => small(v).map(Some),
        };
        if let Some(stop) = stop {
            return Ok(gen(std::iter::from_fn(move || {
                let more = stop.is_none_or(|s| (step > 0 && cur < s) || (step < 0 && cur > s));
                let v = cur;
                cur = cur.checked_add(step)?;
                more.then(|| Ok(int_value(v)))
            })));
        }
    }
    let big = |v: &Value| {
        v.as_bigint().ok_or_else(|| {
            let msg = format!("an integer is required, not {}", v.type_name());
            Error::new(ErrorKind::TypeError, msg)
        })
    };
    let (mut cur, step) = (big(start)?, big(step)?);
    let stop = stop.map(big).transpose()?;
    let up = step.sign() == num_bigint::Sign::Plus;
    Ok(gen(std::iter::from_fn(move || {
        let more = stop
            .as_ref()
            .is_none_or(|s| if up { &cur < s } else { &cur > s });
        let v = cur.clone();
        cur += &step;
        more.then(|| Ok(Value::from_bigint(v)))
    })))
}

/// An i128 as a Python int.
pub(super) fn int_value(v: i128) -> Value {
    match i64::try_from(v) {
        Ok(i) => Value::Int(i),
        Err(_) => Value::from_bigint(num_bigint::BigInt::from(v)),
    }
}

/// `range(stop)` (`queries.range_`).
///
/// Matches yaql `queries.range_` (`range`).
///
/// ```yaql
/// range(3)
/// # => [0, 1, 2]
/// range(-2)
/// # => []
/// ```
pub(super) fn range1(_: &Cx, a: Args) -> Result<Value> {
    int_steps(&Value::Int(0), Some(a.get(0)), &Value::Int(1))
}

/// `range(start, stop, step => 1)` (`queries.range__`).
///
/// Matches yaql `queries.range__` (`range`).
///
/// ```yaql
/// range(1, 4)
/// # => [1, 2, 3]
/// range(4, 1, -1)
/// # => [4, 3, 2]
/// range(0, 10, 3)
/// # => [0, 3, 6, 9]
/// range(pow(10, 20), pow(10, 20) + 2)
/// # => [100000000000000000000, 100000000000000000001]
/// range(9223372036854775806, 9223372036854775809)
/// # => [9223372036854775806, 9223372036854775807, 9223372036854775808]
/// range(1, 2, 0)
/// # error: ValueError
/// ```
pub(super) fn range3(_: &Cx, a: Args) -> Result<Value> {
    let step = a.get(2);
    if step.as_i64() == Some(0) {
        return Err(Error::value("range() arg 3 must not be zero"));
    }
    int_steps(a.get(0), Some(a.get(1)), step)
}

/// `sequence(start => 0, step => 1)` (`queries.sequence`).
///
/// Matches yaql `queries.sequence` (`sequence`). The sequence is infinite, so
/// it must be cut before it reaches the output.
///
/// ```yaql
/// sequence().take(5)
/// # => [0, 1, 2, 3, 4]
/// sequence(5, -2).take(3)
/// # => [5, 3, 1]
/// sequence(9223372036854775806).take(3)
/// # => [9223372036854775806, 9223372036854775807, 9223372036854775808]
/// sequence(pow(10, 20), -pow(10, 20)).take(3)
/// # => [100000000000000000000, 0, -100000000000000000000]
/// sequence()
/// # error: CollectionTooLargeException
/// ```
pub(super) fn sequence(_: &Cx, a: Args) -> Result<Value> {
    int_steps(a.get(0), None, a.get(1))
}

/// `value.repeat(times => -1)` (`queries.repeat`).
///
/// Matches yaql `queries.repeat` (`repeat`). A negative `times` (the default)
/// repeats forever.
///
/// ```yaql
/// 1.repeat(2)
/// # => [1, 1]
/// null.repeat(2)
/// # => [null, null]
/// 1.repeat().take(3)
/// # => [1, 1, 1]
/// 1.repeat()
/// # error: CollectionTooLargeException
/// ```
pub(super) fn repeat(_: &Cx, a: Args) -> Result<Value> {
    let v = a.get(0).clone();
    let times = int_arg(&a, 1)?;
    if times < 0 {
        Ok(gen(std::iter::repeat(v).map(Ok)))
    } else {
        Ok(gen(std::iter::repeat(v).take(times as usize).map(Ok)))
    }
}

/// `collection.cycle()` (`queries.cycle`).
///
/// Matches yaql `queries.cycle` (`cycle`).
///
/// ```yaql
/// [1, 2].cycle().take(5)
/// # => [1, 2, 1, 2, 1]
/// [].cycle().take(2)
/// # => []
/// ```
pub(super) fn cycle(cx: &Cx, a: Args) -> Result<Value> {
    let mut it = Some(cx.iter(a.get(0))?);
    let mut saved: Vec<Value> = Vec::new();
    let mut i = 0usize;
    Ok(gen(std::iter::from_fn(move || {
        if let Some(src) = it.as_mut() {
            match src.next() {
                Some(Ok(x)) => {
                    saved.push(x.clone());
                    return Some(Ok(x));
                }
                Some(Err(e)) => return Some(Err(e)),
                None => it = None,
            }
        }
        if saved.is_empty() {
            return None;
        }
        let x = saved[i % saved.len()].clone();
        i += 1;
        Some(Ok(x))
    })))
}

/// `generate(initial, predicate, producer, selector => null,
/// decycle => false)` (`queries.generate`).
///
/// Matches yaql `queries.generate` (`generate`).
///
/// ```yaql
/// generate(0, $ < 10, $ + 2)
/// # => [0, 2, 4, 6, 8]
/// generate(1, $ < 10, $ + 2, $ * 1000)
/// # => [1000, 3000, 5000, 7000, 9000]
/// generate(0, true, ($ + 1) mod 3, decycle => true)
/// # => [0, 1, 2]
/// ```
pub(super) fn generate(cx: &Cx, a: Args) -> Result<Value> {
    let mut cur = a.get(0).clone();
    let pred = a.get(1).clone();
    let producer = a.get(2).clone();
    let selector = opt_fn(a.get(3));
    let mut past: Option<HashSet<Value>> = if a.bool(4) {
        Some(HashSet::new())
    } else {
        None
    };
    let env = cx.env.clone();
    let mut first = true;
    Ok(gen(std::iter::from_fn(move || {
        if !first {
            cur = tri!(call(&env, &producer, std::slice::from_ref(&cur)));
        }
        first = false;
        if !tri!(call(&env, &pred, std::slice::from_ref(&cur))).truthy() {
            return None;
        }
        if let Some(p) = past.as_mut() {
            if !p.insert(cur.clone()) {
                return None;
            }
        }
        Some(match &selector {
            None => Ok(cur.clone()),
            Some(s) => call(&env, s, std::slice::from_ref(&cur)),
        })
    })))
}

/// `generateMany(initial, producer, selector => null, decycle => false,
/// depthFirst => false)` (`queries.generate_many`).
///
/// Matches yaql `queries.generate_many` (`generateMany`). Breadth-first by
/// default.
///
/// ```yaql
/// generateMany("1", {"1" => ["2", "3"], "2" => ["4"], "3" => ["5"]}.get($, []))
/// # => ["1", "2", "3", "4", "5"]
/// generateMany(1, range(2 * $, 2 * $ + 2).where($ < 8))
/// # => [1, 2, 3, 4, 5, 6, 7]
/// generateMany(1, range(2 * $, 2 * $ + 2).where($ < 8), depthFirst => true)
/// # => [1, 2, 4, 5, 3, 6, 7]
/// generateMany(0, [($ + 1) mod 3], decycle => true)
/// # => [0, 1, 2]
/// ```
pub(super) fn generate_many(cx: &Cx, a: Args) -> Result<Value> {
    let mut queue: VecDeque<Value> = VecDeque::from([a.get(0).clone()]);
    let producer = a.get(1).clone();
    let selector = opt_fn(a.get(2));
    let mut past: Option<HashSet<Value>> = if a.bool(3) {
        Some(HashSet::new())
    } else {
        None
    };
    let depth_first = a.bool(4);
    let env = cx.env.clone();
    let mut pending: Option<Value> = None;
    Ok(gen(std::iter::from_fn(move || {
        if let Some(item) = pending.take() {
            let produced = tri!(call(&env, &producer, &[item]));
            let items: Vec<Value> = tri!(collect_limited(&env, tri!(py_iter(&produced))));
            if depth_first {
                for x in items.into_iter().rev() {
                    queue.push_front(x);
                }
            } else {
                queue.extend(items);
            }
        }
        loop {
            let item = queue.pop_front()?;
            if let Some(p) = past.as_mut() {
                if !p.insert(item.clone()) {
                    continue;
                }
            }
            pending = Some(item.clone());
            return Some(match &selector {
                None => Ok(item),
                Some(s) => call(&env, s, &[item]),
            });
        }
    })))
}
