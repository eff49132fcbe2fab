//! `str.format` (the `format` function): replacement fields, format
//! specs and conversions, as Python formats them.

use super::text::*;
use num_bigint::BigInt;
use num_traits::{Signed, ToPrimitive};
use runtime::pyrepr::repr;
use runtime::registry::{kw, p, var, Args, Cx, Registry, Ty};
use runtime::ErrorKind;
use runtime::{Error, Result, Value};

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

pub(super) struct Fmt<'a> {
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
pub(super) fn format_(cx: &Cx, a: Args) -> Result<Value> {
    let mut f = Fmt {
        args: &a.rest,
        kwargs: &a.kw,
        auto: None,
        manual: false,
        quota: cx.env.options().memory_quota.unwrap_or(usize::MAX),
    };
    Ok(Value::str(f.render(a.str(0), 0)?))
}

/// Registers this part of the group.
pub(super) fn register(r: &mut Registry) {
    let s = |n: &str| p(n, Ty::Str);
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
}
