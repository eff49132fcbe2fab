//! Tagged JSON (see `shared/conformance/PROTOCOL.md`): plain JSON plus
//! `$dict`, `$datetime`, `$timespan`, `$float` and friends for values JSON
//! cannot spell.

use crate::error::ErrorKind;
use std::sync::Arc;

use num_bigint::BigInt;

use crate::error::{Error, Result};
use crate::value::{DateTime, Dict, Value};

const TAGS: [&str; 6] = [
    "$dict",
    "$datetime",
    "$timespan",
    "$object",
    "$type",
    "$float",
];

/// Parses tagged JSON text.
pub fn from_tagged_str(s: &str) -> Result<Value> {
    let j: serde_json::Value = serde_json::from_str(s)
        .map_err(|e| Error::new(ErrorKind::ValueError, format!("bad JSON: {e}")))?;
    from_tagged(&j)
}

fn number(n: &serde_json::Number) -> Result<Value> {
    if let Some(i) = n.as_i64() {
        return Ok(Value::Int(i));
    }
    let text = n.to_string();
    if !text.contains(['.', 'e', 'E']) {
        if let Ok(b) = text.parse::<BigInt>() {
            return Ok(Value::from_bigint(b));
        }
    }
    text.parse::<f64>()
        .map(Value::Float)
        .map_err(|_| Error::value(format!("bad number {text}")))
}

/// Converts a parsed tagged-JSON document to a value.
pub fn from_tagged(j: &serde_json::Value) -> Result<Value> {
    use serde_json::Value as J;
    Ok(match j {
        J::Null => Value::Null,
        J::Bool(b) => Value::Bool(*b),
        J::Number(n) => number(n)?,
        J::String(s) => Value::str(s.as_str()),
        J::Array(a) => Value::list(a.iter().map(from_tagged).collect::<Result<_>>()?),
        J::Object(o) => {
            if o.len() == 1 {
                let (k, v) = o.iter().next().unwrap();
                if TAGS.contains(&k.as_str()) {
                    return from_tag(k, v);
                }
            }
            let mut d = Dict::default();
            d.reserve(o.len());
            for (k, v) in o {
                d.insert(Value::Str(crate::value::intern(k)), from_tagged(v)?);
            }
            Value::dict(d)
        }
    })
}

fn from_tag(tag: &str, v: &serde_json::Value) -> Result<Value> {
    match tag {
        "$dict" => {
            let mut d = Dict::default();
            let pairs = v
                .as_array()
                .ok_or_else(|| Error::value("$dict needs an array of pairs"))?;
            for p in pairs {
                let kv = p
                    .as_array()
                    .filter(|a| a.len() == 2)
                    .ok_or_else(|| Error::value("$dict pair must be [key, value]"))?;
                d.insert(from_tagged(&kv[0])?, from_tagged(&kv[1])?);
            }
            Ok(Value::dict(d))
        }
        "$datetime" => {
            let s = v
                .as_str()
                .ok_or_else(|| Error::value("$datetime needs a string"))?;
            parse_iso(s).ok_or_else(|| Error::value(format!("bad datetime {s}")))
        }
        "$timespan" => match v {
            serde_json::Value::Number(n) => match n.as_i64() {
                Some(i) => Ok(Value::TimeSpan(i)),
                None => Err(Error::value("bad $timespan")),
            },
            _ => Err(Error::value("bad $timespan")),
        },
        "$float" => match v.as_str() {
            Some("nan") => Ok(Value::Float(f64::NAN)),
            Some("inf") => Ok(Value::Float(f64::INFINITY)),
            Some("-inf") => Ok(Value::Float(f64::NEG_INFINITY)),
            _ => Err(Error::value("bad $float")),
        },
        _ => Err(Error::value(format!("{tag} values are not supported here"))),
    }
}

/// Parses an ISO 8601 datetime with optional offset (UTC when absent).
pub fn parse_iso(s: &str) -> Option<Value> {
    if let Ok(d) = chrono::DateTime::parse_from_rfc3339(s) {
        return Some(Value::DateTime(Arc::new(DateTime {
            micros: d.timestamp_micros(),
            offset: d.offset().local_minus_utc(),
        })));
    }
    let nd = chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S%.f").ok()?;
    Some(Value::DateTime(Arc::new(DateTime {
        micros: nd.and_utc().timestamp_micros(),
        offset: 0,
    })))
}

