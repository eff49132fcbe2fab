//! Properties of datetimes (`year`, ..., `utc`) and timespans (`days`, ...).

use super::common::*;

use chrono::{Datelike, NaiveDateTime, Timelike};
use runtime::registry::{Args, Cx};
use runtime::{Result, Value};

fn local_of(a: &Args) -> NaiveDateTime {
    naive(wall(&dt_of(a.get(0))))
}

/// `dt.year`.
///
/// Matches yaql `date_time.year` (`#property#year`).
///
/// ```yaql
/// # data: {"$datetime": "2006-11-21T16:30:00+00:00"}
/// $.year
/// # => 2006
/// ```
pub(super) fn year(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Int(local_of(&a).year() as i64))
}
/// `dt.month`.
///
/// Matches yaql `date_time.month` (`#property#month`).
///
/// ```yaql
/// # data: {"$datetime": "2006-11-21T16:30:00+00:00"}
/// $.month
/// # => 11
/// ```
pub(super) fn month(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Int(local_of(&a).month() as i64))
}
/// `dt.day`.
///
/// Matches yaql `date_time.day` (`#property#day`).
///
/// ```yaql
/// # data: {"$datetime": "2006-11-21T16:30:00+00:00"}
/// $.day
/// # => 21
/// ```
pub(super) fn day(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Int(local_of(&a).day() as i64))
}
/// `dt.hour`.
///
/// Matches yaql `date_time.hour` (`#property#hour`).
///
/// ```yaql
/// # data: {"$datetime": "2006-11-21T16:30:00+00:00"}
/// $.hour
/// # => 16
/// ```
pub(super) fn hour(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Int(local_of(&a).hour() as i64))
}
/// `dt.minute`.
///
/// Matches yaql `date_time.minute` (`#property#minute`).
///
/// ```yaql
/// # data: {"$datetime": "2006-11-21T16:30:00+00:00"}
/// $.minute
/// # => 30
/// ```
pub(super) fn minute(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Int(local_of(&a).minute() as i64))
}
/// `dt.second`.
///
/// Matches yaql `date_time.second` (`#property#second`).
///
/// ```yaql
/// # data: {"$datetime": "2006-11-21T16:30:15.000123+02:00"}
/// $.second
/// # => 15
/// ```
pub(super) fn second(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Int(local_of(&a).second() as i64))
}
/// `dt.microsecond`.
///
/// Matches yaql `date_time.microsecond` (`#property#microsecond`).
///
/// ```yaql
/// # data: {"$datetime": "2006-11-21T16:30:15.000123+02:00"}
/// $.microsecond
/// # => 123
/// ```
pub(super) fn microsecond(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Int(wall(&dt_of(a.get(0))).rem_euclid(US_PER_SEC)))
}
/// `dt.weekday`: Monday is 0.
///
/// Matches yaql `date_time.weekday` (`#property#weekday`).
///
/// ```yaql
/// # data: {"$datetime": "2006-11-21T16:30:00+00:00"}
/// $.weekday
/// # => 1
/// ```
pub(super) fn weekday(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Int(
        local_of(&a).weekday().num_days_from_monday() as i64
    ))
}
/// `dt.date`: midnight of the same day, same offset.
///
/// Matches yaql `date_time.date` (`#property#date`).
///
/// ```yaql
/// # data: {"$datetime": "2006-11-21T16:30:15.000123+02:00"}
/// $.date
/// # => {"$datetime": "2006-11-21T00:00:00+02:00"}
/// ```
pub(super) fn date(_: &Cx, a: Args) -> Result<Value> {
    let d = dt_of(a.get(0));
    make_dt(wall(&d).div_euclid(US_PER_DAY) * US_PER_DAY, d.offset)
}
/// `dt.time`: the timespan since midnight.
///
/// Matches yaql `date_time.time` (`#property#time`).
///
/// ```yaql
/// # data: {"$datetime": "2006-11-21T16:30:15.000123+02:00"}
/// $.time
/// # => {"$timespan": 59415000123}
/// ```
pub(super) fn time(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::TimeSpan(
        wall(&dt_of(a.get(0))).rem_euclid(US_PER_DAY),
    ))
}
/// `dt.timestamp`: `(dt.utc - datetime(1970, 1, 1)).total_seconds()`; as
/// `utc` keeps the offset, a non-zero offset counts twice (as in the
/// reference).
///
/// Matches yaql `date_time.timestamp` (`#property#timestamp`).
///
/// ```yaql
/// # data: {"$datetime": "2006-11-21T16:30:00+00:00"}
/// $.timestamp
/// # => 1164126600.0
/// ```
pub(super) fn timestamp(_: &Cx, a: Args) -> Result<Value> {
    let d = dt_of(a.get(0));
    let u = d.micros - d.offset as i64 * US_PER_SEC;
    if !(WALL_MIN..=WALL_MAX).contains(&(u + d.offset as i64 * US_PER_SEC)) {
        return Err(overflow("date value out of range"));
    }
    Ok(Value::Float(u as f64 / 1e6))
}
/// `dt.offset`: a timespan.
///
/// Matches yaql `date_time.offset` (`#property#offset`).
///
/// ```yaql
/// # data: {"$datetime": "2006-11-21T16:30:15.000123+02:00"}
/// $.offset
/// # => {"$timespan": 7200000000}
/// ```
pub(super) fn offset(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::TimeSpan(dt_of(a.get(0)).offset as i64 * US_PER_SEC))
}
/// `dt.utc`: `dt - dt.utcoffset()`, i.e. the UTC wall-clock time (the
/// offset is kept, as in the reference).
///
/// Matches yaql `date_time.utc` (`#property#utc`).
///
/// ```yaql
/// # data: {"$datetime": "2006-11-21T16:30:00+02:00"}
/// $.utc
/// # => {"$datetime": "2006-11-21T14:30:00+02:00"}
/// ```
pub(super) fn utc(_: &Cx, a: Args) -> Result<Value> {
    let d = dt_of(a.get(0));
    make_dt(d.micros, d.offset)
}

