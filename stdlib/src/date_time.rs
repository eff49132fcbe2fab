//! `yaql/standard_library/date_time.py`: datetimes (an instant plus a
//! fixed UTC offset, as Python aware datetimes with `dateutil` offsets) and
//! timespans (Python `timedelta`, in microseconds).
//!
//! Python naive datetimes are treated as UTC, as yaql does when it outputs
//! them. `now()` and `localtz()` read the system clock in UTC through
//! [`clock_micros`]; the host clock is not built yet.

use runtime::registry::{p, Registry, Ty};
use runtime::Value;

mod arithmetic;
mod common;
mod constructors;
mod dateutil;
mod format;
mod properties;
mod strptime;

use arithmetic::*;
use constructors::*;
pub use dateutil::*;
pub use format::*;
use properties::*;
pub use strptime::*;

// ---------------------------------------------------------------------------

/// Registers the group.
pub fn register(r: &mut Registry) {
    use Ty::{DateTime as D, TimeSpan as T};
    let zero = || Value::TimeSpan(0);
    r.function(
        "datetime",
        vec![
            p("year", Ty::Int),
            p("month", Ty::Int),
            p("day", Ty::Int),
            p("hour", Ty::Int).default(0i64),
            p("minute", Ty::Int).default(0i64),
            p("second", Ty::Int).default(0i64),
            p("microsecond", Ty::Int).default(0i64),
            p("offset", T).default(zero()),
        ],
        build_datetime,
    )
    .pure_();
    r.function(
        "datetime",
        vec![p("string", Ty::Str), p("format", Ty::Str).opt()],
        datetime_from_string,
    );
    r.function(
        "datetime",
        vec![p("timestamp", Ty::Number), p("offset", T).default(zero())],
        datetime_from_timestamp,
    )
    .pure_();
    r.method("format", vec![p("dt", D), p("format", Ty::Str)], format_)
        .pure_();
    r.function(
        "isDatetime",
        vec![p("value", Ty::Any).nullable()],
        is_datetime,
    )
    .pure_();
    r.function(
        "isTimespan",
        vec![p("value", Ty::Any).nullable()],
        is_timespan,
    )
    .pure_();
    r.function("localtz", vec![], localtz);
    r.function("now", vec![p("offset", T).nullable().default(zero())], now);
    r.function("utctz", vec![], utctz).pure_();
    r.function(
        "#operator_*",
        vec![p("n", Ty::Number), p("ts", T)],
        num_by_ts,
    )
    .pure_();
    r.function(
        "#operator_*",
        vec![p("ts", T), p("n", Ty::Number)],
        ts_by_num,
    )
    .pure_();
    r.function("#operator_+", vec![p("dt", D), p("ts", T)], dt_plus_ts)
        .pure_();
    r.function("#operator_+", vec![p("ts", T), p("dt", D)], ts_plus_dt)
        .pure_();
    r.function("#operator_+", vec![p("ts1", T), p("ts2", T)], ts_plus_ts)
        .pure_();
    r.function("#operator_-", vec![p("dt1", D), p("dt2", D)], dt_minus_dt)
        .pure_();
    r.function("#operator_-", vec![p("dt", D), p("ts", T)], dt_minus_ts)
        .pure_();
    r.function("#operator_-", vec![p("ts1", T), p("ts2", T)], ts_minus_ts)
        .pure_();
    r.function(
        "#operator_/",
        vec![p("ts", T), p("n", Ty::Number)],
        ts_div_num,
    )
    .pure_();
    r.function("#operator_/", vec![p("ts1", T), p("ts2", T)], ts_div_ts)
        .pure_();
    for (name, f) in [
        ("#operator_<", lt as runtime::registry::NativeFn),
        ("#operator_<=", le),
        ("#operator_>", gt),
        ("#operator_>=", ge),
    ] {
        r.function(name, vec![p("dt1", D), p("dt2", D)], f).pure_();
        r.function(name, vec![p("ts1", T), p("ts2", T)], f).pure_();
    }
    let props: [(&str, Ty, runtime::registry::NativeFn); 19] = [
        ("date", D, date),
        ("day", D, day),
        ("days", T, days),
        ("hour", D, hour),
        ("hours", T, hours),
        ("microsecond", D, microsecond),
        ("microseconds", T, microseconds),
        ("milliseconds", T, milliseconds),
        ("minute", D, minute),
        ("minutes", T, minutes),
        ("month", D, month),
        ("offset", D, offset),
        ("second", D, second),
        ("seconds", T, seconds),
        ("time", D, time),
        ("timestamp", D, timestamp),
        ("utc", D, utc),
        ("weekday", D, weekday),
        ("year", D, year),
    ];
    for (name, ty, f) in props {
        r.function(&format!("#property#{name}"), vec![p("obj", ty)], f)
            .pure_();
    }
    r.method(
        "replace",
        vec![
            p("dt", D),
            p("year", Ty::Int).opt(),
            p("month", Ty::Int).opt(),
            p("day", Ty::Int).opt(),
            p("hour", Ty::Int).opt(),
            p("minute", Ty::Int).opt(),
            p("second", Ty::Int).opt(),
            p("microsecond", Ty::Int).opt(),
            p("offset", T).opt(),
        ],
        replace,
    )
    .pure_();
    r.function(
        "timespan",
        vec![
            p("days", Ty::Int).default(0i64),
            p("hours", Ty::Int).default(0i64),
            p("minutes", Ty::Int).default(0i64),
            p("seconds", Ty::IntStrict).default(0i64),
            p("milliseconds", Ty::IntStrict).default(0i64),
            p("microseconds", Ty::IntStrict).default(0i64),
        ],
        build_timespan,
    )
    .pure_();
    r.function("#unary_operator_+", vec![p("ts", T)], ts_pos)
        .pure_();
    r.function("#unary_operator_-", vec![p("ts", T)], ts_neg)
        .pure_();
}

