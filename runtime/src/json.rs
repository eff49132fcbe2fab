//! Tagged JSON (see `shared/conformance/PROTOCOL.md`): plain JSON plus
//! `$dict`, `$datetime`, `$timespan`, `$float` and friends for values JSON
//! cannot spell.

use crate::error::ErrorKind;
use std::sync::Arc;

use num_bigint::BigInt;

use crate::error::{Error, Result};
use crate::value::{DateTime, Dict, Set, Value};

const TAGS: [&str; 6] = [
    "$dict",
    "$datetime",
    "$timespan",
    "$object",
    "$type",
    "$float",
];

mod load;
pub mod split;
pub mod tape;

/// The deepest nesting of arrays and objects tagged JSON text may have:
/// serde_json's recursion limit, which bounds the stack both
/// [`from_tagged_str`] and `serde_json::from_str` use.
pub const MAX_DEPTH: usize = 127;

/// Parses tagged JSON text, straight to a value: the same value or error as
/// [`from_tagged`] of the text parsed by `serde_json::from_str`, without the
/// `serde_json::Value` in between. Object keys are interned. Malformed JSON,
/// including arrays and objects nested deeper than [`MAX_DEPTH`], is a
/// `ValueError` `bad JSON: ...` with serde_json's message.
pub fn from_tagged_str(s: &str) -> Result<Value> {
    load::from_str(s)
}

pub use load::Parser;

/// Parses whitespace-separated tagged JSON documents (jq's input stream):
/// the documents, and the error of the first malformed one, which ends
/// the stream.
pub fn documents_from_str(s: &str) -> (Vec<Value>, Option<Error>) {
    load::documents(s)
}

fn bad_json(e: serde_json::Error) -> Error {
    Error::new(ErrorKind::ValueError, format!("bad JSON: {e}"))
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

/// Whether the tagged JSON of `v` would be longer than about `max` bytes
/// (counting as it walks, so a value whose sublists are shared, which
/// prints exponentially larger than it is, costs at most `max` steps).
pub fn longer_than(v: &Value, max: usize) -> bool {
    // A scalar's printed size; containers go on the stack (only they can
    // make the walk long, so scalars are counted in place).
    fn scalar(v: &Value) -> Option<usize> {
        Some(match v {
            Value::Str(s) => s.len() + 2,
            Value::BigInt(b) => (b.bits() / 3) as usize + 1,
            Value::List(_) | Value::Set(_) | Value::Dict(_) | Value::Pair(_) => return None,
            _ => 8,
        })
    }
    let mut total = 0usize;
    let mut todo: Vec<&Value> = vec![v];
    fn visit<'a>(x: &'a Value, total: &mut usize, todo: &mut Vec<&'a Value>) {
        match scalar(x) {
            Some(n) => *total += n + 2,
            None => todo.push(x),
        }
    }
    while let Some(v) = todo.pop() {
        match v {
            Value::List(l) => l.iter().for_each(|x| visit(x, &mut total, &mut todo)),
            Value::Set(x) => x.iter().for_each(|x| visit(x, &mut total, &mut todo)),
            Value::Dict(d) => d.iter().for_each(|(k, x)| {
                visit(k, &mut total, &mut todo);
                visit(x, &mut total, &mut todo);
            }),
            Value::Pair(p) => {
                visit(&p.0, &mut total, &mut todo);
                visit(&p.1, &mut total, &mut todo);
            }
            other => total += scalar(other).unwrap_or(0),
        }
        total += 2;
        if total > max {
            return true;
        }
    }
    false
}

/// Writes a value as tagged JSON text. Lazy sequences are drained.
///
/// The containers being written are a stack on the heap, not a recursion:
/// a list nested ten million deep is written without overflowing the
/// thread's stack.
pub fn to_tagged_string(v: &Value) -> String {
    let mut out = String::new();
    let mut open: Vec<Open> = Vec::new();
    write(v, &mut out, &mut open);
    while let Some(top) = open.last_mut() {
        match top.next(&mut out) {
            Some(child) => write(&child, &mut out, &mut open),
            None => {
                out.push_str(top.close);
                open.pop();
            }
        }
    }
    out
}

