//! `yaql/standard_library/strings.py`: string functions and operators with
//! Python `str` semantics on code points (`len`, `substring`, `indexOf`,
//! `split`, `trim`, `format`, ...).

use num_bigint::BigInt;
use num_traits::{Signed, ToPrimitive, Zero};
use runtime::pyrepr::{repr, to_str};
use runtime::registry::{kw, p, var, Args, Cx, Registry, Ty};
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
fn byte_of(s: &str, ci: usize) -> usize {
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
fn slice_index(i: i64, len: i64) -> i64 {
    if i < 0 {
        (i + len).max(0)
    } else {
        i.min(len)
    }
}

/// Python `s[a:b]` on code points.
fn py_slice(s: &str, a: i64, b: i64) -> String {
    let len = char_len(s) as i64;
    let (a, b) = (slice_index(a, len), slice_index(b, len));
    if a >= b {
        return String::new();
    }
    let (ba, bb) = (byte_of(s, a as usize), byte_of(s, b as usize));
    s[ba..bb].to_string()
}

/// `ADJUST_INDICES` of CPython's find/rfind.
fn adjust(start: i64, end: Option<i64>, len: i64) -> (i64, i64) {
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
fn py_find(s: &str, sub: &str, start: i64, end: Option<i64>) -> i64 {
    let len = char_len(s) as i64;
    let (start, end) = adjust(start, end, len);
    let sublen = char_len(sub) as i64;
    if end - start < sublen {
        return -1;
    }
    let (bs, be) = (byte_of(s, start as usize), byte_of(s, end as usize));
    match s[bs..be].find(sub) {
        Some(b) => start + char_of(&s[bs..], b) as i64,
        None => -1,
    }
}

/// Python `str.rfind(sub, start, end)`.
fn py_rfind(s: &str, sub: &str, start: i64, end: Option<i64>) -> i64 {
    let len = char_len(s) as i64;
    let (start, end) = adjust(start, end, len);
    let sublen = char_len(sub) as i64;
    if end - start < sublen {
        return -1;
    }
    let (bs, be) = (byte_of(s, start as usize), byte_of(s, end as usize));
    match s[bs..be].rfind(sub) {
        Some(b) => start + char_of(&s[bs..], b) as i64,
        None => -1,
    }
}

/// Python `str.strip/lstrip/rstrip(chars)`.
fn py_strip<'a>(s: &'a str, chars: Option<&str>, left: bool, right: bool) -> &'a str {
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
fn py_split(s: &str, sep: Option<&str>, maxsplit: i64) -> Result<Vec<Value>> {
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
fn py_rsplit(s: &str, sep: Option<&str>, maxsplit: i64) -> Result<Vec<Value>> {
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
fn py_replace(s: &str, old: &str, new: &str, count: i64) -> String {
    if count < 0 {
        s.replace(old, new)
    } else {
        s.replacen(old, new, count as usize)
    }
}

/// CPython's `sys.getsizeof` of a str (compact representation).
fn str_sizeof(s: &str) -> i64 {
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
fn check_repeat_memory(cx: &Cx, s: &str, n: i64) -> Result<()> {
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

// ---------------------------------------------------------------------------
// str.format
// ---------------------------------------------------------------------------

/// Parsed Python format spec.
#[derive(Default)]
struct Spec {
    fill: Option<char>,
    align: Option<char>,
    sign: Option<char>,
    alt: bool,
    zero: bool,
    width: usize,
    grouping: Option<char>,
    precision: Option<usize>,
    ty: Option<char>,
}

fn parse_spec(spec: &str) -> Result<Spec> {
    let cs: Vec<char> = spec.chars().collect();
    let mut sp = Spec::default();
    let mut i = 0;
    let is_align = |c: char| matches!(c, '<' | '>' | '=' | '^');
    if cs.len() >= 2 && is_align(cs[1]) {
        sp.fill = Some(cs[0]);
        sp.align = Some(cs[1]);
        i = 2;
    } else if !cs.is_empty() && is_align(cs[0]) {
        sp.align = Some(cs[0]);
        i = 1;
    }
    if i < cs.len() && matches!(cs[i], '+' | '-' | ' ') {
        sp.sign = Some(cs[i]);
        i += 1;
    }
    if i < cs.len() && cs[i] == 'z' {
        i += 1;
    }
    if i < cs.len() && cs[i] == '#' {
        sp.alt = true;
        i += 1;
    }
    if i < cs.len() && cs[i] == '0' {
        sp.zero = true;
        i += 1;
    }
    let mut w = String::new();
    while i < cs.len() && cs[i].is_ascii_digit() {
        w.push(cs[i]);
        i += 1;
    }
    if !w.is_empty() {
        sp.width = w
            .parse()
            .map_err(|_| Error::value("Too many decimal digits in format string"))?;
    }
    if i < cs.len() && matches!(cs[i], ',' | '_') {
        sp.grouping = Some(cs[i]);
        i += 1;
    }
    if i < cs.len() && cs[i] == '.' {
        i += 1;
        let mut pr = String::new();
        while i < cs.len() && cs[i].is_ascii_digit() {
            pr.push(cs[i]);
            i += 1;
        }
        if pr.is_empty() {
            return Err(Error::value("Format specifier missing precision"));
        }
        sp.precision = Some(
            pr.parse()
                .map_err(|_| Error::value("Too many decimal digits in format string"))?,
        );
    }
    if i < cs.len() {
        sp.ty = Some(cs[i]);
        i += 1;
    }
    if i < cs.len() {
        return Err(Error::value("Invalid format specifier"));
    }
    Ok(sp)
}

/// Pads `body` (with an optional sign/prefix) to the spec's width.
fn pad(sp: &Spec, prefix: &str, body: &str, default_align: char) -> String {
    let (fill, align) = if sp.zero && sp.align.is_none() && default_align == '>' {
        ('0', '=')
    } else {
        (sp.fill.unwrap_or(' '), sp.align.unwrap_or(default_align))
    };
    let len = char_len(prefix) + char_len(body);
    if len >= sp.width {
        return format!("{prefix}{body}");
    }
    let n = sp.width - len;
    let f = |k: usize| (0..k).map(|_| fill).collect::<String>();
    match align {
        '<' => format!("{prefix}{body}{}", f(n)),
        '^' => format!("{}{prefix}{body}{}", f(n / 2), f(n - n / 2)),
        '=' => format!("{prefix}{}{body}", f(n)),
        _ => format!("{}{prefix}{body}", f(n)),
    }
}

fn group_digits(digits: &str, sep: char, every: usize) -> String {
    let cs: Vec<char> = digits.chars().collect();
    let mut out = String::new();
    for (i, c) in cs.iter().enumerate() {
        let left = cs.len() - i;
        if i > 0 && left == (left / every) * every {
            out.push(sep);
        }
        out.push(*c);
    }
    out
}

fn sign_str(neg: bool, sign: Option<char>) -> &'static str {
    match (neg, sign) {
        (true, _) => "-",
        (false, Some('+')) => "+",
        (false, Some(' ')) => " ",
        _ => "",
    }
}

fn format_int(n: &BigInt, sp: &Spec) -> Result<String> {
    if let Some(t @ ('e' | 'E' | 'f' | 'F' | 'g' | 'G' | '%')) = sp.ty {
        let _ = t;
        return format_float(n.to_f64().unwrap_or(f64::INFINITY), sp);
    }
    if sp.precision.is_some() {
        return Err(Error::value(
            "Precision not allowed in integer format specifier",
        ));
    }
    let mag = n.abs();
    let (digits, prefix) = match sp.ty {
        None | Some('d') | Some('n') => (mag.to_str_radix(10), ""),
        Some('b') => (mag.to_str_radix(2), "0b"),
        Some('o') => (mag.to_str_radix(8), "0o"),
        Some('x') => (mag.to_str_radix(16), "0x"),
        Some('X') => (mag.to_str_radix(16).to_uppercase(), "0X"),
        Some('c') => {
            let c = n.to_u32().and_then(char::from_u32).ok_or_else(|| {
                Error::new(ErrorKind::OverflowError, "%c arg not in range(0x110000)")
            })?;
            return Ok(pad(sp, "", &c.to_string(), '<'));
        }
        Some(t) => {
            return Err(Error::value(format!(
                "Unknown format code '{t}' for object of type 'int'"
            )))
        }
    };
    let digits = match sp.grouping {
        Some(g) => {
            let every = if matches!(sp.ty, Some('b' | 'o' | 'x' | 'X')) {
                4
            } else {
                3
            };
            group_digits(&digits, g, every)
        }
        None => digits,
    };
    let pre = format!(
        "{}{}",
        sign_str(n.is_negative(), sp.sign),
        if sp.alt { prefix } else { "" }
    );
    Ok(pad(sp, &pre, &digits, '>'))
}

/// Python-style exponent notation from Rust's `{:e}` output.
fn py_exp(x: f64, prec: usize, upper: bool) -> String {
    let s = format!("{:.*e}", prec, x);
    let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
    let e: i32 = e.parse().unwrap_or(0);
    let out = format!(
        "{}e{}{:02}",
        m,
        if e < 0 { '-' } else { '+' },
        e.unsigned_abs()
    );
    if upper {
        out.to_uppercase()
    } else {
        out
    }
}

fn strip_zeros(s: &str) -> String {
    if let Some((m, e)) = s.split_once(['e', 'E']) {
        let sep = if s.contains('E') { 'E' } else { 'e' };
        let m = if m.contains('.') {
            m.trim_end_matches('0').trim_end_matches('.')
        } else {
            m
        };
        format!("{m}{sep}{e}")
    } else if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s.to_string()
    }
}

/// `g`-style formatting of a non-negative finite float.
fn format_general(x: f64, p: usize, alt: bool, upper: bool, repr_like: bool) -> String {
    let p = p.max(1);
    let es = format!("{:.*e}", p - 1, x);
    let exp: i32 = es
        .split_once('e')
        .map_or(0, |(_, e)| e.parse().unwrap_or(0));
    let limit = if repr_like { p as i32 - 1 } else { p as i32 };
    let out = if exp >= -4 && exp < limit.max(if repr_like { 1 } else { 0 }) {
        let dec = (p as i32 - 1 - exp).max(0) as usize;
        let s = format!("{:.*}", dec, x);
        if alt {
            s
        } else {
            let s = strip_zeros(&s);
            if repr_like && !s.contains('.') {
                format!("{s}.0")
            } else {
                s
            }
        }
    } else {
        let s = py_exp(x, p - 1, upper);
        if alt {
            s
        } else {
            strip_zeros(&s)
        }
    };
    if upper {
        out.to_uppercase()
    } else {
        out
    }
}

fn format_float(f: f64, sp: &Spec) -> Result<String> {
    let neg = f.is_sign_negative() && !f.is_nan();
    let x = f.abs();
    let upper = matches!(sp.ty, Some('E' | 'F' | 'G'));
    let body = if !x.is_finite() {
        let s = if x.is_nan() { "nan" } else { "inf" };
        let s = if upper {
            s.to_uppercase()
        } else {
            s.to_string()
        };
        if sp.ty == Some('%') {
            format!("{s}%")
        } else {
            s
        }
    } else {
        match sp.ty {
            Some('f' | 'F') => format!("{:.*}", sp.precision.unwrap_or(6), x),
            Some('e' | 'E') => py_exp(x, sp.precision.unwrap_or(6), upper),
            Some('g' | 'G' | 'n') => {
                format_general(x, sp.precision.unwrap_or(6), sp.alt, upper, false)
            }
            Some('%') => format!("{:.*}%", sp.precision.unwrap_or(6), x * 100.0),
            None => match sp.precision {
                None => runtime::num::float_repr(x),
                Some(p) => format_general(x, p, sp.alt, false, true),
            },
            Some(t) => {
                return Err(Error::value(format!(
                    "Unknown format code '{t}' for object of type 'float'"
                )))
            }
        }
    };
    let body = match sp.grouping {
        Some(g) if x.is_finite() => {
            let (int, rest) = match body.find(|c: char| !c.is_ascii_digit()) {
                Some(i) => body.split_at(i),
                None => (body.as_str(), ""),
            };
            format!("{}{}", group_digits(int, g, 3), rest)
        }
        _ => body,
    };
    Ok(pad(sp, sign_str(neg, sp.sign), &body, '>'))
}

fn format_str(s: &str, sp: &Spec) -> Result<String> {
    if !matches!(sp.ty, None | Some('s')) {
        return Err(Error::value(format!(
            "Unknown format code '{}' for object of type 'str'",
            sp.ty.unwrap_or(' ')
        )));
    }
    if sp.sign.is_some() {
        return Err(Error::value("Sign not allowed in string format specifier"));
    }
    if sp.align == Some('=') {
        return Err(Error::value(
            "'=' alignment not allowed in string format specifier",
        ));
    }
    let body: String = match sp.precision {
        Some(p) => s.chars().take(p).collect(),
        None => s.to_string(),
    };
    Ok(pad(sp, "", &body, '<'))
}

/// Python `format(value, spec)`; a width or precision past `quota` bytes
/// is refused before anything is printed.
fn format_value(v: &Value, spec: &str, quota: usize) -> Result<String> {
    if spec.is_empty() {
        return Ok(py_str(v));
    }
    let sp = parse_spec(spec)?;
    if sp.width.max(sp.precision.unwrap_or(0)) > quota {
        return Err(Error::new(
            ErrorKind::MemoryQuotaExceededException,
            "Expression consumed too much memory",
        ));
    }
    // Rust's formatter takes precisions up to 65535 (Python, up to
    // 2**31-1).
    if sp.precision.is_some_and(|p| p > u16::MAX as usize) {
        return Err(Error::value("precision too big"));
    }
    match v {
        Value::Str(s) => format_str(s, &sp),
        Value::Int(i) => format_int(&BigInt::from(*i), &sp),
        Value::BigInt(b) => format_int(b, &sp),
        Value::Bool(b) => format_int(&BigInt::from(*b as i64), &sp),
        Value::Float(f) => format_float(*f, &sp),
        other => Err(Error::type_(format!(
            "unsupported format string passed to {}.__format__",
            other.type_name()
        ))),
    }
}

/// Python `ascii()`.
fn py_ascii(v: &Value) -> String {
    let mut out = String::new();
    for c in repr(v).chars() {
        let n = c as u32;
        if n < 0x80 {
            out.push(c)
        } else if n <= 0xff {
            out.push_str(&format!("\\x{n:02x}"))
        } else if n <= 0xffff {
            out.push_str(&format!("\\u{n:04x}"))
        } else {
            out.push_str(&format!("\\U{n:08x}"))
        }
    }
    out
}

struct Fmt<'a> {
    args: &'a [Value],
    kwargs: &'a [(std::sync::Arc<str>, Value)],
    auto: Option<usize>,
    manual: bool,
    /// The memory quota: no field may be padded or printed wider.
    quota: usize,
}

impl Fmt<'_> {
    fn lookup(&mut self, name: &str) -> Result<Value> {
        // split first part from accessors
        let end = name.find(['.', '[']).unwrap_or(name.len());
        let (first, mut rest) = name.split_at(end);
        let mut v = if first.is_empty() {
            if self.manual {
                return Err(Error::value(
                    "cannot switch from manual field specification to automatic field numbering",
                ));
            }
            let i = self.auto.unwrap_or(0);
            self.auto = Some(i + 1);
            self.args.get(i).cloned().ok_or_else(|| {
                Error::index(format!(
                    "Replacement index {i} out of range for positional args tuple"
                ))
            })?
        } else if first.chars().all(|c| c.is_ascii_digit()) {
            if self.auto.is_some() {
                return Err(Error::value(
                    "cannot switch from automatic field numbering to manual field specification",
                ));
            }
            self.manual = true;
            let i: usize = first.parse().unwrap_or(usize::MAX);
            self.args.get(i).cloned().ok_or_else(|| {
                Error::index(format!(
                    "Replacement index {i} out of range for positional args tuple"
                ))
            })?
        } else {
            self.kwargs
                .iter()
                .find(|(k, _)| &**k == first)
                .map(|(_, v)| v.clone())
                .ok_or_else(|| Error::key(repr(&Value::str(first))))?
        };
        while !rest.is_empty() {
            if let Some(r) = rest.strip_prefix('.') {
                let end = r.find(['.', '[']).unwrap_or(r.len());
                let attr = &r[..end];
                if attr.is_empty() {
                    return Err(Error::value("Empty attribute in format string"));
                }
                return Err(Error::new(
                    ErrorKind::AttributeError,
                    format!("'{}' object has no attribute '{}'", v.type_name(), attr),
                ));
            } else if let Some(r) = rest.strip_prefix('[') {
                let close = r
                    .find(']')
                    .ok_or_else(|| Error::value("Missing ']' in format string"))?;
                let key = &r[..close];
                if key.is_empty() {
                    return Err(Error::value("Empty attribute in format string"));
                }
                rest = &r[close + 1..];
                if !rest.is_empty() && !rest.starts_with(['.', '[']) {
                    return Err(Error::value(
                        "Only '.' or '[' may follow ']' in format field specifier",
                    ));
                }
                let k = if key.chars().all(|c| c.is_ascii_digit()) {
                    Value::Int(key.parse().unwrap_or(i64::MAX))
                } else {
                    Value::str(key)
                };
                v = index_value(&v, &k)?;
            } else {
                return Err(Error::value(
                    "Only '.' or '[' may follow ']' in format field specifier",
                ));
            }
        }
        Ok(v)
    }

    fn render(&mut self, fs: &str, depth: usize) -> Result<String> {
        if depth > 2 {
            return Err(Error::value("Max string recursion exceeded"));
        }
        let cs: Vec<char> = fs.chars().collect();
        let mut out = String::new();
        let mut i = 0;
        while i < cs.len() {
            let c = cs[i];
            if c == '{' {
                if i + 1 < cs.len() && cs[i + 1] == '{' {
                    out.push('{');
                    i += 2;
                    continue;
                }
                // find the matching '}'
                let mut level = 1;
                let mut j = i + 1;
                while j < cs.len() {
                    match cs[j] {
                        '{' => level += 1,
                        '}' => {
                            level -= 1;
                            if level == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    j += 1;
                }
                if j >= cs.len() {
                    return Err(Error::value("expected '}' before end of string"));
                }
                let field: String = cs[i + 1..j].iter().collect();
                let piece = self.field(&field, depth)?;
                if out.len() + piece.len() > self.quota {
                    return Err(Error::new(
                        ErrorKind::MemoryQuotaExceededException,
                        "Expression consumed too much memory",
                    ));
                }
                out.push_str(&piece);
                i = j + 1;
            } else if c == '}' {
                if i + 1 < cs.len() && cs[i + 1] == '}' {
                    out.push('}');
                    i += 2;
                    continue;
                }
                return Err(Error::value("Single '}' encountered in format string"));
            } else {
                out.push(c);
                i += 1;
            }
        }
        Ok(out)
    }

    fn field(&mut self, field: &str, depth: usize) -> Result<String> {
        // field name ends at the first '!' or ':' outside brackets
        let mut in_br = false;
        let mut end = field.len();
        for (b, c) in field.char_indices() {
            match c {
                '[' => in_br = true,
                ']' => in_br = false,
                '!' | ':' if !in_br => {
                    end = b;
                    break;
                }
                _ => {}
            }
        }
        let name = &field[..end];
        let mut rest = &field[end..];
        let mut conv = None;
        if let Some(r) = rest.strip_prefix('!') {
            let mut it = r.chars();
            let c = it.next().ok_or_else(|| {
                Error::value("end of string while looking for conversion specifier")
            })?;
            conv = Some(c);
            rest = it.as_str();
            if !rest.is_empty() && !rest.starts_with(':') {
                return Err(Error::value("expected ':' after conversion specifier"));
            }
        }
        let spec = rest.strip_prefix(':').unwrap_or("");
        let v = self.lookup(name)?;
        let spec = if spec.contains('{') {
            self.render(spec, depth + 1)?
        } else {
            spec.to_string()
        };
        let v = match conv {
            None => v,
            Some('r') => Value::str(repr(&v)),
            Some('s') => Value::str(py_str(&v)),
            Some('a') => Value::str(py_ascii(&v)),
            Some(c) => return Err(Error::value(format!("Unknown conversion specifier {c}"))),
        };
        format_value(&v, &spec, self.quota)
    }
}

fn index_value(v: &Value, k: &Value) -> Result<Value> {
    match (v, k) {
        (Value::List(l), Value::Int(i)) => l
            .get(*i as usize)
            .cloned()
            .ok_or_else(|| Error::index("tuple index out of range")),
        (Value::Str(s), Value::Int(i)) => s
            .chars()
            .nth(*i as usize)
            .map(|c| Value::str(c.to_string()))
            .ok_or_else(|| Error::index("string index out of range")),
        (Value::Dict(d), k) => d.get(k).cloned().ok_or_else(|| Error::key(repr(k))),
        (Value::List(_), _) | (Value::Str(_), _) => Err(Error::type_(format!(
            "{} indices must be integers or slices, not str",
            v.type_name()
        ))),
        _ => Err(Error::type_(format!(
            "'{}' object is not subscriptable",
            v.type_name()
        ))),
    }
}

// ---------------------------------------------------------------------------
// Natives
// ---------------------------------------------------------------------------

fn opt_str(v: &Value) -> Option<&str> {
    v.as_str()
}

/// `strings.gt`: `left > right` on strings.
///
/// Matches yaql `strings.gt` (`#operator_>`). Code points are compared one by
/// one, so a longer string can be smaller.
///
/// ```yaql
/// 'b' > 'abc'
/// # => true
/// 'abc' > 'abd'
/// # => false
/// ```
fn gt(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Bool(a.str(0) > a.str(1)))
}
/// `strings.lt`: `left < right` on strings.
///
/// Matches yaql `strings.lt` (`#operator_<`). Uppercase letters sort before
/// lowercase ones (code point order).
///
/// ```yaql
/// 'Z' < 'a'
/// # => true
/// 'abc' < 'abc'
/// # => false
/// ```
fn lt(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Bool(a.str(0) < a.str(1)))
}
/// `strings.gte`: `left >= right` on strings.
///
/// Matches yaql `strings.gte` (`#operator_>=`).
///
/// ```yaql
/// 'abc' >= 'abc'
/// # => true
/// 'ab' >= 'abc'
/// # => false
/// ```
fn gte(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Bool(a.str(0) >= a.str(1)))
}
/// `strings.lte`: `left <= right` on strings.
///
/// Matches yaql `strings.lte` (`#operator_<=`).
///
/// ```yaql
/// 'ab' <= 'abc'
/// # => true
/// 'b' <= 'a'
/// # => false
/// ```
fn lte(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Bool(a.str(0) <= a.str(1)))
}