#[cfg(test)]
mod tests {
    use runtime::Value;

    fn run(expr: &str, data: Value) -> Result<String, String> {
        let reg = crate::registry(false);
        let prog = compiler::compile(expr, &reg, compiler::CompileOptions::default())
            .map_err(|e| e.to_string())?;
        let env = crate::env(runtime::Options::default());
        let v = prog.eval(&env, data).map_err(|e| e.kind().to_string())?;
        let v = crate::finalize(&env, v).map_err(|e| e.kind().to_string())?;
        Ok(runtime::json::to_tagged_string(&v))
    }

    fn ok(expr: &str) -> String {
        run(expr, Value::Null).unwrap()
    }

    #[test]
    fn format_widths_follow_cpythons_buffer_rule() {
        // Widths pad, within the room CPython gives `strftime` (1024-byte
        // buffers, doubled while under 256 times the format's length).
        assert_eq!(
            ok("datetime(2020, 1, 2).format('%5d|%-5d|%_3m|%05Y')"),
            r#""00002|2|  1|02020""#
        );
        assert_eq!(ok("datetime(2020, 1, 2).format('%10A')"), r#""  Thursday""#);
        assert_eq!(ok("datetime(2020, 1, 2).format('%1000d').len()"), "1000");
        // More than the room: an empty string, as CPython gives, whatever
        // the width (a fuzzer found `%3333333e` panicking).
        assert_eq!(ok("datetime(2020, 1, 2).format('%2047d').len()"), "2047");
        assert_eq!(ok("datetime(2020, 1, 2).format('%2048d')"), r#""""#);
        assert_eq!(ok("datetime(2020, 1, 2).format('%3333333e')"), r#""""#);
        assert_eq!(
            ok("datetime(2020, 1, 2).format('%99999999999999999999999999d')"),
            r#""""#
        );
        assert_eq!(ok("datetime(2020, 1, 2).format('%d' * 300).len()"), "600");
        // Characters, not bytes.
        assert_eq!(ok("datetime(2020, 1, 2).format('é%2046d').len()"), "2047");
        assert_eq!(ok("datetime(2020, 1, 2).format('é%2047d')"), r#""""#);
    }

    #[test]
    fn constructors() {
        assert_eq!(
            ok("datetime(2015, 8, 29, offset => timespan(hours => 2))"),
            r#"{"$datetime": "2015-08-29T00:00:00+02:00"}"#
        );
        assert_eq!(
            ok("datetime(1832333854)"),
            r#"{"$datetime": "2028-01-24T13:37:34+00:00"}"#
        );
        assert_eq!(
            ok(r#"datetime("2008-09-03T20:56:35.450686+03:00")"#),
            r#"{"$datetime": "2008-09-03T20:56:35.450686+03:00"}"#
        );
        assert_eq!(
            ok(r#"datetime("20080903")"#),
            r#"{"$datetime": "2008-09-03T00:00:00+00:00"}"#
        );
        assert_eq!(
            ok(r#"datetime("Tuesday, 21. November 2006 04:30PM", "%A, %d. %B %Y %I:%M%p")"#),
            r#"{"$datetime": "2006-11-21T16:30:00+00:00"}"#
        );
        assert_eq!(
            ok("timespan(days => 1, hours => 2, minutes => 3, seconds => 4, milliseconds => 5, microseconds => 6)"),
            r#"{"$timespan": 93784005006}"#
        );
        assert_eq!(
            run("datetime(2015, 13, 1)", Value::Null),
            Err("ValueError".into())
        );
    }

    #[test]
    fn arithmetic_and_properties() {
        assert_eq!(
            ok("datetime('2010-06-12T05:02:00-05:30') - datetime('2002-07-17T22:14:58-05:30')"),
            r#"{"$timespan": 249374822000000}"#
        );
        assert_eq!(
            ok("datetime(1054333733).time"),
            r#"{"$timespan": 80933000000}"#
        );
        assert_eq!(
            ok("timespan(hours => 37) * 3"),
            r#"{"$timespan": 399600000000}"#
        );
        assert_eq!(ok("timespan(hours => 3) / timespan(hours => 2)"), "1.5");
        assert_eq!(ok("datetime(2015, 8, 29).weekday"), "5");
        assert_eq!(ok("datetime(2015, 8, 29) < datetime(2015, 8, 30)"), "true");
        assert_eq!(ok("-timespan(seconds => 1)"), r#"{"$timespan": -1000000}"#);
    }

    #[test]
    fn formatting() {
        assert_eq!(
            ok("datetime(2011, 3, 2, 15, 2, 33, 12).format('%Y/%j %a %b %I%p %f %z %Z')"),
            r#""2011/061 Wed Mar 03PM 000012 +0000 UTC""#
        );
        assert_eq!(
            ok("datetime(1998, 10, 25, offset => timespan(hours => 2)).format('%H:%M %z|%Z|%-d')"),
            r#""00:00 +0200||25""#
        );
    }
}