/// [`to_tagged_string`] without the space after each `,` and `:`
/// (jq's `-c`).
pub fn to_compact_string(v: &Value) -> String {
    let text = to_tagged_string(v);
    let mut out = String::with_capacity(text.len());
    let (mut in_str, mut escaped, mut after_sep) = (false, false, false);
    for c in text.chars() {
        if in_str {
            in_str = escaped || c != '"';
            escaped = !escaped && c == '\\';
        } else if after_sep && c == ' ' {
            after_sep = false;
            continue;
        } else {
            in_str = c == '"';
            after_sep = c == ',' || c == ':';
        }
        out.push(c);
    }
    out
}

/// A container being written: what it holds and how far it got.
struct Open {
    items: Items,
    next: usize,
    /// Written after the last item.
    close: &'static str,
}

enum Items {
    List(Arc<crate::value::ListData>),
    Set(Arc<Set>),
    Pair(Arc<(Value, Value)>),
    /// A dict with string keys (`"k": v`).
    Object(Arc<Dict>),
    /// Any other dict, as `{"$dict": [[k, v], ...]}`: item `2i` is the
    /// `i`th key, `2i + 1` its value.
    Entries(Arc<Dict>),
}

impl Open {
    /// Writes the separator before the next item and returns the item,
    /// or `None` at the end.
    fn next(&mut self, out: &mut String) -> Option<Value> {
        let i = self.next;
        let item = match &self.items {
            Items::List(l) => l.get(i).cloned(),
            Items::Set(s) => s.get_index(i).cloned(),
            Items::Pair(p) => [&p.0, &p.1].get(i).map(|v| (*v).clone()),
            Items::Object(d) => d.get_index(i).map(|(k, v)| {
                if i > 0 {
                    out.push_str(", ");
                }
                write_str(k.as_str().unwrap_or(""), out);
                out.push_str(": ");
                v.clone()
            }),
            Items::Entries(d) => d.get_index(i / 2).map(|(k, v)| {
                if i.is_multiple_of(2) {
                    out.push_str(if i > 0 { "], [" } else { "[" });
                    k.clone()
                } else {
                    out.push_str(", ");
                    v.clone()
                }
            }),
        }?;
        if i > 0 && matches!(self.items, Items::List(_) | Items::Set(_) | Items::Pair(_)) {
            out.push_str(", ");
        }
        self.next += 1;
        Some(item)
    }
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

/// Writes a scalar, or the opening of a container (pushed on `open`).
fn write(v: &Value, out: &mut String, open: &mut Vec<Open>) {
    let mut push = |items, opening: &str, close| {
        out.push_str(opening);
        open.push(Open {
            items,
            next: 0,
            close,
        });
    };
    match v {
        Value::List(l) => return push(Items::List(l.clone()), "[", "]"),
        Value::Set(s) => return push(Items::Set(s.clone()), "[", "]"),
        Value::Pair(p) => return push(Items::Pair(p.clone()), "[", "]"),
        Value::Iter(_) => {
            let items: Vec<Value> = crate::seq::iterate_unlimited(v)
                .map(|i| i.filter_map(|x| x.ok()).collect())
                .unwrap_or_default();
            return push(Items::List(Arc::new(items.into())), "[", "]");
        }
        Value::Dict(d) => {
            let all_str = d.keys().all(|k| matches!(k, Value::Str(_)));
            let tag_only = d.len() == 1
                && d.keys()
                    .next()
                    .and_then(|k| k.as_str())
                    .is_some_and(|k| TAGS.contains(&k));
            return if all_str && !tag_only {
                push(Items::Object(d.clone()), "{", "}")
            } else {
                push(Items::Entries(d.clone()), "{\"$dict\": [", "]]}")
            };
        }
        _ => {}
    }
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => out.push_str(&i.to_string()),
        Value::BigInt(b) => out.push_str(&b.to_string()),
        Value::Float(f) => write_float(*f, out),
        Value::Str(s) => write_str(s, out),
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
        Value::List(_) | Value::Set(_) | Value::Pair(_) | Value::Iter(_) | Value::Dict(_) => {
            unreachable!("containers are opened above")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The old path: a `serde_json::Value` first, then [`from_tagged`].
    fn via_serde_value(s: &str) -> Result<Value> {
        let j: serde_json::Value = serde_json::from_str(s).map_err(bad_json)?;
        from_tagged(&j)
    }

    /// A result as text: tagged JSON keeps ints, floats, strings, dates and
    /// non-string-keyed dicts apart.
    fn show(r: Result<Value>) -> String {
        match r {
            Ok(v) => format!("ok {}", to_tagged_string(&v)),
            Err(e) => format!("err {e}"),
        }
    }

    fn load(s: &str) -> String {
        show(from_tagged_str(s))
    }

    fn nested(depth: usize) -> String {
        let open: String = (0..depth)
            .map(|i| if i % 2 == 0 { "[" } else { "{\"k\": " })
            .collect();
        let close: String = (0..depth)
            .rev()
            .map(|i| if i % 2 == 0 { "]" } else { "}" })
            .collect();
        format!("{open}1{close}")
    }

    /// Documents where the two paths could part: numbers at the edges of
    /// i64/u64, tags that are and are not tags, duplicate keys, tag errors
    /// racing each other and JSON errors.
    const CORPUS: &[&str] = &[
        "null",
        "true",
        "false",
        "[]",
        "{}",
        "\"\"",
        " \n[1, 2.5, null, \"x\"] \t",
        "0",
        "-0",
        "-0.0",
        "0.0",
        "1.0",
        "1E2",
        "1e-2",
        "2.5E-3",
        "1e400",
        "-1e400",
        "1e-400",
        "0.1",
        "1.5e300",
        "4.35",
        "9223372036854775807",
        "9223372036854775808",
        "-9223372036854775808",
        "-9223372036854775809",
        "18446744073709551615",
        "18446744073709551616",
        "123456789012345678901234567890",
        "-123456789012345678901234567890",
        "123456789012345678901234567890.0",
        r#""\u00e9\ud83d\ude00 \u0000 a\"b\\c\n\/""#,
        r#"{"\u00e9": "\u00E9", "a\nb": 1}"#,
        r#""\ud800""#,
        r#""\udc00x""#,
        r#"{"a": 1, "b": 2, "a": 3}"#,
        r#"{"a": {"x": 1}, "a": [2], "b": 3, "a": null}"#,
        r#"{"$dict": [[1, "one"], [[1, 2], "pair"], [{"$datetime": "2020-01-02T03:04:05"}, 2]]}"#,
        r#"{"$dict": [[1, 2], [1, 3], [true, 4], [1.0, 5]]}"#,
        r#"{"$dict": []}"#,
        r#"{"$dict": 5}"#,
        r#"{"$dict": [[1]]}"#,
        r#"{"$dict": [{"a": 1}]}"#,
        r#"{"$dict": [[1, 2, {"$object": 1}]]}"#,
        r#"{"$dict": [[{"$type": "t"}, 1]]}"#,
        r#"{"$dict": 1, "$dict": [["k", "v"]]}"#,
        r#"{"$dict": [["k", "v"]], "$dict": 1}"#,
        r#"{"$dict": [[1, 2]], "$datetime": "2020-01-01T00:00:00"}"#,
        r#"{"$dict": [[1, {"$object": 1}]], "x": 1}"#,
        r#"{"$datetime": "2020-01-02T03:04:05"}"#,
        r#"{"$datetime": "2020-01-02T03:04:05.25+05:30"}"#,
        r#"{"$datetime": "2020-01-02T03:04:05Z"}"#,
        r#"{"$datetime": "2020-01-02"}"#,
        r#"{"$datetime": 5}"#,
        r#"{"$timespan": 5}"#,
        r#"{"$timespan": -90000000}"#,
        r#"{"$timespan": -0}"#,
        r#"{"$timespan": 1.0}"#,
        r#"{"$timespan": 1e3}"#,
        r#"{"$timespan": 99999999999999999999}"#,
        r#"{"$timespan": "5"}"#,
        r#"{"$timespan": [{"$object": 1}]}"#,
        r#"{"$timespan": [{"$object": 1}], "x": 1}"#,
        r#"{"$float": "nan"}"#,
        r#"{"$float": "inf"}"#,
        r#"{"$float": "-inf"}"#,
        r#"{"$float": "NaN"}"#,
        r#"{"$float": 1.5}"#,
        r#"{"$float": "nan", "$float": "inf"}"#,
        r#"{"$float": "nan", "x": 1, "$float": 2}"#,
        r#"{"x": 1, "$float": "nan"}"#,
        r#"{"$object": {"id": "x", "type": "T"}}"#,
        r#"{"$type": "io.murano.Object"}"#,
        r#"{"$object": 1, "$type": 2}"#,
        r#"{"$other": 1}"#,
        r#"{"$DICT": 1}"#,
        r#"[{"$object": 1}, {"$type": 1}]"#,
        r#"[{"$object": 1}, "#,
        r#"[{"$object": 1}] x"#,
        r#"{"a": {"$object": 1}, "b": {"$type": "x"}, "a": 2}"#,
        r#"{"a": {"$object": 1}, "b": 1, "a": {"$float": "x"}}"#,
        r#"{"a": [1, {"$float": "x"}], "b": {"$object": 1}}"#,
        r#"{"$serde_json::private::Number": "12"}"#,
        r#"{"$serde_json::private::Number": "1e5"}"#,
        r#"{"$serde_json::private::Number": "-0"}"#,
        r#"{"$serde_json::private::Number": "99999999999999999999"}"#,
        r#"{"$serde_json::private::Number": 12}"#,
        r#"{"$serde_json::private::Number": "x"}"#,
        r#"{"$serde_json::private::Number": "1.5", "a": 1}"#,
        r#"{"$serde_json::private::Number": "1.5"} "#,
        r#"{"a": 1, "$serde_json::private::Number": "12"}"#,
        r#"[{"$serde_json::private::Number": "7"}, 1.25]"#,
        "",
        "   ",
        "[",
        "[1,]",
        "{\"a\" 1}",
        "{\"a\": 1,}",
        "{1: 2}",
        "tru",
        "nul",
        "1 2",
        "01",
        "1.",
        "-",
        "1e",
        "nan",
        "Infinity",
        "'x'",
        "\"a\tb\"",
        "[1] x",
        "\u{feff}1",
    ];

    #[test]
    fn agrees_with_the_serde_value_path() {
        let mut docs: Vec<String> = CORPUS.iter().map(|s| s.to_string()).collect();
        for depth in [1, 2, 64, 127, 128, 129, 130, 500] {
            docs.push(nested(depth));
            docs.push("[".repeat(depth) + &"]".repeat(depth));
            docs.push("{\"a\":".repeat(depth) + "{\"$object\": 1}" + &"}".repeat(depth));
        }
        for d in &docs {
            assert_eq!(load(d), show(via_serde_value(d)), "document {d:?}");
        }
    }

    /// The recorded corpora: every line whole, and its `data` and `result`.
    #[test]
    fn agrees_with_the_serde_value_path_on_the_conformance_corpora() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/conformance");
        if !dir.is_dir() {
            eprintln!("SKIP: ../shared is absent; tagged-JSON corpus agreement not run");
            return;
        }
        let mut n = 0;
        for f in [
            "yaql/cases.jsonl",
            "yaql/fuzz-public.jsonl",
            "muranopl/cases.jsonl",
        ] {
            let Ok(text) = std::fs::read_to_string(dir.join(f)) else {
                eprintln!("SKIP: {f} is absent");
                continue;
            };
            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                let mut docs = vec![line.to_string()];
                if let Ok(serde_json::Value::Object(o)) = serde_json::from_str(line) {
                    for k in ["data", "result"] {
                        if let Some(v) = o.get(k) {
                            docs.push(v.to_string());
                        }
                    }
                }
                for d in &docs {
                    assert_eq!(load(d), show(via_serde_value(d)), "{f}: {d}");
                    n += 1;
                }
            }
        }
        assert!(n > 0);
    }