/// `strings.len_`: number of code points.
///
/// Matches yaql `strings.len_` (`len`, an extension method). Counts code
/// points, not bytes.
///
/// ```yaql
/// 'aбв'.len()
/// # => 3
/// len('')
/// # => 0
/// ```
fn len_(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Int(char_len(a.str(0)) as i64))
}

/// `strings.to_lower`: Python `str.lower()`.
///
/// Matches yaql `strings.to_lower` (`toLower`).
///
/// ```yaql
/// 'AB1c ПрИвЕт'.toLower()
/// # => "ab1c привет"
/// ```
fn to_lower(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::str(a.str(0).to_lowercase()))
}

/// `strings.to_upper`: Python `str.upper()` (`ß` -> `SS`).
///
/// Matches yaql `strings.to_upper` (`toUpper`).
///
/// ```yaql
/// 'abc'.toUpper()
/// # => "ABC"
/// 'straße'.toUpper()
/// # => "STRASSE"
/// ```
fn to_upper(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::str(a.str(0).to_uppercase()))
}

/// `strings.split`: Python `str.split(separator, maxSplits)`.
///
/// Matches yaql `strings.split` (`split`). Without a separator, runs of
/// whitespace split and leading/trailing whitespace is dropped; an empty
/// separator is a `ValueError`.
///
/// ```yaql
/// '  abc     de  f '.split()
/// # => ["abc", "de", "f"]
/// 'a,b,,c'.split(',')
/// # => ["a", "b", "", "c"]
/// 'abc     de  f'.split(maxSplits => 1)
/// # => ["abc", "de  f"]
/// 'abc'.split('')
/// # error: ValueError
/// ```
fn split(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::list(py_split(
        a.str(0),
        opt_str(a.get(1)),
        a.int(2)?,
    )?))
}

