//! Constructors and predicates: `datetime`, `datetime(timestamp)`,
//! `datetime(string, format)`, `timespan`, `now`, `localtz`, `utctz`,
//! `isDatetime`, `isTimespan`, `replace` and `format`.

use super::common::*;
use super::dateutil::dateutil_parse;
use super::format::strftime;
use super::strptime::strptime;

use chrono::{Datelike, Timelike};
use runtime::registry::{Args, Cx};
use runtime::{Error, Result, Value};

/// `datetime(year, month, day, hour, minute, second, microsecond, offset)`
/// (`build_datetime`).
///
/// Matches yaql `date_time.build_datetime` (`datetime`).
///
/// ```yaql
/// datetime(2015, 8, 29)
/// # => {"$datetime": "2015-08-29T00:00:00+00:00"}
/// datetime(2015, 8, 29, 10, 30, offset => timespan(hours => 2))
/// # => {"$datetime": "2015-08-29T10:30:00+02:00"}
/// datetime(2015, 13, 1)
/// # error: ValueError
/// ```
pub(super) fn build_datetime(_: &Cx, a: Args) -> Result<Value> {
    let mut v = [0i64; 7];
    for (i, x) in v.iter_mut().enumerate() {
        *x = c_int(&a, i)?;
    }
    let w = build_wall(v[0], v[1], v[2], v[3], v[4], v[5], v[6])?;
    let off = tz_of(ts_of(a.get(7)))?;
    make_dt(w, off)
}

/// `datetime(timestamp, offset)` (`datetime_from_timestamp`).
///
/// Matches yaql `date_time.datetime_from_timestamp` (`datetime`).
///
/// ```yaql
/// datetime(1832333854)
/// # => {"$datetime": "2028-01-24T13:37:34+00:00"}
/// datetime(0, timespan(hours => 3))
/// # => {"$datetime": "1970-01-01T03:00:00+03:00"}
/// ```
pub(super) fn datetime_from_timestamp(_: &Cx, a: Args) -> Result<Value> {
    let off = tz_of(ts_of(a.get(1)))?;
    let us: i128 = match a.get(0) {
        Value::Int(i) => *i as i128 * US_PER_SEC as i128,
        Value::Float(f) => {
            if f.is_nan() {
                return Err(Error::value("Invalid value NaN (not a number)"));
            }
            if f.abs() > 1e14 {
                return Err(overflow("timestamp out of range for platform time_t"));
            }
            (f * 1e6).round_ties_even() as i128
        }
        _ => return Err(overflow("timestamp out of range for platform time_t")),
    };
    if us.abs() > (1i128 << 62) {
        return Err(overflow("timestamp out of range for platform time_t"));
    }
    // Python computes the UTC time first (ValueError out of range), then
    // the local time (OverflowError out of range).
    if !(WALL_MIN as i128..=WALL_MAX as i128).contains(&us) {
        let y = naive(us as i64).year();
        return Err(Error::value(format!("year {y} is out of range")));
    }
    let w = us + off as i128 * US_PER_SEC as i128;
    make_dt(w as i64, off)
}

/// `datetime(string, format)` (`datetime_from_string`): `dateutil.parser`
/// without a format, `datetime.strptime` with one; naive results are UTC.
///
/// Matches yaql `date_time.datetime_from_string` (`datetime`).
///
/// ```yaql
/// datetime("2008-09-03T20:56:35.450686+03:00")
/// # => {"$datetime": "2008-09-03T20:56:35.450686+03:00"}
/// datetime("20080903")
/// # => {"$datetime": "2008-09-03T00:00:00+00:00"}
/// datetime("Tuesday, 21. November 2006 04:30PM", "%A, %d. %B %Y %I:%M%p")
/// # => {"$datetime": "2006-11-21T16:30:00+00:00"}
/// ```
pub(super) fn datetime_from_string(_: &Cx, a: Args) -> Result<Value> {
    let s = a.str(0);
    let (w, off) = match a.get(1) {
        Value::Str(f) if !f.is_empty() => strptime(s, f)?,
        _ => {
            let now = clock_micros();
            dateutil_parse(s, now)?
        }
    };
    make_dt(w, off.unwrap_or(0))
}

