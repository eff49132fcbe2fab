//! Arithmetic and comparison of datetimes and timespans.

use super::common::*;
use runtime::ErrorKind;

use runtime::registry::{Args, Cx};
use runtime::value::DateTime;
use runtime::{Error, Result, Value};

/// `#operator_+(dt, ts)` (`datetime_plus_timespan`).
///
/// Matches yaql `date_time.datetime_plus_timespan` (`#operator_+`).
///
/// ```yaql
/// datetime(2015, 8, 29) + timespan(days => 3)
/// # => {"$datetime": "2015-09-01T00:00:00+00:00"}
/// ```
pub(super) fn dt_plus_ts(_: &Cx, a: Args) -> Result<Value> {
    let d = dt_of(a.get(0));
    shift(&d, ts_of(a.get(1)))
}

/// `#operator_+(ts, dt)` (`timespan_plus_datetime`).
///
/// Matches yaql `date_time.timespan_plus_datetime` (`#operator_+`).
///
/// ```yaql
/// timespan(hours => 2) + datetime(2015, 8, 29)
/// # => {"$datetime": "2015-08-29T02:00:00+00:00"}
/// ```
pub(super) fn ts_plus_dt(_: &Cx, a: Args) -> Result<Value> {
    let d = dt_of(a.get(1));
    shift(&d, ts_of(a.get(0)))
}

fn shift(d: &DateTime, us: i64) -> Result<Value> {
    match wall(d).checked_add(us) {
        Some(w) => make_dt(w, d.offset),
        None => Err(overflow("date value out of range")),
    }
}

/// `#operator_-(dt, ts)` (`datetime_minus_timespan`).
///
/// Matches yaql `date_time.datetime_minus_timespan` (`#operator_-`).
///
/// ```yaql
/// datetime(2015, 8, 29) - timespan(hours => 1)
/// # => {"$datetime": "2015-08-28T23:00:00+00:00"}
/// ```
pub(super) fn dt_minus_ts(_: &Cx, a: Args) -> Result<Value> {
    let d = dt_of(a.get(0));
    match ts_of(a.get(1)).checked_neg() {
        Some(n) => shift(&d, n),
        None => Err(overflow("date value out of range")),
    }
}

/// `#operator_-(dt1, dt2)` (`datetime_minus_datetime`).
///
/// Matches yaql `date_time.datetime_minus_datetime` (`#operator_-`).
///
/// ```yaql
/// datetime('2010-06-12T05:02:00-05:30') - datetime('2002-07-17T22:14:58-05:30')
/// # => {"$timespan": 249374822000000}
/// datetime(2015, 8, 29) - datetime(2015, 8, 29, offset => timespan(hours => 2))
/// # => {"$timespan": 7200000000}
/// ```
pub(super) fn dt_minus_dt(_: &Cx, a: Args) -> Result<Value> {
    let (x, y) = (dt_of(a.get(0)), dt_of(a.get(1)));
    make_ts(x.micros as i128 - y.micros as i128)
}

/// `#operator_+(ts1, ts2)` (`timespan_plus_timespan`).
///
/// Matches yaql `date_time.timespan_plus_timespan` (`#operator_+`).
///
/// ```yaql
/// timespan(hours => 1) + timespan(minutes => 30)
/// # => {"$timespan": 5400000000}
/// ```
pub(super) fn ts_plus_ts(_: &Cx, a: Args) -> Result<Value> {
    make_ts(ts_of(a.get(0)) as i128 + ts_of(a.get(1)) as i128)
}

/// `#operator_-(ts1, ts2)` (`timespan_minus_timespan`).
///
/// Matches yaql `date_time.timespan_minus_timespan` (`#operator_-`).
///
/// ```yaql
/// timespan(hours => 1) - timespan(minutes => 90)
/// # => {"$timespan": -1800000000}
/// ```
pub(super) fn ts_minus_ts(_: &Cx, a: Args) -> Result<Value> {
    make_ts(ts_of(a.get(0)) as i128 - ts_of(a.get(1)) as i128)
}

fn ts_times(ts: i64, n: &Value) -> Result<Value> {
    match n {
        Value::Int(i) => make_ts(ts as i128 * *i as i128),
        Value::BigInt(b) => {
            if ts == 0 {
                Ok(Value::TimeSpan(0))
            } else {
                let _ = b;
                Err(overflow("Python int too large to convert to C int"))
            }
        }
        Value::Float(f) => make_ts(round_us(ts as f64 * f)?),
        _ => Ok(Value::TimeSpan(ts)),
    }
}

/// `#operator_*(ts, n)` (`timespan_by_num`).
///
/// Matches yaql `date_time.timespan_by_num` (`#operator_*`).
///
/// ```yaql
/// timespan(hours => 37) * 3
/// # => {"$timespan": 399600000000}
/// timespan(hours => 1) * 1.5
/// # => {"$timespan": 5400000000}
/// ```
pub(super) fn ts_by_num(_: &Cx, a: Args) -> Result<Value> {
    ts_times(ts_of(a.get(0)), a.get(1))
}