/// `strings.right_split`: Python `str.rsplit(separator, maxSplits)`.
///
/// Matches yaql `strings.right_split` (`rightSplit`): like `split`, but
/// `maxSplits` counts from the right.
///
/// ```yaql
/// 'a,b,c'.rightSplit(',', 1)
/// # => ["a,b", "c"]
/// 'abc     de  f'.rightSplit(maxSplits => 1)
/// # => ["abc     de", "f"]
/// ```
fn right_split(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::list(py_rsplit(
        a.str(0),
        opt_str(a.get(1)),
        a.int(2)?,
    )?))
}

fn join_impl(cx: &Cx, seq: &Value, sep: &str) -> Result<Value> {
    let mut out = String::new();
    for (i, x) in cx.iter(seq)?.enumerate() {
        let x = x?;
        let piece = match &x {
            Value::Str(s) => std::borrow::Cow::Borrowed(&**s),
            other => std::borrow::Cow::Owned(to_str(other)),
        };
        let sep = if i > 0 { sep } else { "" };
        guard_size(cx, out.len() + sep.len() + piece.len())?;
        out.push_str(sep);
        out.push_str(&piece);
    }
    Ok(Value::str(out))
}

/// `strings.join`: `sequence.join(separator)`, elements through `str()`.
///
/// Matches yaql `strings.join` (`sequence.join(separator)`); elements go
/// through yaql `str()`.
///
/// ```yaql
/// ['abc', 'de', 'f'].join('|')
/// # => "abc|de|f"
/// [1, 'a', null, true].join('-')
/// # => "1-a-null-true"
/// [].join(',')
/// # => ""
/// ```
fn join(cx: &Cx, a: Args) -> Result<Value> {
    join_impl(cx, a.get(0), a.str(1))
}

