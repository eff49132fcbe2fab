//! Python `str` semantics on code points, shared by the string functions:
//! indexes, slices, find, strip, split, replace, `str()`, and the memory
//! guards of functions that grow strings.

use runtime::pyrepr::to_str;
use runtime::registry::Cx;
use runtime::ErrorKind;
use runtime::{Error, Result, Value};

// ---------------------------------------------------------------------------
// Python string helpers (code-point based)
// ---------------------------------------------------------------------------

/// Python `str.isspace()` for one character.
pub(crate) fn py_isspace(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}

/// Number of code points.
pub(crate) fn char_len(s: &str) -> usize {
    if s.is_ascii() {
        s.len()
    } else {
        s.chars().count()
    }
}

/// Byte offset of code point `ci` (clamped to the end).
pub(super) fn byte_of(s: &str, ci: usize) -> usize {
    if s.is_ascii() {
        return ci.min(s.len());
    }
    s.char_indices().nth(ci).map_or(s.len(), |(b, _)| b)
}

/// Code point index of byte offset `b`.
pub(crate) fn char_of(s: &str, b: usize) -> usize {
    if s.is_ascii() {
        b
    } else {
        s[..b].chars().count()
    }
}

/// Python slice bounds normalisation of one index.
pub(super) fn slice_index(i: i64, len: i64) -> i64 {
    if i < 0 {
        (i + len).max(0)
    } else {
        i.min(len)
    }
}

/// Python `s[a:b]` on code points.
pub(super) fn py_slice(s: &str, a: i64, b: i64) -> String {
    let len = char_len(s) as i64;
    let (a, b) = (slice_index(a, len), slice_index(b, len));
    if a >= b {
        return String::new();
    }
    let (ba, bb) = (byte_of(s, a as usize), byte_of(s, b as usize));
    s[ba..bb].to_string()
}

/// `ADJUST_INDICES` of CPython's find/rfind.
pub(super) fn adjust(start: i64, end: Option<i64>, len: i64) -> (i64, i64) {
    let mut end = end.unwrap_or(len);
    if end > len {
        end = len;
    } else if end < 0 {
        end = (end + len).max(0);
    }
    let start = if start < 0 {
        (start + len).max(0)
    } else {
        start
    };
    (start, end)
}

/// Python `str.find(sub, start, end)`.
pub(super) fn py_find(s: &str, sub: &str, start: i64, end: Option<i64>) -> i64 {
    find_with(s, sub, start, end, |w, sub| w.find(sub))
}

/// Python `str.rfind(sub, start, end)`.
pub(super) fn py_rfind(s: &str, sub: &str, start: i64, end: Option<i64>) -> i64 {
    find_with(s, sub, start, end, |w, sub| w.rfind(sub))
}

/// The code-point index of `sub` in `s[start:end]` as `search` finds it
/// (a byte offset in the window), or -1.
fn find_with(
    s: &str,
    sub: &str,
    start: i64,
    end: Option<i64>,
    search: impl Fn(&str, &str) -> Option<usize>,
) -> i64 {
    let len = char_len(s) as i64;
    let (start, end) = adjust(start, end, len);
    let sublen = char_len(sub) as i64;
    if end - start < sublen {
        return -1;
    }
    let (bs, be) = (byte_of(s, start as usize), byte_of(s, end as usize));
    match search(&s[bs..be], sub) {
        Some(b) => start + char_of(&s[bs..], b) as i64,
        None => -1,
    }
}

/// Python `str.strip/lstrip/rstrip(chars)`.
pub(super) fn py_strip<'a>(s: &'a str, chars: Option<&str>, left: bool, right: bool) -> &'a str {
    let pred = |c: char| match chars {
        None => py_isspace(c),
        Some(cs) => cs.contains(c),
    };
    let mut r = s;
    if left {
        r = r.trim_start_matches(pred);
    }
    if right {
        r = r.trim_end_matches(pred);
    }
    r
}

/// Python `str.split(sep, maxsplit)`.
pub(super) fn py_split(s: &str, sep: Option<&str>, maxsplit: i64) -> Result<Vec<Value>> {
    match sep {
        Some("") => Err(Error::value("empty separator")),
        Some(sep) => Ok(if maxsplit < 0 {
            s.split(sep).map(Value::from).collect()
        } else {
            s.splitn(maxsplit.saturating_add(1) as usize, sep)
                .map(Value::from)
                .collect()
        }),
        None => {
            let cs: Vec<(usize, char)> = s.char_indices().collect();
            let n = cs.len();
            let at = |i: usize| if i < n { cs[i].0 } else { s.len() };
            let mut out = Vec::new();
            let mut left = if maxsplit < 0 { i64::MAX } else { maxsplit };
            let mut i = 0;
            while left > 0 {
                left -= 1;
                while i < n && py_isspace(cs[i].1) {
                    i += 1;
                }
                if i == n {
                    break;
                }
                let j = i;
                i += 1;
                while i < n && !py_isspace(cs[i].1) {
                    i += 1;
                }
                out.push(Value::from(&s[at(j)..at(i)]));
            }
            if i < n {
                while i < n && py_isspace(cs[i].1) {
                    i += 1;
                }
                if i != n {
                    out.push(Value::from(&s[at(i)..]));
                }
            }
            Ok(out)
        }
    }
}

