//! Helpers shared by the date and time functions: the wall clock in
//! microseconds, conversions to and from chrono, bounds, and integer
//! arguments.

use runtime::ErrorKind;
use std::sync::Arc;

use chrono::{NaiveDate, NaiveDateTime};
use runtime::registry::Args;
use runtime::value::DateTime;
use runtime::{Error, Result, Value};

pub(super) const US_PER_SEC: i64 = 1_000_000;
pub(super) const US_PER_DAY: i64 = 86_400 * US_PER_SEC;
/// Wall-clock microseconds of `datetime.min` (0001-01-01T00:00:00).
pub(super) const WALL_MIN: i64 = -62_135_596_800 * US_PER_SEC;
/// Wall-clock microseconds of `datetime.max` (9999-12-31T23:59:59.999999).
pub(super) const WALL_MAX: i64 = 253_402_300_800 * US_PER_SEC - 1;

/// The current time in microseconds since the epoch (UTC).
///
/// The engine has no host clock yet, so this reads the system clock and
/// `now()`/`localtz()` behave as on a host whose local zone is UTC.
pub fn clock_micros() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

// ---------------------------------------------------------------------------
// helpers

pub(super) fn dt_of(v: &Value) -> DateTime {
    match v {
        Value::DateTime(d) => **d,
        _ => DateTime {
            micros: 0,
            offset: 0,
        },
    }
}

pub(super) fn ts_of(v: &Value) -> i64 {
    match v {
        Value::TimeSpan(t) => *t,
        _ => 0,
    }
}

pub(super) fn overflow(msg: &str) -> Error {
    Error::new(ErrorKind::OverflowError, msg.to_string())
}

/// Wall-clock microseconds (local time as if it were UTC).
pub(super) fn wall(d: &DateTime) -> i64 {
    d.micros + d.offset as i64 * US_PER_SEC
}

pub(super) fn naive(wall_us: i64) -> NaiveDateTime {
    chrono::DateTime::from_timestamp_micros(wall_us)
        .map(|d| d.naive_utc())
        .unwrap_or_default()
}

pub(super) fn naive_to_wall(n: &NaiveDateTime) -> i64 {
    n.and_utc().timestamp_micros()
}

/// Makes a datetime from wall-clock microseconds and an offset, checking
/// Python's year range.
pub(super) fn make_dt(wall_us: i64, offset: i32) -> Result<Value> {
    if !(WALL_MIN..=WALL_MAX).contains(&wall_us) {
        return Err(overflow("date value out of range"));
    }
    Ok(Value::DateTime(Arc::new(DateTime {
        micros: wall_us - offset as i64 * US_PER_SEC,
        offset,
    })))
}

pub(super) fn make_ts(us: i128) -> Result<Value> {
    match i64::try_from(us) {
        Ok(v) if v.unsigned_abs() / (US_PER_DAY as u64) <= 999_999_999 => Ok(Value::TimeSpan(v)),
        _ => Err(overflow("timedelta value out of range")),
    }
}

/// `_get_tz(offset)`: a fixed offset in whole seconds, within a day.
pub(super) fn tz_of(offset_us: i64) -> Result<i32> {
    if offset_us.abs() >= US_PER_DAY {
        return Err(Error::value(format!(
            "offset must be a timedelta strictly between -timedelta(hours=24) and \
             timedelta(hours=24), not {}.",
            runtime::pyrepr::timespan_str(offset_us)
        )));
    }
    Ok(offset_us.div_euclid(US_PER_SEC) as i32)
}

/// A Python C `int` argument.
pub(super) fn c_int(a: &Args, i: usize) -> Result<i64> {
    let v = a.int(i)?;
    if v > i32::MAX as i64 {
        return Err(overflow("signed integer is greater than maximum"));
    }
    if v < i32::MIN as i64 {
        return Err(overflow("signed integer is less than minimum"));
    }
    Ok(v)
}

pub(super) fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ => {
            if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 {
                29
            } else {
                28
            }
        }
    }
}

/// Python's `datetime(...)` argument checks, then the wall-clock time.
pub(super) fn build_wall(y: i64, mo: i64, d: i64, h: i64, mi: i64, s: i64, us: i64) -> Result<i64> {
    if !(1..=9999).contains(&y) {
        return Err(Error::value(format!("year {y} is out of range")));
    }
    if !(1..=12).contains(&mo) {
        return Err(Error::value("month must be in 1..12"));
    }
    if d < 1 || d > days_in_month(y, mo) {
        return Err(Error::value("day is out of range for month"));
    }
    if !(0..=23).contains(&h) {
        return Err(Error::value("hour must be in 0..23"));
    }
    if !(0..=59).contains(&mi) {
        return Err(Error::value("minute must be in 0..59"));
    }
    if !(0..=59).contains(&s) {
        return Err(Error::value("second must be in 0..59"));
    }
    if !(0..=999_999).contains(&us) {
        return Err(Error::value("microsecond must be in 0..999999"));
    }
    let date = NaiveDate::from_ymd_opt(y as i32, mo as u32, d as u32)
        .ok_or_else(|| Error::value("day is out of range for month"))?;
    let ndt = date
        .and_hms_micro_opt(h as u32, mi as u32, s as u32, us as u32)
        .ok_or_else(|| Error::value("invalid time"))?;
    Ok(naive_to_wall(&ndt))
}

/// Rounds a float number of microseconds half to even, as `timedelta` does.
pub(super) fn round_us(f: f64) -> Result<i128> {
    if f.is_nan() {
        return Err(Error::value("cannot convert float NaN to integer"));
    }
    if f.is_infinite() {
        return Err(overflow("cannot convert float infinity to integer"));
    }
    let r = f.round_ties_even();
    if r.abs() > 1e20 {
        return Err(overflow("timedelta value out of range"));
    }
    Ok(r as i128)
}

// The functions, by concern, in files of their own.