/// `strings.join_`: `separator.join(sequence)`.
///
/// Matches yaql `strings.join_` (`separator.join(sequence)`). A string is not
/// accepted as the sequence.
///
/// ```yaql
/// '|'.join(['abc', 'de', 'f'])
/// # => "abc|de|f"
/// ', '.join('abc')
/// # error: NoMatchingMethodException
/// ```
fn join_(cx: &Cx, a: Args) -> Result<Value> {
    join_impl(cx, a.get(1), a.str(0))
}

/// `strings.str_`: yaql `str()` (`null`, `true`, Python reprs of collections).
///
/// Matches yaql `strings.str_` (`str`): `null`/`true`/`false` are spelled the
/// yaql way, everything else goes through Python `str()` (lists are tuples).
///
/// ```yaql
/// str(null)
/// # => "null"
/// str(false)
/// # => "false"
/// str(1.0)
/// # => "1.0"
/// str([1, 'a', null])
/// # => "(1, 'a', None)"
/// ```
fn str_(_: &Cx, a: Args) -> Result<Value> {
    Ok(match a.get(0) {
        Value::Str(s) => Value::Str(s.clone()),
        v => Value::str(to_str(v)),
    })
}

/// `strings.concat` (also `#operator_+` on strings).
///
/// Matches yaql `strings.concat` (`concat`, also registered as `#operator_+`
/// for strings).
///
/// ```yaql
/// concat('abc', 'de', 'f')
/// # => "abcdef"
/// concat()
/// # => ""
/// 'a' + 'b'
/// # => "ab"
/// 'a' + 1
/// # error: NoMatchingFunctionException
/// ```
fn concat(cx: &Cx, a: Args) -> Result<Value> {
    guard_size(
        cx,
        a.rest.iter().map(|x| x.as_str().map_or(0, str::len)).sum(),
    )?;
    let mut out = String::new();
    for x in &a.rest {
        out.push_str(x.as_str().unwrap_or(""));
    }
    Ok(Value::str(out))
}