fn total_us(a: &Args) -> f64 {
    ts_of(a.get(0)) as f64
}
/// `ts.days`: total days, a float.
///
/// Matches yaql `date_time.days` (`#property#days`).
///
/// ```yaql
/// # data: {"$timespan": 138345005000}
/// $.days
/// # => 1.6012153356481482
/// ```
pub(super) fn days(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Float(total_us(&a) / 86_400_000_000.0))
}
/// `ts.hours`: total hours, a float.
///
/// Matches yaql `date_time.hours` (`#property#hours`).
///
/// ```yaql
/// # data: {"$timespan": 5400000000}
/// $.hours
/// # => 1.5
/// ```
pub(super) fn hours(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Float(total_us(&a) / 3_600_000_000.0))
}
/// `ts.minutes`: total minutes, a float.
///
/// Matches yaql `date_time.minutes` (`#property#minutes`).
///
/// ```yaql
/// # data: {"$timespan": 138345005000}
/// $.minutes
/// # => 2305.7500833333334
/// ```
pub(super) fn minutes(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Float(total_us(&a) / 60_000_000.0))
}
/// `ts.seconds`: total seconds, a float.
///
/// Matches yaql `date_time.seconds` (`#property#seconds`).
///
/// ```yaql
/// # data: {"$timespan": 138345005000}
/// $.seconds
/// # => 138345.005
/// ```
pub(super) fn seconds(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Float(total_us(&a) / 1_000_000.0))
}
/// `ts.milliseconds`: total milliseconds, a float.
///
/// Matches yaql `date_time.milliseconds` (`#property#milliseconds`).
///
/// ```yaql
/// # data: {"$timespan": 138345005000}
/// $.milliseconds
/// # => 138345005.0
/// ```
pub(super) fn milliseconds(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Float(total_us(&a) / 1000.0))
}
/// `ts.microseconds`: total microseconds, an integer.
///
/// Matches yaql `date_time.microseconds` (`#property#microseconds`).
///
/// ```yaql
/// # data: {"$timespan": 138345005000}
/// $.microseconds
/// # => 138345005000
/// ```
pub(super) fn microseconds(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Int(ts_of(a.get(0))))
}
