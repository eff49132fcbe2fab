//! Python `str()` and `repr()` of values, as yaql's `str()` and string
//! formatting produce them (collections print as Python tuples and dicts).

use crate::num::float_repr;
use crate::value::Value;

/// Python `repr()` of a string: single quotes unless the text contains a
/// single quote and no double quote.
pub fn str_repr(s: &str) -> String {
    let q = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(q);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == q => {
                out.push('\\');
                out.push(c)
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if !is_printable(c) => {
                let n = c as u32;
                if n <= 0xff {
                    out.push_str(&format!("\\x{:02x}", n))
                } else if n <= 0xffff {
                    out.push_str(&format!("\\u{:04x}", n))
                } else {
                    out.push_str(&format!("\\U{:08x}", n))
                }
            }
            c => out.push(c),
        }
    }
    out.push(q);
    out
}

/// `s` safe to print on a terminal: every character Python's `repr`
/// escapes as not printable (C0 and C1 controls, DEL, line and paragraph
/// separators, ...) is written as `repr` writes it (`\n`, `\x1b`,
/// `\u2028`), everything else as it is. Untrusted text (model values,
/// ids, file names, YAQL source) goes through this before it reaches a
/// terminal, so that an escape sequence in it cannot retitle or clear
/// the screen. With `keep_newlines`, `\n` stays a line break (for
/// multi-line messages).
pub fn escape_controls(s: &str, keep_newlines: bool) -> std::borrow::Cow<'_, str> {
    let unsafe_char = |c: char| (c != '\n' || !keep_newlines) && !is_printable_char(c);
    if !s.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if !unsafe_char(c) {
            out.push(c);
            continue;
        }
        let n = c as u32;
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            _ if n <= 0xff => out.push_str(&format!("\\x{n:02x}")),
            _ if n <= 0xffff => out.push_str(&format!("\\u{n:04x}")),
            _ => out.push_str(&format!("\\U{n:08x}")),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Whether Python's `repr` writes `c` as it is (controls are not).
fn is_printable_char(c: char) -> bool {
    !((c as u32) < 0x20 || c as u32 == 0x7f) && is_printable(c)
}

fn is_printable(c: char) -> bool {
    let n = c as u32;
    !((0x80..0xa0).contains(&n)
        || n == 0xad
        || (0xd800..0xe000).contains(&n)
        || n == 0x2028
        || n == 0x2029
        || (0xfff9..=0xfffb).contains(&n))
}

/// Python `repr()` of a value (strings quoted).
pub fn repr(v: &Value) -> String {
    let mut s = String::new();
    write_repr(v, &mut s);
    s
}

/// yaql `str()`: strings as is, `true`/`false`/`null` in YAQL spelling,
/// collections as Python reprs of tuples/dicts.
pub fn to_str(v: &Value) -> String {
    match v {
        Value::Str(s) => s.to_string(),
        Value::Null => "null".into(),
        Value::Bool(true) => "true".into(),
        Value::Bool(false) => "false".into(),
        _ => {
            let mut s = String::new();
            write_repr(v, &mut s);
            s
        }
    }
}

/// What is left to write: values, and the text between them.
enum Work<'a> {
    Value(&'a Value),
    Text(&'static str),
}

/// Writes a repr. The work left is a stack on the heap, not a recursion,
/// so that a value nested millions deep is written without overflowing the
/// thread's stack (a container's items are pushed in reverse, with the
/// text around them).
fn write_repr(v: &Value, out: &mut String) {
    let mut work = vec![Work::Value(v)];
    while let Some(w) = work.pop() {
        match w {
            Work::Text(t) => out.push_str(t),
            Work::Value(v) => write_one(v, out, &mut work),
        }
    }
}

/// Pushes the items of a container, separated by `, `, in reverse.
fn push_items<'a>(items: impl DoubleEndedIterator<Item = Work<'a>>, work: &mut Vec<Work<'a>>) {
    let mut rest = items.rev().peekable();
    while let Some(w) = rest.next() {
        work.push(w);
        if rest.peek().is_some() {
            work.push(Work::Text(", "));
        }
    }
}

fn write_one<'a>(v: &'a Value, out: &mut String, work: &mut Vec<Work<'a>>) {
    match v {
        Value::Null => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Int(i) => out.push_str(&i.to_string()),
        Value::BigInt(b) => out.push_str(&b.to_string()),
        Value::Float(f) => out.push_str(&float_repr(*f)),
        Value::Str(s) => out.push_str(&str_repr(s)),
        Value::List(l) => {
            out.push('(');
            work.push(Work::Text(if l.len() == 1 { ",)" } else { ")" }));
            push_items(l.iter().map(Work::Value), work);
        }
        Value::Dict(d) => {
            out.push('{');
            work.push(Work::Text("}"));
            for (i, (k, x)) in d.iter().rev().enumerate() {
                if i > 0 {
                    work.push(Work::Text(", "));
                }
                work.extend([Work::Value(x), Work::Text(": "), Work::Value(k)]);
            }
        }
        Value::Set(s) if s.is_empty() => out.push_str("frozenset()"),
        Value::Set(s) => {
            out.push_str("frozenset({");
            work.push(Work::Text("})"));
            push_items(s.iter().map(Work::Value), work);
        }
        Value::DateTime(d) => out.push_str(&crate::json::datetime_iso(d, ' ')),
        Value::TimeSpan(t) => out.push_str(&timespan_str(*t)),
        Value::Pair(p) => {
            out.push('(');
            work.push(Work::Text(")"));
            push_items([Work::Value(&p.0), Work::Value(&p.1)].into_iter(), work);
        }
        Value::Lambda(_) => out.push_str("<function>"),
        Value::Iter(_) => out.push_str("<generator object>"),
        Value::Context(_) => out.push_str("<yaql.language.contexts.Context object>"),
        Value::Object(o) => out.push_str(&format!("{}({})", o.class, o.id)),
        Value::Type(t) => out.push_str(&format!("{}/{}@{}", t.name, t.version, t.package)),
    }
}

/// Python `str(timedelta)`: `[-]D day[s], H:MM:SS[.ffffff]`.
pub fn timespan_str(micros: i64) -> String {
    let total = micros as i128;
    let days = total.div_euclid(86_400_000_000);
    let rem = total.rem_euclid(86_400_000_000);
    let secs = rem / 1_000_000;
    let us = rem % 1_000_000;
    let (h, m, s) = (secs / 3600, (secs % 3600) / 60, secs % 60);
    let mut out = String::new();
    if days != 0 {
        out.push_str(&format!(
            "{} day{}, ",
            days,
            if days.abs() == 1 { "" } else { "s" }
        ));
    }
    out.push_str(&format!("{}:{:02}:{:02}", h, m, s));
    if us != 0 {
        out.push_str(&format!(".{:06}", us));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_controls_writes_controls_as_repr_does() {
        let hostile = "a\u{1b}]0;PWNED\u{7}\u{1b}[2J\r\tb\u{85}\u{2028}c\u{7f}";
        assert_eq!(
            escape_controls(hostile, false),
            "a\\x1b]0;PWNED\\x07\\x1b[2J\\r\\tb\\x85\\u2028c\\x7f"
        );
        assert_eq!(escape_controls("x\ny", false), "x\\ny");
        assert_eq!(escape_controls("x\ny", true), "x\ny");
        // Printable text, quotes and backslashes included, is unchanged
        // and not copied.
        let plain = "caf\u{e9} 'q' \\ \u{4e2d}";
        assert!(matches!(
            escape_controls(plain, false),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}