/// `strings.trim`: Python `str.strip(chars)`.
///
/// Matches yaql `strings.trim` (`trim`).
///
/// ```yaql
/// '  abcd \n'.trim()
/// # => "abcd"
/// 'aababa'.trim('a')
/// # => "bab"
/// ```
fn trim(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::from(py_strip(
        a.str(0),
        opt_str(a.get(1)),
        true,
        true,
    )))
}

/// `strings.trim_left`: Python `str.lstrip(chars)`.
///
/// Matches yaql `strings.trim_left` (`trimLeft`).
///
/// ```yaql
/// '  abcd '.trimLeft()
/// # => "abcd "
/// 'aababa'.trimLeft('a')
/// # => "baba"
/// ```
fn trim_left(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::from(py_strip(
        a.str(0),
        opt_str(a.get(1)),
        true,
        false,
    )))
}

/// `strings.trim_right`: Python `str.rstrip(chars)`.
///
/// Matches yaql `strings.trim_right` (`trimRight`).
///
/// ```yaql
/// '  abcd '.trimRight()
/// # => "  abcd"
/// 'aababa'.trimRight('a')
/// # => "aabab"
/// ```
fn trim_right(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::from(py_strip(
        a.str(0),
        opt_str(a.get(1)),
        false,
        true,
    )))
}

/// `strings.norm`: strip, and null when the result is empty.
///
/// Matches yaql `strings.norm` (`norm`, an extension method).
///
/// ```yaql
/// '  abcd '.norm()
/// # => "abcd"
/// 'aaaa'.norm('a')
/// # => null
/// norm(null)
/// # => null
/// ```
fn norm(_: &Cx, a: Args) -> Result<Value> {
    let Some(s) = a.get(0).as_str() else {
        return Ok(Value::Null);
    };
    let r = py_strip(s, opt_str(a.get(1)), true, true);
    Ok(if r.is_empty() {
        Value::Null
    } else {
        Value::from(r)
    })
}

/// `strings.is_empty`: true for null or a string empty after trimming.
///
/// Matches yaql `strings.is_empty` (`isEmpty`, an extension method; the
/// `trimSpaces` parameter is spelled `trim`).
///
/// ```yaql
/// isEmpty(null)
/// # => true
/// '  '.isEmpty()
/// # => true
/// '  '.isEmpty(trim => false)
/// # => false
/// 'abaab'.isEmpty(chars => 'ab')
/// # => true
/// ```
fn is_empty(_: &Cx, a: Args) -> Result<Value> {
    let Some(s) = a.get(0).as_str() else {
        return Ok(Value::Bool(true));
    };
    let s = if a.bool(1) {
        py_strip(s, opt_str(a.get(2)), true, true)
    } else {
        s
    };
    Ok(Value::Bool(s.is_empty()))
}

/// `strings.replace`: Python `str.replace(old, new, count)`.
///
/// Matches yaql `strings.replace` (`string.replace(old, new, count => -1)`).
///
/// ```yaql
/// 'abaab'.replace('ab', 'cd')
/// # => "cdacd"
/// 'aaa'.replace('a', 'b', 2)
/// # => "bba"
/// 'abc'.replace('', '-')
/// # => "-a-b-c-"
/// ```
fn replace(cx: &Cx, a: Args) -> Result<Value> {
    let (text, old, new) = (a.str(0), a.str(1), a.str(2));
    guard_replace(cx, text, old, new)?;
    Ok(Value::str(py_replace(text, old, new, a.int(3)?)))
}

/// Bounds the result of replacing `old` by `new` everywhere in `text`
/// before building it.
fn guard_replace(cx: &Cx, text: &str, old: &str, new: &str) -> Result<()> {
    if new.len() <= old.len() {
        return Ok(());
    }
    let n = if old.is_empty() {
        text.chars().count() + 1
    } else {
        text.matches(old).count()
    };
    guard_size(
        cx,
        text.len()
            .saturating_add(n.saturating_mul(new.len() - old.len())),
    )
}