/// Python `datetime.isoformat(sep)`.
pub fn datetime_iso(d: &DateTime, sep: char) -> String {
    let off = chrono::FixedOffset::east_opt(d.offset)
        .unwrap_or(chrono::FixedOffset::east_opt(0).unwrap());
    let Some(utc) = chrono::DateTime::from_timestamp_micros(d.micros) else {
        return "<datetime out of range>".into();
    };
    let local = utc.with_timezone(&off);
    let mut s = local.format(&format!("%Y-%m-%d{sep}%H:%M:%S")).to_string();
    let us = d.micros.rem_euclid(1_000_000);
    if us != 0 {
        s.push_str(&format!(".{:06}", us));
    }
    let o = d.offset;
    let sign = if o < 0 { '-' } else { '+' };
    let a = o.abs();
    s.push_str(&format!("{}{:02}:{:02}", sign, a / 3600, (a % 3600) / 60));
    if a % 60 != 0 {
        s.push_str(&format!(":{:02}", a % 60));
    }
    s
}

/// Writes a value as tagged JSON text. Lazy sequences are drained.
pub fn to_tagged_string(v: &Value) -> String {
    let mut s = String::new();
    write(v, &mut s);
    s
}

fn write_str(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

fn write_float(f: f64, out: &mut String) {
    if f.is_nan() {
        out.push_str(r#"{"$float": "nan"}"#);
    } else if f.is_infinite() {
        out.push_str(if f > 0.0 {
            r#"{"$float": "inf"}"#
        } else {
            r#"{"$float": "-inf"}"#
        });
    } else {
        out.push_str(&crate::num::float_repr(f));
    }
}

fn write_seq<'a>(it: impl Iterator<Item = &'a Value>, out: &mut String) {
    out.push('[');
    for (i, x) in it.enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write(x, out);
    }
    out.push(']');
}

fn write(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => out.push_str(&i.to_string()),
        Value::BigInt(b) => out.push_str(&b.to_string()),
        Value::Float(f) => write_float(*f, out),
        Value::Str(s) => write_str(s, out),
        Value::List(l) => write_seq(l.iter(), out),
        Value::Set(s) => write_seq(s.iter(), out),
        Value::Iter(_) => {
            let items: Vec<Value> = crate::seq::iterate_unlimited(v)
                .map(|i| i.filter_map(|x| x.ok()).collect())
                .unwrap_or_default();
            write_seq(items.iter(), out)
        }
        Value::Pair(p) => write_seq([&p.0, &p.1].into_iter(), out),
        Value::Dict(d) => {
            let all_str = d.keys().all(|k| matches!(k, Value::Str(_)));
            let tag_only = d.len() == 1
                && d.keys()
                    .next()
                    .and_then(|k| k.as_str())
                    .is_some_and(|k| TAGS.contains(&k));
            if all_str && !tag_only {
                out.push('{');
                for (i, (k, x)) in d.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write_str(k.as_str().unwrap_or(""), out);
                    out.push_str(": ");
                    write(x, out);
                }
                out.push('}');
            } else {
                out.push_str("{\"$dict\": [");
                for (i, (k, x)) in d.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push('[');
                    write(k, out);
                    out.push_str(", ");
                    write(x, out);
                    out.push(']');
                }
                out.push_str("]}");
            }
        }
        Value::DateTime(d) => {
            out.push_str("{\"$datetime\": ");
            write_str(&datetime_iso(d, 'T'), out);
            out.push('}');
        }
        Value::TimeSpan(t) => out.push_str(&format!("{{\"$timespan\": {t}}}")),
        Value::Lambda(_) | Value::Context(_) => write_str(&crate::pyrepr::repr(v), out),
        Value::Object(o) => {
            out.push_str("{\"$object\": {\"id\": ");
            write_str(&o.id, out);
            out.push_str(", \"type\": ");
            write_str(&o.class, out);
            out.push_str("}}");
        }
        Value::Type(t) => {
            out.push_str("{\"$type\": ");
            write_str(&t.name, out);
            out.push('}');
        }
    }
}