/// `#operator_*(n, ts)` (`num_by_timespan`).
///
/// Matches yaql `date_time.num_by_timespan` (`#operator_*`).
///
/// ```yaql
/// 2 * timespan(hours => 1)
/// # => {"$timespan": 7200000000}
/// ```
pub(super) fn num_by_ts(_: &Cx, a: Args) -> Result<Value> {
    ts_times(ts_of(a.get(1)), a.get(0))
}

/// `#operator_/(ts, n)` (`div_timespan_by_num`): true division, rounded to
/// microseconds half to even.
///
/// Matches yaql `date_time.div_timespan_by_num` (`#operator_/`).
///
/// ```yaql
/// timespan(hours => 3) / 2
/// # => {"$timespan": 5400000000}
/// timespan(hours => 3) / 0
/// # error: ZeroDivisionError
/// ```
pub(super) fn ts_div_num(_: &Cx, a: Args) -> Result<Value> {
    let ts = ts_of(a.get(0));
    let n = a.get(1).as_f64().unwrap_or(0.0);
    if n == 0.0 {
        return Err(Error::new(ErrorKind::ZeroDivisionError, "division by zero"));
    }
    make_ts(round_us(ts as f64 / n)?)
}

/// `#operator_/(ts1, ts2)` (`div_timespans`): a float.
///
/// Matches yaql `date_time.div_timespans` (`#operator_/`).
///
/// ```yaql
/// timespan(hours => 3) / timespan(hours => 2)
/// # => 1.5
/// ```
pub(super) fn ts_div_ts(_: &Cx, a: Args) -> Result<Value> {
    let (x, y) = (ts_of(a.get(0)), ts_of(a.get(1)));
    if y == 0 {
        return Err(Error::new(
            ErrorKind::ZeroDivisionError,
            "float division by zero",
        ));
    }
    Ok(Value::Float(x as f64 / y as f64))
}

/// `#unary_operator_-(ts)` (`negative_timespan`).
///
/// Matches yaql `date_time.negative_timespan` (`#unary_operator_-`).
///
/// ```yaql
/// -timespan(seconds => 1)
/// # => {"$timespan": -1000000}
/// ```
pub(super) fn ts_neg(_: &Cx, a: Args) -> Result<Value> {
    make_ts(-(ts_of(a.get(0)) as i128))
}

/// `#unary_operator_+(ts)` (`positive_timespan`).
///
/// Matches yaql `date_time.positive_timespan` (`#unary_operator_+`).
///
/// ```yaql
/// +timespan(hours => 1)
/// # => {"$timespan": 3600000000}
/// ```
pub(super) fn ts_pos(_: &Cx, a: Args) -> Result<Value> {
    Ok(a.get(0).clone())
}

fn key(v: &Value) -> i64 {
    match v {
        Value::DateTime(d) => d.micros,
        Value::TimeSpan(t) => *t,
        _ => 0,
    }
}

/// `#operator_<` for datetimes and timespans (`datetime_lt_datetime`,
/// `timespan_lt_timespan`).
///
/// Matches yaql `date_time.datetime_lt_datetime` and
/// `date_time.timespan_lt_timespan` (`#operator_<`).
///
/// ```yaql
/// datetime(2015, 8, 29) < datetime(2015, 8, 30)
/// # => true
/// timespan(hours => 1) < timespan(minutes => 30)
/// # => false
/// ```
pub(super) fn lt(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Bool(key(a.get(0)) < key(a.get(1))))
}
/// `#operator_<=` (`datetime_lte_datetime`, `timespan_lte_timespan`).
///
/// Matches yaql `date_time.datetime_lte_datetime` and
/// `date_time.timespan_lte_timespan` (`#operator_<=`).
///
/// ```yaql
/// datetime(2015, 8, 29) <= datetime(2015, 8, 29)
/// # => true
/// timespan(hours => 1) <= timespan(minutes => 59)
/// # => false
/// ```
pub(super) fn le(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Bool(key(a.get(0)) <= key(a.get(1))))
}
/// `#operator_>` (`datetime_gt_datetime`, `timespan_gt_timespan`).
///
/// Matches yaql `date_time.datetime_gt_datetime` and
/// `date_time.timespan_gt_timespan` (`#operator_>`).
///
/// ```yaql
/// datetime(2015, 8, 29) > datetime(2015, 8, 30)
/// # => false
/// timespan(hours => 1) > timespan(minutes => 30)
/// # => true
/// ```
pub(super) fn gt(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Bool(key(a.get(0)) > key(a.get(1))))
}
/// `#operator_>=` (`datetime_gte_datetime`, `timespan_gte_timespan`).
///
/// Matches yaql `date_time.datetime_gte_datetime` and
/// `date_time.timespan_gte_timespan` (`#operator_>=`).
///
/// ```yaql
/// datetime(2015, 8, 29, offset => timespan(hours => 2)) >= datetime(2015, 8, 28, 22)
/// # => true
/// timespan(hours => 1) >= timespan(minutes => 61)
/// # => false
/// ```
pub(super) fn ge(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Bool(key(a.get(0)) >= key(a.get(1))))
}