/// `strings.replace_with_dict`: replaces every key (through `str()`) in turn.
///
/// Matches yaql `strings.replace_with_dict` (`string.replace(replacements,
/// count => -1)`): keys are applied in dict order, so earlier replacements
/// affect later ones.
///
/// ```yaql
/// 'abc ab abc'.replace({abc => xx, ab => yy})
/// # => "xx yy xx"
/// 'abc ab abc'.replace({ab => yy, abc => xx})
/// # => "yyc yy yyc"
/// 'abc ab abc'.replace({ab => yy, abc => xx}, 1)
/// # => "yyc ab xx"
/// 'a1'.replace({1 => 2})
/// # => "a2"
/// ```
fn replace_with_dict(cx: &Cx, a: Args) -> Result<Value> {
    let mut s = a.str(0).to_string();
    let count = a.int(2)?;
    if let Value::Dict(d) = a.get(1) {
        for (k, v) in d.iter() {
            let (old, new) = (to_str(k), to_str(v));
            guard_replace(cx, &s, &old, &new)?;
            s = py_replace(&s, &old, &new, count);
        }
    }
    Ok(Value::str(s))
}

/// `strings.format_`: Python `str.format(*args, **kwargs)`.
///
/// Matches yaql `strings.format_` (`format`, an extension method; not listed in
/// the introspected stdlib reference, whose `format` entry is the
/// `date_time` one).
///
/// ```yaql
/// 'abc{0}ab{1}abc'.format(' ', ',')
/// # => "abc ab,abc"
/// format('abc{0}ab{foo}abc', ' ', foo => ',')
/// # => "abc ab,abc"
/// '{0:>5}|{1:.2f}|{2:05d}'.format(ab, 3.14159, 42)
/// # => "   ab|3.14|00042"
/// '{} {}'.format(1)
/// # error: IndexError
/// ```
fn format_(cx: &Cx, a: Args) -> Result<Value> {
    let mut f = Fmt {
        args: &a.rest,
        kwargs: &a.kw,
        auto: None,
        manual: false,
        quota: cx.env.options().memory_quota.unwrap_or(usize::MAX),
    };
    Ok(Value::str(f.render(a.str(0), 0)?))
}

fn repeat(cx: &Cx, s: &str, n: i64) -> Result<Value> {
    check_repeat_memory(cx, s, n)?;
    Ok(Value::str(if n <= 0 {
        String::new()
    } else {
        s.repeat(n as usize)
    }))
}

/// `strings.string_by_int`: `string * int`.
///
/// Matches yaql `strings.string_by_int` (`#operator_*` with the string on the
/// left); a count of zero or less gives an empty string.
///
/// ```yaql
/// 'ab' * 3
/// # => "ababab"
/// 'ab' * -1
/// # => ""
/// ```
fn string_by_int(cx: &Cx, a: Args) -> Result<Value> {
    repeat(cx, a.str(0), a.int(1)?)
}

/// `strings.int_by_string`: `int * string`.
///
/// Matches yaql `strings.int_by_string` (`#operator_*` with the count on the
/// left; booleans count as integers).
///
/// ```yaql
/// 2 * 'ab'
/// # => "abab"
/// true * 'ab'
/// # => "ab"
/// ```
fn int_by_string(cx: &Cx, a: Args) -> Result<Value> {
    repeat(cx, a.str(1), a.int(0)?)
}

/// `strings.in_`: substring test.
///
/// Matches yaql `strings.in_` (`#operator_in` on two strings).
///
/// ```yaql
/// 'ab' in 'abc'
/// # => true
/// 'ab' in 'acb'
/// # => false
/// '' in 'abc'
/// # => true
/// ```
fn in_(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Bool(a.str(1).contains(a.str(0))))
}

/// `strings.substring`: `string[start:start + length]` on code points.
///
/// Matches yaql `strings.substring` (`substring`). A negative start counts
/// from the end; a negative length means "to the end".
///
/// ```yaql
/// 'abcd'.substring(1)
/// # => "bcd"
/// 'abcd'.substring(1, 2)
/// # => "bc"
/// 'abcdef'.substring(-3, 2)
/// # => "de"
/// 'abc'.substring(5)
/// # => ""
/// ```
fn substring(_: &Cx, a: Args) -> Result<Value> {
    let s = a.str(0);
    let len = char_len(s) as i64;
    let mut start = a.int(1)?;
    let mut length = a.int(2)?;
    if length < 0 {
        length = len;
    }
    if start < 0 {
        start += len;
    }
    Ok(Value::str(py_slice(s, start, start.saturating_add(length))))
}

/// `strings.index_of`: Python `str.find(sub, start)`.
///
/// Matches yaql `strings.index_of` (`indexOf(sub, start => 0)`).
///
/// ```yaql
/// 'cabcdab'.indexOf('ab')
/// # => 1
/// 'cabcdab'.indexOf('ab', 2)
/// # => 5
/// 'cabcdab'.indexOf('ab', 6)
/// # => -1
/// ```
fn index_of(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Int(py_find(a.str(0), a.str(1), a.int(2)?, None)))
}

fn start_end(s: &str, a: &Args) -> Result<(i64, i64)> {
    let len = char_len(s) as i64;
    let mut start = a.int(2)?;
    let mut length = a.int(3)?;
    if start < 0 {
        start += len;
    }
    if length < 0 {
        length = len - start;
    }
    Ok((start, start.saturating_add(length)))
}

/// `strings.index_of_`: `find(sub, start, start + length)`.
///
/// Matches yaql `strings.index_of_` (`indexOf(sub, start, length)`): searches
/// `string[start:start + length]`; a negative length means "to the end".
///
/// ```yaql
/// 'cabcdab'.indexOf('bc', 2, 2)
/// # => 2
/// 'abcabc'.indexOf('c', 0, 2)
/// # => -1
/// 'abcabc'.indexOf('c', 3, -1)
/// # => 5
/// ```
fn index_of_(_: &Cx, a: Args) -> Result<Value> {
    let s = a.str(0);
    let (st, en) = start_end(s, &a)?;
    Ok(Value::Int(py_find(s, a.str(1), st, Some(en))))
}

/// `strings.last_index_of`: Python `str.rfind(sub, start)`.
///
/// Matches yaql `strings.last_index_of` (`lastIndexOf(sub, start => 0)`).
///
/// ```yaql
/// 'cabcdab'.lastIndexOf('ab')
/// # => 5
/// 'abcabc'.lastIndexOf('x')
/// # => -1
/// ```
fn last_index_of(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Int(py_rfind(a.str(0), a.str(1), a.int(2)?, None)))
}

/// `strings.last_index_of_`: `rfind(sub, start, start + length)`.
///
/// Matches yaql `strings.last_index_of_` (`lastIndexOf(sub, start, length)`).
///
/// ```yaql
/// 'cabcdbc'.lastIndexOf('bc', 2, 5)
/// # => 5
/// 'abcabc'.lastIndexOf('c', 1, 2)
/// # => 2
/// ```
fn last_index_of_(_: &Cx, a: Args) -> Result<Value> {
    let s = a.str(0);
    let (st, en) = start_end(s, &a)?;
    Ok(Value::Int(py_rfind(s, a.str(1), st, Some(en))))
}