/// Python `str.rsplit(sep, maxsplit)`.
pub(super) fn py_rsplit(s: &str, sep: Option<&str>, maxsplit: i64) -> Result<Vec<Value>> {
    match sep {
        Some("") => Err(Error::value("empty separator")),
        Some(sep) => {
            let mut v: Vec<Value> = if maxsplit < 0 {
                s.rsplit(sep).map(Value::from).collect()
            } else {
                s.rsplitn(maxsplit.saturating_add(1) as usize, sep)
                    .map(Value::from)
                    .collect()
            };
            v.reverse();
            Ok(v)
        }
        None => {
            let cs: Vec<(usize, char)> = s.char_indices().collect();
            let at = |i: i64| {
                if (i as usize) < cs.len() {
                    cs[i as usize].0
                } else {
                    s.len()
                }
            };
            let mut out = Vec::new();
            let mut left = if maxsplit < 0 { i64::MAX } else { maxsplit };
            let mut i = cs.len() as i64 - 1;
            while left > 0 {
                left -= 1;
                while i >= 0 && py_isspace(cs[i as usize].1) {
                    i -= 1;
                }
                if i < 0 {
                    break;
                }
                let j = i;
                i -= 1;
                while i >= 0 && !py_isspace(cs[i as usize].1) {
                    i -= 1;
                }
                out.push(Value::from(&s[at(i + 1)..at(j + 1)]));
            }
            if i >= 0 {
                while i >= 0 && py_isspace(cs[i as usize].1) {
                    i -= 1;
                }
                if i >= 0 {
                    out.push(Value::from(&s[..at(i + 1)]));
                }
            }
            out.reverse();
            Ok(out)
        }
    }
}

/// Python `str.replace(old, new, count)` (negative count = all).
pub(super) fn py_replace(s: &str, old: &str, new: &str, count: i64) -> String {
    if old.is_empty() {
        return if count < 0 {
            s.replace(old, new)
        } else {
            s.replacen(old, new, count as usize)
        };
    }
    let limit = usize::try_from(count).unwrap_or(usize::MAX);
    if let &[c] = old.as_bytes() {
        return replace_byte(s, c, new, limit);
    }
    let mut out = String::with_capacity(s.len());
    let mut last = 0;
    // Non-overlapping, left to right, as Python's `str.replace`; a match
    // of a non-empty UTF-8 pattern starts and ends on character
    // boundaries.
    for at in memchr::memmem::find_iter(s.as_bytes(), old.as_bytes()).take(limit) {
        out.push_str(&s[last..at]);
        out.push_str(new);
        last = at + old.len();
    }
    out.push_str(&s[last..]);
    out
}

/// [`py_replace`] of a one-byte (ASCII) pattern: a byte loop, which stays
/// fast however dense the matches (a search call per match does not).
pub(super) fn replace_byte(s: &str, c: u8, new: &str, limit: usize) -> String {
    let mut out = Vec::with_capacity(s.len());
    let mut n = 0;
    for &b in s.as_bytes() {
        if b == c && n < limit {
            out.extend_from_slice(new.as_bytes());
            n += 1;
        } else {
            out.push(b);
        }
    }
    // An ASCII byte replaced by UTF-8 text leaves UTF-8.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// How many non-overlapping times non-empty `old` occurs in `s`.
pub(crate) fn count_matches(s: &str, old: &str) -> usize {
    match old.as_bytes() {
        &[c] => s.bytes().filter(|&b| b == c).count(),
        pattern => memchr::memmem::find_iter(s.as_bytes(), pattern).count(),
    }
}

/// CPython's `sys.getsizeof` of a str (compact representation).
pub(super) fn str_sizeof(s: &str) -> i64 {
    let n = char_len(s) as i64;
    match s.chars().map(|c| c as u32).max().unwrap_or(0) {
        0..=0x7f => 49 + n,
        0x80..=0xff => 73 + n,
        0x100..=0xffff => 74 + 2 * n,
        _ => 76 + 4 * n,
    }
}

/// [`runtime::Env::guard_size`].
pub(crate) fn guard_size(cx: &Cx, bytes: usize) -> Result<()> {
    cx.env.guard_size(bytes)
}

/// `utils.limit_memory_usage(engine, (1 - n, ''), (n, s))`.
pub(super) fn check_repeat_memory(cx: &Cx, s: &str, n: i64) -> Result<()> {
    let quota = match cx.env.options().memory_quota {
        Some(q) if q > 0 => q as i128,
        _ => {
            if n > 0 && (n as i128) * (s.len() as i128) > (1i128 << 32) {
                return Err(Error::new(
                    ErrorKind::MemoryError,
                    "the repeated string would exceed 4 GiB",
                ));
            }
            return runtime::budget::reserve(s.len().saturating_mul(n.max(0) as usize));
        }
    };
    let mut total: i128 = (1 - n as i128) * str_sizeof("") as i128;
    let exceeded = || {
        Error::new(
            ErrorKind::MemoryQuotaExceededException,
            "Expression consumed too much memory",
        )
    };
    if total > quota {
        return Err(exceeded());
    }
    total += n as i128 * str_sizeof(s) as i128;
    if total > quota {
        return Err(exceeded());
    }
    runtime::budget::reserve(s.len().saturating_mul(n.max(0) as usize))
}

/// Python `str(value)` (not yaql's `str()`: `True`, `None`).
pub(crate) fn py_str(v: &Value) -> String {
    match v {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        other => to_str(other),
    }
}