    #[test]
    fn compact_text_drops_the_spaces_between_tokens_only() {
        let v = from_tagged_str(
            r#"[{"$timespan": 1}, {"a, b": "x: \\\" y", "c": [{"$datetime": "2020-01-02T03:04:05+00:00"}]}]"#,
        )
        .unwrap();
        assert_eq!(
            to_compact_string(&v),
            r#"[{"$timespan":1},{"a, b":"x: \\\" y","c":[{"$datetime":"2020-01-02T03:04:05+00:00"}]}]"#
        );
    }

    #[test]
    fn a_stream_of_documents_reads_to_the_first_malformed_one() {
        let (docs, err) = documents_from_str(" 1 [2, 3]\n{\"a\": {\"$timespan\": 5}}\n\"x\"  ");
        let docs: Vec<String> = docs.iter().map(to_tagged_string).collect();
        assert_eq!(
            docs,
            ["1", "[2, 3]", r#"{"a": {"$timespan": 5}}"#, r#""x""#]
        );
        assert!(err.is_none());
        let (docs, err) = documents_from_str("1\n2\n{\"a\" 3}\n4");
        assert_eq!(docs.len(), 2);
        let err = err.unwrap().to_string();
        assert!(err.contains("bad JSON") && err.contains("line 3"), "{err}");
        assert_eq!(documents_from_str("  \n").0.len(), 0);
    }

    #[test]
    fn tags_round_trip() {
        for s in [
            r#"{"$dict": [[1, "one"], [[1, 2], {"a": null}]]}"#,
            r#"{"$dict": [["$float", 1]]}"#,
            r#"{"$datetime": "2020-01-02T03:04:05.250000+05:30"}"#,
            r#"{"$datetime": "2020-01-02T03:04:05+00:00"}"#,
            r#"{"$timespan": -90000000}"#,
            r#"{"$float": "nan"}"#,
            r#"{"$float": "inf"}"#,
            r#"{"$float": "-inf"}"#,
            r#"[{"$timespan": 1}, {"a": {"$datetime": "2020-01-02T03:04:05+00:00"}}]"#,
        ] {
            let v = from_tagged_str(s).unwrap();
            assert_eq!(to_tagged_string(&v), s);
        }
        let v = from_tagged_str(r#"{"$datetime": "2020-01-02T03:04:05"}"#).unwrap();
        assert!(matches!(&v, Value::DateTime(d) if d.offset == 0));
        assert!(matches!(
            from_tagged_str(r#"{"$timespan": 7}"#),
            Ok(Value::TimeSpan(7))
        ));
        assert_eq!(
            load(r#"{"$object": {"id": "x"}}"#),
            "err ValueError: $object values are not supported here"
        );
        assert_eq!(
            load(r#"{"$type": "T"}"#),
            "err ValueError: $type values are not supported here"
        );
        assert_eq!(
            load(r#"{"$timespan": 1.5}"#),
            "err ValueError: bad $timespan"
        );
        assert_eq!(load(r#"{"$float": "x"}"#), "err ValueError: bad $float");
        assert_eq!(
            load(r#"{"$datetime": "x"}"#),
            "err ValueError: bad datetime x"
        );
        assert_eq!(
            load(r#"{"$dict": [[1]]}"#),
            "err ValueError: $dict pair must be [key, value]"
        );
        // Not alone, a tag key is a plain key.
        assert_eq!(
            load(r#"{"$float": "nan", "x": 1}"#),
            r#"ok {"$float": "nan", "x": 1}"#
        );
    }

    #[test]
    fn numbers() {
        let one = |s: &str| from_tagged_str(s).unwrap();
        assert!(matches!(one("7"), Value::Int(7)));
        assert!(matches!(one("-0"), Value::Int(0)));
        assert!(matches!(one("9223372036854775807"), Value::Int(i64::MAX)));
        assert!(matches!(one("-9223372036854775808"), Value::Int(i64::MIN)));
        for big in [
            "9223372036854775808",
            "-9223372036854775809",
            "18446744073709551616",
            "123456789012345678901234567890",
        ] {
            match one(big) {
                Value::BigInt(ref b) => assert_eq!(b.to_string(), big),
                v => panic!("{big} loaded as {v:?}"),
            }
        }
        let float = |s: &str| match one(s) {
            Value::Float(f) => f,
            v => panic!("{s} loaded as {v:?}"),
        };
        assert_eq!(float("1.0"), 1.0);
        assert_eq!(float("1E2"), 100.0);
        assert_eq!(float("0.1"), 0.1);
        assert_eq!(float("1e400"), f64::INFINITY);
        assert_eq!(float("1e-400"), 0.0);
        assert!(float("-0.0").is_sign_negative());
        assert_eq!(
            float("123456789012345678901234567890.0"),
            1.2345678901234568e29
        );
    }

    #[test]
    fn strings_and_keys() {
        assert_eq!(
            load(r#"{"\u00e9": "\ud83d\ude00\n\u0041"}"#),
            "ok {\"\u{e9}\": \"\u{1f600}\\nA\"}"
        );
        assert_eq!(
            load(r#""\ud800""#),
            "err ValueError: bad JSON: unexpected end of hex escape at line 1 column 8"
        );
        // Duplicate keys: the first place, the last value.
        assert_eq!(
            load(r#"{"a": 1, "b": 2, "a": 3}"#),
            r#"ok {"a": 3, "b": 2}"#
        );
        // Keys are interned: one allocation for a key repeated across objects.
        let v = from_tagged_str(r#"[{"name": 1, "age": 2}, {"age": 3, "name": 4}]"#).unwrap();
        let Value::List(ref l) = v else { panic!() };
        let key = |i: usize, k: usize| match &l[i] {
            Value::Dict(d) => match d.get_index(k).unwrap().0 {
                Value::Str(s) => s.clone(),
                _ => panic!(),
            },
            _ => panic!(),
        };
        assert!(Arc::ptr_eq(&key(0, 0), &key(1, 1)));
        assert!(Arc::ptr_eq(&key(0, 1), &key(1, 0)));
    }

    #[test]
    fn deep_nesting_is_a_json_error() {
        assert!(load(&nested(MAX_DEPTH)).starts_with("ok "));
        for depth in [MAX_DEPTH + 1, 100_000] {
            assert_eq!(
                load(&nested(depth)),
                "err ValueError: bad JSON: recursion limit exceeded at line 1 column 443",
                "depth {depth}"
            );
        }
    }

    #[test]
    fn malformed_json() {
        for (s, msg) in [
            ("", "EOF while parsing a value at line 1 column 0"),
            ("[1,]", "trailing comma at line 1 column 4"),
            ("{\"a\" 1}", "expected `:` at line 1 column 6"),
            ("1 2", "trailing characters at line 1 column 3"),
            (
                "[{\"$object\": 1}, ",
                "EOF while parsing a value at line 1 column 17",
            ),
        ] {
            assert_eq!(load(s), format!("err ValueError: bad JSON: {msg}"), "{s:?}");
        }
    }
}