/// `strings.to_char_array`: tuple of one-character strings.
///
/// Matches yaql `strings.to_char_array` (`toCharArray`).
///
/// ```yaql
/// 'abc de'.toCharArray()
/// # => ["a", "b", "c", " ", "d", "e"]
/// ''.toCharArray()
/// # => []
/// ```
fn to_char_array(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::list(
        a.str(0)
            .chars()
            .map(|c| Value::str(c.to_string()))
            .collect(),
    ))
}

/// `strings.characters`: distinct characters of the selected classes.
///
/// Matches yaql `strings.characters` (`characters`). The result comes from a
/// Python set, so its order is unspecified; the Python 2 only classes
/// (`letters`, `lowercase`, `uppercase`) raise `AttributeError`.
///
/// ```yaql
/// characters(digits => true, octdigits => true).orderBy($)
/// # => ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"]
/// characters(whitespace => true).len()
/// # => 6
/// characters()
/// # => []
/// characters(letters => true)
/// # error: AttributeError
/// ```
fn characters(_: &Cx, a: Args) -> Result<Value> {
    const PUNCT: &str = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
    const WS: &str = " \t\n\r\x0b\x0c";
    const LOWER: &str = "abcdefghijklmnopqrstuvwxyz";
    const UPPER: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    let printable = format!("0123456789{LOWER}{UPPER}{PUNCT}{WS}");
    let letters = format!("{LOWER}{UPPER}");
    let parts: [(Option<&str>, &str); 12] = [
        (Some("0123456789"), "digits"),
        (Some("0123456789abcdefABCDEF"), "hexdigits"),
        (Some(LOWER), "ascii_lowercase"),
        (Some(UPPER), "ascii_uppercase"),
        (Some(&letters), "ascii_letters"),
        (None, "letters"),
        (Some("01234567"), "octdigits"),
        (Some(PUNCT), "punctuation"),
        (Some(&printable), "printable"),
        (None, "lowercase"),
        (None, "uppercase"),
        (Some(WS), "whitespace"),
    ];
    let mut seen = runtime::Set::default();
    for (i, (chars, name)) in parts.iter().enumerate() {
        if !a.bool(i) {
            continue;
        }
        let Some(chars) = chars else {
            return Err(Error::new(
                ErrorKind::AttributeError,
                format!("module 'string' has no attribute '{name}'"),
            ));
        };
        for c in chars.chars() {
            seen.insert(Value::str(c.to_string()));
        }
    }
    Ok(Value::list(seen.into_iter().collect()))
}

/// `strings.is_string`.
///
/// Matches yaql `strings.is_string` (`isString`).
///
/// ```yaql
/// isString('ab')
/// # => true
/// isString(1)
/// # => false
/// isString(null)
/// # => false
/// ```
fn is_string(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Bool(matches!(a.get(0), Value::Str(_))))
}

/// `strings.starts_with`: true when the string starts with any argument.
///
/// Matches yaql `strings.starts_with` (`startsWith`).
///
/// ```yaql
/// 'abcd'.startsWith('ab', 'xx')
/// # => true
/// 'abcd'.startsWith('yy', 'xx', 'zz')
/// # => false
/// ```
fn starts_with(_: &Cx, a: Args) -> Result<Value> {
    let s = a.str(0);
    Ok(Value::Bool(
        a.rest
            .iter()
            .any(|p| s.starts_with(p.as_str().unwrap_or(""))),
    ))
}

/// `strings.ends_with`: true when the string ends with any argument.
///
/// Matches yaql `strings.ends_with` (`endsWith`).
///
/// ```yaql
/// 'abcd'.endsWith('cd', 'xx')
/// # => true
/// 'abcd'.endsWith('yy', 'xx', 'zz')
/// # => false
/// ```
fn ends_with(_: &Cx, a: Args) -> Result<Value> {
    let s = a.str(0);
    Ok(Value::Bool(
        a.rest.iter().any(|p| s.ends_with(p.as_str().unwrap_or(""))),
    ))
}

/// `strings.hex_`: Python `hex(num)` (integers only).
///
/// Matches yaql `strings.hex_` (`hex`). Floats and null pass the `Number`
/// check but Python `hex()` rejects them; booleans do not match.
///
/// ```yaql
/// hex(256)
/// # => "0x100"
/// hex(-42)
/// # => "-0x2a"
/// hex(1.5)
/// # error: TypeError
/// hex(true)
/// # error: NoMatchingFunctionException
/// ```
fn hex_(_: &Cx, a: Args) -> Result<Value> {
    let n = match a.get(0) {
        Value::Int(i) => BigInt::from(*i),
        Value::BigInt(b) => (**b).clone(),
        other => {
            return Err(Error::type_(format!(
                "'{}' object cannot be interpreted as an integer",
                other.type_name()
            )))
        }
    };
    let digits = n.abs().to_str_radix(16);
    Ok(Value::str(if n.is_negative() {
        format!("-0x{digits}")
    } else if n.is_zero() {
        "0x0".to_string()
    } else {
        format!("0x{digits}")
    }))
}