/// `timespan(days, hours, minutes, seconds, milliseconds, microseconds)`
/// (`build_timespan`).
///
/// Matches yaql `date_time.build_timespan` (`timespan`).
///
/// ```yaql
/// timespan(days => 1, hours => 2, minutes => 3, seconds => 4, milliseconds => 5)
/// # => {"$timespan": 93784005000}
/// timespan(milliseconds => -1)
/// # => {"$timespan": -1000}
/// timespan(seconds => 1.5)
/// # error: NoMatchingFunctionException
/// ```
pub(super) fn build_timespan(_: &Cx, a: Args) -> Result<Value> {
    let mut v = [0i128; 6];
    for (i, x) in v.iter_mut().enumerate() {
        *x = match a.get(i) {
            Value::BigInt(_) => return Err(overflow("Python int too large to convert to C int")),
            _ => a.int(i)? as i128,
        };
    }
    let us =
        (((v[0] * 24 + v[1]) * 60 + v[2]) * 60 + v[3]) * US_PER_SEC as i128 + v[4] * 1000 + v[5];
    make_ts(us)
}

/// `now(offset)`: the current time with the given offset (naive = UTC when
/// the offset is null).
///
/// Matches yaql `date_time.now` (`now`).
///
/// ```yaql
/// isDatetime(now())
/// # => true
/// now(timespan(hours => 3)).offset
/// # => {"$timespan": 10800000000}
/// ```
pub(super) fn now(_: &Cx, a: Args) -> Result<Value> {
    let off = match a.get(0) {
        Value::TimeSpan(t) => tz_of(*t)?,
        _ => 0,
    };
    make_dt(clock_micros() + off as i64 * US_PER_SEC, off)
}

/// `localtz()`: the local zone offset (UTC until the host clock exists).
///
/// Matches yaql `date_time.localtz` (`localtz`).
///
/// ```yaql
/// isTimespan(localtz())
/// # => true
/// ```
pub(super) fn localtz(_: &Cx, _: Args) -> Result<Value> {
    Ok(Value::TimeSpan(0))
}

/// `utctz()`.
///
/// Matches yaql `date_time.utctz` (`utctz`).
///
/// ```yaql
/// utctz()
/// # => {"$timespan": 0}
/// ```
pub(super) fn utctz(_: &Cx, _: Args) -> Result<Value> {
    Ok(Value::TimeSpan(0))
}

/// `isDatetime(value)`.
///
/// Matches yaql `date_time.is_datetime` (`isDatetime`).
///
/// ```yaql
/// isDatetime(datetime("2015-8-29"))
/// # => true
/// isDatetime('2015-08-29')
/// # => false
/// ```
pub(super) fn is_datetime(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Bool(matches!(a.get(0), Value::DateTime(_))))
}

/// `isTimespan(value)`.
///
/// Matches yaql `date_time.is_timespan` (`isTimespan`).
///
/// ```yaql
/// isTimespan(timespan(milliseconds => -1))
/// # => true
/// isTimespan(1)
/// # => false
/// ```
pub(super) fn is_timespan(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Bool(matches!(a.get(0), Value::TimeSpan(_))))
}

/// `dt.replace(year, month, day, hour, minute, second, microsecond, offset)`
/// (`replace`): replaces wall-clock fields; a new offset keeps the wall time.
///
/// Matches yaql `date_time.replace` (`replace`).
///
/// ```yaql
/// # data: {"$datetime": "2006-11-21T16:30:00+00:00"}
/// $.replace(year => 2009, minute => 40)
/// # => {"$datetime": "2009-11-21T16:40:00+00:00"}
/// $.replace(offset => timespan(hours => 2))
/// # => {"$datetime": "2006-11-21T16:30:00+02:00"}
/// ```
pub(super) fn replace(_: &Cx, a: Args) -> Result<Value> {
    let d = dt_of(a.get(0));
    let n = naive(wall(&d));
    let mut f = [
        n.year() as i64,
        n.month() as i64,
        n.day() as i64,
        n.hour() as i64,
        n.minute() as i64,
        n.second() as i64,
        (n.nanosecond() / 1000) as i64,
    ];
    for (i, x) in f.iter_mut().enumerate() {
        if !a.get(i + 1).is_null() {
            *x = c_int(&a, i + 1)?;
        }
    }
    let off = match a.get(8) {
        Value::TimeSpan(t) => tz_of(*t)?,
        _ => d.offset,
    };
    let w = build_wall(f[0], f[1], f[2], f[3], f[4], f[5], f[6])?;
    make_dt(w, off)
}

/// `dt.format(format)` (`format_`): Python `datetime.strftime`.
///
/// Matches yaql `date_time.format_` (`format`).
///
/// ```yaql
/// datetime(2011, 3, 2, 15, 2, 33).format('%Y-%m-%d %H:%M:%S')
/// # => "2011-03-02 15:02:33"
/// datetime(2011, 3, 2).format('%A %d %B %Y')
/// # => "Wednesday 02 March 2011"
/// ```
pub(super) fn format_(_: &Cx, a: Args) -> Result<Value> {
    let d = dt_of(a.get(0));
    Ok(Value::str(strftime(&d, a.str(1))))
}