/// Registers the group.
pub fn register(r: &mut Registry) {
    let s = |n: &str| p(n, Ty::Str);
    let sn = |n: &str| p(n, Ty::Str).nullable().default(Value::Null);
    r.function("#operator_>", vec![s("left"), s("right")], gt)
        .pure_();
    r.function("#operator_<", vec![s("left"), s("right")], lt)
        .pure_();
    r.function("#operator_>=", vec![s("left"), s("right")], gte)
        .pure_();
    r.function("#operator_<=", vec![s("left"), s("right")], lte)
        .pure_();
    r.extension("len", vec![s("string")], len_).pure_();
    r.method("toLower", vec![s("string")], to_lower).pure_();
    r.method("toUpper", vec![s("string")], to_upper).pure_();
    r.method(
        "split",
        vec![
            s("string"),
            sn("separator"),
            p("maxSplits", Ty::Int).default(-1i64),
        ],
        split,
    )
    .pure_();
    r.method(
        "rightSplit",
        vec![
            s("string"),
            sn("separator"),
            p("maxSplits", Ty::Int).default(-1i64),
        ],
        right_split,
    )
    .pure_();
    r.method(
        "join",
        vec![p("sequence", Ty::Iterable), s("separator")],
        join,
    );
    r.method(
        "join",
        vec![s("separator"), p("sequence", Ty::Iterable)],
        join_,
    );
    r.function("str", vec![p("value", Ty::Any).nullable()], str_)
        .pure_();
    r.function("concat", vec![var("args", Ty::Str)], concat)
        .pure_();
    r.function("#operator_+", vec![var("args", Ty::Str)], concat)
        .pure_();
    r.method("trim", vec![s("string"), sn("chars")], trim)
        .pure_();
    r.method("trimLeft", vec![s("string"), sn("chars")], trim_left)
        .pure_();
    r.method("trimRight", vec![s("string"), sn("chars")], trim_right)
        .pure_();
    r.method(
        "replace",
        vec![
            s("string"),
            s("old"),
            s("new"),
            p("count", Ty::Int).default(-1i64),
        ],
        replace,
    )
    .pure_();
    r.method(
        "replace",
        vec![
            s("string"),
            p("replacements", Ty::Mapping),
            p("count", Ty::Int).default(-1i64),
        ],
        replace_with_dict,
    )
    .pure_();
    r.extension(
        "format",
        vec![
            s("formatString"),
            var("args", Ty::Any).nullable(),
            kw("kwargs", Ty::Any).nullable(),
        ],
        format_,
    )
    .pure_();
    r.extension(
        "isEmpty",
        vec![
            p("string", Ty::Str).nullable(),
            p("trim", Ty::Bool).default(true),
            sn("chars"),
        ],
        is_empty,
    )
    .pure_();
    r.function(
        "#operator_*",
        vec![s("left"), p("right", Ty::Int)],
        string_by_int,
    );
    r.function(
        "#operator_*",
        vec![p("left", Ty::Int), s("right")],
        int_by_string,
    );
    r.method(
        "substring",
        vec![
            s("string"),
            p("start", Ty::Int),
            p("length", Ty::Int).default(-1i64),
        ],
        substring,
    )
    .pure_();
    r.method(
        "indexOf",
        vec![s("string"), s("sub"), p("start", Ty::Int).default(0i64)],
        index_of,
    )
    .pure_();
    r.method(
        "indexOf",
        vec![
            s("string"),
            s("sub"),
            p("start", Ty::Int),
            p("length", Ty::Int),
        ],
        index_of_,
    )
    .pure_();
    r.method(
        "lastIndexOf",
        vec![s("string"), s("sub"), p("start", Ty::Int).default(0i64)],
        last_index_of,
    )
    .pure_();
    r.method(
        "lastIndexOf",
        vec![
            s("string"),
            s("sub"),
            p("start", Ty::Int),
            p("length", Ty::Int),
        ],
        last_index_of_,
    )
    .pure_();
    r.method("toCharArray", vec![s("string")], to_char_array)
        .pure_();
    let flag = |n: &str| p(n, Ty::Bool).nullable().default(false);
    r.function(
        "characters",
        vec![
            flag("digits"),
            flag("hexdigits"),
            flag("asciiLowercase"),
            flag("asciiUppercase"),
            flag("asciiLetters"),
            flag("letters"),
            flag("octdigits"),
            flag("punctuation"),
            flag("printable"),
            flag("lowercase"),
            flag("uppercase"),
            flag("whitespace"),
        ],
        characters,
    )
    .pure_();
    r.function("isString", vec![p("arg", Ty::Any).nullable()], is_string)
        .pure_();
    r.extension(
        "norm",
        vec![p("string", Ty::Str).nullable(), sn("chars")],
        norm,
    )
    .pure_();
    r.function("#operator_in", vec![s("left"), s("right")], in_)
        .pure_();
    r.method(
        "startsWith",
        vec![s("string"), var("prefixes", Ty::Str)],
        starts_with,
    )
    .pure_();
    r.method(
        "endsWith",
        vec![s("string"), var("suffixes", Ty::Str)],
        ends_with,
    )
    .pure_();
    r.function("hex", vec![p("num", Ty::Number).nullable()], hex_)
        .pure_();
}

#[cfg(test)]
mod tests {
    use runtime::Value;

    fn eval(expr: &str, data: Value) -> Result<Value, String> {
        let env = crate::env(runtime::Options::test_suite(false));
        let prog = compiler::compile(expr, &crate::registry(false), Default::default())
            .map_err(|e| format!("{e:?}"))?;
        let v = prog.eval(&env, data).map_err(|e| e.kind().to_string())?;
        crate::finalize(&env, v).map_err(|e| e.kind().to_string())
    }

    fn ok(expr: &str) -> String {
        runtime::json::to_tagged_string(&eval(expr, Value::Null).unwrap())
    }

    #[test]
    fn basics() {
        assert_eq!(ok("'straße'.toUpper()"), "\"STRASSE\"");
        assert_eq!(ok("'aбв'.len()"), "3");
        assert_eq!(ok("'abcdef'.substring(-3, 2)"), "\"de\"");
        assert_eq!(ok("'abcdefedcba'.indexOf(dcb, -4, 100)"), "7");
        assert_eq!(
            ok("'  a b  c '.split(maxSplits => 1)"),
            "[\"a\", \"b  c \"]"
        );
        assert_eq!(ok("'a,b,c'.rightSplit(',', 1)"), "[\"a,b\", \"c\"]");
        assert_eq!(ok("'xxhixx'.trim('x')"), "\"hi\"");
        assert_eq!(
            ok("str([1, 'a', true, null, 2.0])"),
            "\"(1, 'a', True, None, 2.0)\""
        );
        assert_eq!(ok("'ab' * 3"), "\"ababab\"");
        assert_eq!(ok("hex(-42)"), "\"-0x2a\"");
        assert_eq!(ok("[1, null, true].join('-')"), "\"1-null-true\"");
    }

    #[test]
    fn format() {
        assert_eq!(ok("'abc{0}ab{1}abc'.format(' ', ',')"), "\"abc ab,abc\"");
        assert_eq!(ok("format('{x}-{}', 1, x => 2)"), "\"2-1\"");
        assert_eq!(
            ok("'{0:>5}|{1:.2f}|{2:05d}'.format(ab, 3.14159, 42)"),
            "\"   ab|3.14|00042\""
        );
        assert_eq!(ok("'{!r}'.format(a)"), "\"'a'\"");
    }

    #[test]
    fn errors() {
        assert_eq!(
            eval("'a' + 1", Value::Null).unwrap_err(),
            "NoMatchingFunctionException"
        );
        assert_eq!(
            eval("'a'.split('')", Value::Null).unwrap_err(),
            "ValueError"
        );
        assert_eq!(eval("hex(1.5)", Value::Null).unwrap_err(), "TypeError");
    }
}
