//! `yaql/standard_library/regex.py`: regular expressions with Python `re`
//! semantics.
//!
//! Python patterns are translated to the syntax of the `fancy-regex` crate
//! (which delegates to the `regex` crate when no backtracking feature is
//! used): escapes, character classes, `{` literals, `$` (which in Python also
//! matches before a final newline), named groups and backreferences. Match
//! positions are reported in code points, and iteration follows Python 3.7+
//! rules for empty matches.
//!
//! A compiled pattern (`regex(...)`) is a `Value::Lambda` whose code is a
//! [`PyPattern`]; a side table keyed by the code's address recognises it
//! (there is no dedicated `Value` variant).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use runtime::ctx::Frame;
use runtime::pyrepr::str_repr;
use runtime::registry::{lazy, p, Args, Cx, Registry, Ty};
use runtime::{Closure, Dict, Env, Error, Invoke, Result, Value};

use crate::strings::char_of;

// ---------------------------------------------------------------------------
// Python -> fancy-regex translation
// ---------------------------------------------------------------------------

const IGNORECASE: u8 = 2;
const MULTILINE: u8 = 8;
const DOTALL: u8 = 16;
const VERBOSE: u8 = 64;

fn re_err(msg: impl Into<String>) -> Error {
    Error::new("error", msg)
}

/// Emits a literal character so that neither fancy-regex nor regex give it
/// a special meaning.
fn lit(out: &mut String, c: char) {
    if c.is_ascii_alphanumeric() || c == '_' || (!c.is_ascii() && !c.is_whitespace()) {
        out.push(c)
    } else {
        out.push_str(&format!("\\x{{{:x}}}", c as u32))
    }
}

struct Tr<'a> {
    cs: &'a [char],
    i: usize,
    out: String,
    groups: usize,
    flags: u8,
}

impl Tr<'_> {
    fn peek(&self, k: usize) -> Option<char> {
        self.cs.get(self.i + k).copied()
    }
    fn starts(&self, s: &str) -> bool {
        s.chars().enumerate().all(|(k, c)| self.peek(k) == Some(c))
    }

    /// `\x`, `\u`, `\U` with exactly `n` hex digits.
    fn hex(&mut self, n: usize, esc: char) -> Result<char> {
        let mut v = 0u32;
        for k in 0..n {
            match self.peek(k).and_then(|c| c.to_digit(16)) {
                Some(d) => v = v * 16 + d,
                None => {
                    return Err(re_err(format!("incomplete escape \\{esc}")));
                }
            }
        }
        self.i += n;
        char::from_u32(v).ok_or_else(|| re_err(format!("bad escape \\{esc}")))
    }

    /// Octal escape whose first digit was consumed.
    fn octal(&mut self, first: char) -> Result<char> {
        let mut v = first.to_digit(8).unwrap_or(0);
        for _ in 0..2 {
            match self.peek(0).and_then(|c| c.to_digit(8)) {
                Some(d) => {
                    v = v * 8 + d;
                    self.i += 1;
                }
                None => break,
            }
        }
        if v > 0o377 {
            return Err(re_err(format!(
                "octal escape value \\{:o} outside of range 0-0o377",
                v
            )));
        }
        Ok(char::from_u32(v).unwrap_or('\0'))
    }

    /// An escape (the backslash consumed), inside or outside a class.
    fn escape(&mut self, in_class: bool) -> Result<()> {
        let Some(e) = self.peek(0) else {
            return Err(re_err("bad escape (end of pattern)"));
        };
        self.i += 1;
        match e {
            '0' => {
                let c = self.octal('0')?;
                lit(&mut self.out, c);
            }
            '1'..='9' if in_class => {
                if e <= '7' {
                    let c = self.octal(e)?;
                    lit(&mut self.out, c);
                } else {
                    return Err(re_err(format!("bad escape \\{e}")));
                }
            }
            '1'..='9' => {
                let d1 = self.peek(0).filter(|c| c.is_ascii_digit());
                let d2 = self.peek(1).filter(|c| c.is_ascii_digit());
                if let (Some(a), Some(b)) = (d1, d2) {
                    if e <= '7' && a <= '7' && b <= '7' {
                        self.i += 2;
                        let v = (e as u32 - 48) * 64 + (a as u32 - 48) * 8 + (b as u32 - 48);
                        if v > 0o377 {
                            return Err(re_err("octal escape value outside of range 0-0o377"));
                        }
                        lit(&mut self.out, char::from_u32(v).unwrap_or('\0'));
                        return Ok(());
                    }
                }
                let mut g = e as usize - 48;
                if let Some(a) = d1 {
                    g = g * 10 + (a as usize - 48);
                    self.i += 1;
                }
                if g > self.groups {
                    return Err(re_err(format!("invalid group reference {g}")));
                }
                self.out.push_str(&format!("(?:\\{g})"));
            }
            'A' | 'Z' | 'b' | 'B' if !in_class => self.out.push_str(match e {
                'A' => "\\A",
                'Z' => "\\z",
                'b' => "\\b",
                _ => "\\B",
            }),
            'b' => lit(&mut self.out, '\x08'),
            'd' | 'D' | 's' | 'S' | 'w' | 'W' => {
                self.out.push('\\');
                self.out.push(e)
            }
            'a' => lit(&mut self.out, '\x07'),
            'f' => lit(&mut self.out, '\x0c'),
            'n' => lit(&mut self.out, '\n'),
            'r' => lit(&mut self.out, '\r'),
            't' => lit(&mut self.out, '\t'),
            'v' => lit(&mut self.out, '\x0b'),
            'x' => {
                let c = self.hex(2, 'x')?;
                lit(&mut self.out, c)
            }
            'u' => {
                let c = self.hex(4, 'u')?;
                lit(&mut self.out, c)
            }
            'U' => {
                let c = self.hex(8, 'U')?;
                lit(&mut self.out, c)
            }
            c if c.is_ascii_alphanumeric() => {
                return Err(re_err(format!("bad escape \\{c}")));
            }
            c => lit(&mut self.out, c),
        }
        Ok(())
    }

    fn class(&mut self) -> Result<()> {
        // '[' consumed
        let start = self.i;
        self.out.push('[');
        if self.peek(0) == Some('^') {
            self.out.push('^');
            self.i += 1;
        }
        let mut first = true;
        let mut prev_dash = false;
        loop {
            let Some(c) = self.peek(0) else {
                self.i = start;
                return Err(re_err("unterminated character set"));
            };
            self.i += 1;
            let mut dash = false;
            match c {
                ']' if !first => {
                    self.out.push(']');
                    return Ok(());
                }
                '\\' => self.escape(true)?,
                '-' if !prev_dash => {
                    self.out.push('-');
                    dash = true;
                }
                c => lit(&mut self.out, c),
            }
            prev_dash = dash;
            first = false;
        }
    }

    /// `{m,n}` quantifier or a literal `{`.
    fn brace(&mut self) -> Result<()> {
        // '{' consumed
        let save = self.i;
        let mut lo = String::new();
        while let Some(c) = self.peek(0).filter(|c| c.is_ascii_digit()) {
            lo.push(c);
            self.i += 1;
        }
        let hi = if self.peek(0) == Some(',') {
            self.i += 1;
            let mut h = String::new();
            while let Some(c) = self.peek(0).filter(|c| c.is_ascii_digit()) {
                h.push(c);
                self.i += 1;
            }
            Some(h)
        } else {
            None
        };
        if self.peek(0) != Some('}') || (lo.is_empty() && hi.is_none()) {
            self.i = save;
            lit(&mut self.out, '{');
            return Ok(());
        }
        self.i += 1;
        let lo_n: u64 = if lo.is_empty() {
            0
        } else {
            lo.parse()
                .map_err(|_| re_err("the repetition number is too large"))?
        };
        match hi {
            None => self.out.push_str(&format!("{{{lo_n}}}")),
            Some(h) if h.is_empty() => self.out.push_str(&format!("{{{lo_n},}}")),
            Some(h) => {
                let hi_n: u64 = h
                    .parse()
                    .map_err(|_| re_err("the repetition number is too large"))?;
                if hi_n < lo_n {
                    return Err(re_err("min repeat greater than max repeat"));
                }
                self.out.push_str(&format!("{{{lo_n},{hi_n}}}"))
            }
        }
        Ok(())
    }

    fn group(&mut self) -> Result<()> {
        // '(' consumed
        if self.peek(0) != Some('?') {
            self.groups += 1;
            self.out.push('(');
            return Ok(());
        }
        if self.starts("?P<") {
            let close = (self.i..self.cs.len())
                .find(|&k| self.cs[k] == '>')
                .ok_or_else(|| re_err("missing >, unterminated name"))?;
            let name: String = self.cs[self.i + 3..close].iter().collect();
            if name.is_empty()
                || name.chars().next().is_some_and(|c| c.is_ascii_digit())
                || !name.chars().all(|c| c.is_alphanumeric() || c == '_')
            {
                return Err(re_err(format!("bad character in group name '{name}'")));
            }
            self.groups += 1;
            self.out.push_str(&format!("(?P<{name}>"));
            self.i = close + 1;
            return Ok(());
        }
        if self.starts("?P=") {
            let close = (self.i..self.cs.len())
                .find(|&k| self.cs[k] == ')')
                .ok_or_else(|| re_err("missing ), unterminated name"))?;
            let name: String = self.cs[self.i + 3..close].iter().collect();
            self.out.push_str(&format!("\\k<{name}>"));
            self.i = close + 1;
            return Ok(());
        }
        if self.starts("?#") {
            let close = (self.i..self.cs.len())
                .find(|&k| self.cs[k] == ')')
                .ok_or_else(|| re_err("missing ), unterminated comment"))?;
            self.i = close + 1;
            return Ok(());
        }
        for pre in ["?:", "?=", "?!", "?<=", "?<!", "?>", "?("] {
            if self.starts(pre) {
                self.out.push('(');
                self.out.push_str(pre);
                self.i += pre.chars().count();
                return Ok(());
            }
        }
        // inline flags
        let mut k = 1;
        let mut on = String::new();
        let mut off = String::new();
        let mut neg = false;
        loop {
            match self.peek(k) {
                Some(c @ ('a' | 'i' | 'L' | 'm' | 's' | 'u' | 'x')) => {
                    if c == 'L' {
                        return Err(re_err(
                            "bad inline flags: cannot use 'L' flag with a str pattern",
                        ));
                    }
                    if neg {
                        off.push(c)
                    } else {
                        on.push(c)
                    }
                }
                Some('-') if !neg => neg = true,
                Some(':') => {
                    let keep = |s: &str| {
                        s.chars()
                            .filter(|c| "imsx".contains(*c))
                            .collect::<String>()
                    };
                    let (on, off) = (keep(&on), keep(&off));
                    self.out.push_str("(?");
                    self.out.push_str(&on);
                    if !off.is_empty() {
                        self.out.push('-');
                        self.out.push_str(&off);
                    }
                    self.out.push(':');
                    self.i += k + 1;
                    return Ok(());
                }
                Some(')') if !neg && !on.is_empty() => {
                    return Err(re_err("global flags not at the start of the expression"));
                }
                Some(c) => return Err(re_err(format!("unknown extension ?{c}"))),
                None => return Err(re_err("missing -, : or )")),
            }
            k += 1;
        }
    }

    fn run(&mut self) -> Result<()> {
        let verbose = self.flags & VERBOSE != 0;
        while let Some(c) = self.peek(0) {
            self.i += 1;
            match c {
                c if verbose && c.is_whitespace() => {}
                '#' if verbose => {
                    while let Some(c) = self.peek(0) {
                        self.i += 1;
                        if c == '\n' {
                            break;
                        }
                    }
                }
                '\\' => self.escape(false)?,
                '[' => self.class()?,
                '(' => self.group()?,
                '{' => self.brace()?,
                '}' => lit(&mut self.out, '}'),
                '$' => {
                    if self.flags & MULTILINE != 0 {
                        self.out.push('$')
                    } else {
                        self.out.push_str("(?=\\n?\\z)")
                    }
                }
                c @ ('^' | '.' | '|' | '*' | '+' | '?' | ')') => self.out.push(c),
                c => lit(&mut self.out, c),
            }
        }
        Ok(())
    }
}

/// Translates a Python pattern; returns the fancy-regex pattern and the
/// flags in force (inline global flags added).
fn translate(src: &str, mut flags: u8) -> Result<String> {
    let cs: Vec<char> = src.chars().collect();
    let mut i = 0;
    // leading global flags `(?imsx)`
    while cs.get(i) == Some(&'(') && cs.get(i + 1) == Some(&'?') {
        let mut k = i + 2;
        let mut f = 0u8;
        while let Some(&c) = cs.get(k) {
            match c {
                'i' => f |= IGNORECASE,
                'm' => f |= MULTILINE,
                's' => f |= DOTALL,
                'x' => f |= VERBOSE,
                'a' | 'u' => {}
                'L' => {
                    return Err(re_err(
                        "bad inline flags: cannot use 'L' flag with a str pattern",
                    ))
                }
                _ => break,
            }
            k += 1;
        }
        if k > i + 2 && cs.get(k) == Some(&')') {
            flags |= f;
            i = k + 1;
        } else {
            break;
        }
    }
    let mut tr = Tr {
        cs: &cs[i..],
        i: 0,
        out: String::new(),
        groups: 0,
        flags,
    };
    tr.run()?;
    let mut pre = String::new();
    if flags & (IGNORECASE | MULTILINE | DOTALL) != 0 {
        pre.push_str("(?");
        if flags & IGNORECASE != 0 {
            pre.push('i');
        }
        if flags & MULTILINE != 0 {
            pre.push('m');
        }
        if flags & DOTALL != 0 {
            pre.push('s');
        }
        pre.push(')');
    }
    Ok(pre + &tr.out)
}

// ---------------------------------------------------------------------------
// Compiled patterns and the regex value
// ---------------------------------------------------------------------------

/// A compiled Python pattern.
pub struct Compiled {
    re: fancy_regex::Regex,
    /// Number of capture groups.
    ngroups: usize,
    /// Named groups in definition order, with their index.
    names: Vec<(String, usize)>,
    pattern: String,
}

fn compile(pattern: &str, flags: u8) -> Result<Arc<Compiled>> {
    // A cache of compiled patterns: a pure function of (pattern, flags),
    // so sharing it across executions and threads changes no result;
    // bounded (emptied past 512 entries).
    static CACHE: OnceLock<Mutex<HashMap<(String, u8), Arc<Compiled>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let key = (pattern.to_string(), flags);
    if let Some(c) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Ok(c.clone());
    }
    let tr = translate(pattern, flags)?;
    let re = fancy_regex::RegexBuilder::new(&tr)
        .build()
        .map_err(|e| re_err(e.to_string()))?;
    let ngroups = re.captures_len().saturating_sub(1);
    let names = re
        .capture_names()
        .enumerate()
        .filter_map(|(i, n)| n.map(|n| (n.to_string(), i)))
        .collect();
    let c = Arc::new(Compiled {
        re,
        ngroups,
        names,
        pattern: pattern.to_string(),
    });
    let mut g = cache.lock().unwrap_or_else(|e| e.into_inner());
    if g.len() > 512 {
        g.clear();
    }
    g.insert(key, c.clone());
    Ok(c)
}

/// The code of a regex value: not callable.
pub struct PyPattern(Arc<Compiled>);

impl Invoke for PyPattern {
    fn invoke(
        &self,
        _: &Env,
        _: &Arc<Frame>,
        _: &[Value],
        _: &[(Arc<str>, Value)],
    ) -> Result<Value> {
        Err(Error::type_("'re.Pattern' object is not callable"))
    }
    fn describe(&self) -> String {
        format!("re.compile({})", str_repr(&self.0.pattern))
    }
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

fn regex_value(c: Arc<Compiled>) -> Value {
    let code: Arc<dyn Invoke> = Arc::new(PyPattern(c));
    Value::Lambda(Arc::new(Closure {
        code,
        ctx: Frame::root(Value::Null),
    }))
}

/// The compiled pattern of a regex value: the value itself says it is one
/// (its code is a [`PyPattern`]).
pub fn as_regex(v: &Value) -> Option<Arc<Compiled>> {
    let Value::Lambda(cl) = v else {
        return None;
    };
    let p = cl.code.as_any()?.downcast_ref::<PyPattern>()?;
    Some(p.0.clone())
}

fn is_regex_value(v: &Value) -> bool {
    as_regex(v).is_some()
}

// ---------------------------------------------------------------------------
// Matching with Python semantics
// ---------------------------------------------------------------------------

/// Group spans of one match, in byte offsets.
type Spans = Vec<Option<(usize, usize)>>;

fn spans_of(c: &fancy_regex::Captures, n: usize) -> Spans {
    (0..=n)
        .map(|i| c.get(i).map(|m| (m.start(), m.end())))
        .collect()
}

fn next_boundary(s: &str, pos: usize) -> usize {
    let mut p = pos + 1;
    while p < s.len() && !s.is_char_boundary(p) {
        p += 1;
    }
    p
}

/// `re.search`.
fn search_one(c: &Compiled, s: &str) -> Result<Option<Spans>> {
    match c.re.captures(s) {
        Ok(m) => Ok(m.map(|m| spans_of(&m, c.ngroups))),
        Err(e) => Err(re_err(e.to_string())),
    }
}

/// `re.finditer` (Python 3.7+ empty-match rules); `limit` 0 = all.
fn find_all(c: &Compiled, s: &str, limit: usize) -> Result<Vec<Spans>> {
    let mut out = Vec::new();
    let mut pos = 0;
    let mut must_advance = false;
    while pos <= s.len() {
        if limit > 0 && out.len() >= limit {
            break;
        }
        let m =
            c.re.captures_from_pos(s, pos)
                .map_err(|e| re_err(e.to_string()))?;
        let Some(m) = m else { break };
        let m0 = m.get(0).map_or((pos, pos), |x| (x.start(), x.end()));
        if must_advance && m0.0 == pos && m0.1 == pos {
            if pos >= s.len() {
                break;
            }
            let np = next_boundary(s, pos);
            let m =
                c.re.captures_from_pos(s, np)
                    .map_err(|e| re_err(e.to_string()))?;
            let Some(m) = m else { break };
            let sp = spans_of(&m, c.ngroups);
            let (a, b) = sp[0].unwrap_or((np, np));
            must_advance = a == b;
            pos = b;
            out.push(sp);
            continue;
        }
        must_advance = m0.0 == m0.1;
        pos = m0.1;
        out.push(spans_of(&m, c.ngroups));
    }
    Ok(out)
}

/// `{"value", "start", "end"}` of one group.
fn rec(s: &str, sp: Option<(usize, usize)>) -> Value {
    let mut d = Dict::default();
    match sp {
        Some((a, b)) => {
            d.insert(Value::str("value"), Value::str(&s[a..b]));
            d.insert(Value::str("start"), Value::Int(char_of(s, a) as i64));
            d.insert(Value::str("end"), Value::Int(char_of(s, b) as i64));
        }
        None => {
            d.insert(Value::str("value"), Value::Null);
            d.insert(Value::str("start"), Value::Int(-1));
            d.insert(Value::str("end"), Value::Int(-1));
        }
    }
    Value::dict(d)
}

/// `_publish_match` then calls the lambda: `$1` (= `$`) is the whole match,
/// `$2`... the groups; named groups go through the reference's unpacking
/// loop (`for key, value, in groupdict().values()`), faithfully.
fn call_with_match(env: &Env, f: &Value, c: &Compiled, s: &str, sp: &Spans) -> Result<Value> {
    let args: Vec<Value> = sp.iter().map(|g| rec(s, *g)).collect();
    let mut kwargs: Vec<(Arc<str>, Value)> = Vec::new();
    for (_, idx) in &c.names {
        let v = sp[*idx].map(|(a, b)| &s[a..b]);
        let Some(v) = v else {
            return Err(Error::type_("cannot unpack non-iterable NoneType object"));
        };
        let cs: Vec<char> = v.chars().collect();
        if cs.len() < 2 {
            return Err(Error::value(format!(
                "not enough values to unpack (expected 2, got {})",
                cs.len()
            )));
        }
        if cs.len() > 2 {
            return Err(Error::value("too many values to unpack (expected 2)"));
        }
        let gname = cs[1].to_string();
        let Some((_, gi)) = c.names.iter().find(|(n, _)| *n == gname) else {
            return Err(Error::index("no such group"));
        };
        // `value` is the unpacked character itself; start/end are those of
        // the group it names.
        let mut r = match rec(s, sp[*gi]) {
            Value::Dict(ref d) => (**d).clone(),
            _ => Dict::default(),
        };
        r.insert(Value::str("value"), Value::str(gname));
        kwargs.push((Arc::from(cs[0].to_string()), Value::dict(r)));
    }
    match f {
        Value::Lambda(cl) => cl.call_kw(env, &args, &kwargs),
        other => Ok(other.clone()),
    }
}

enum Piece {
    Lit(String),
    Group(usize),
}

/// Parses a `re.sub` replacement template.
fn parse_template(c: &Compiled, t: &str) -> Result<Vec<Piece>> {
    let cs: Vec<char> = t.chars().collect();
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut i = 0;
    let group = |cur: &mut String, out: &mut Vec<Piece>, g: usize| -> Result<()> {
        if g > c.ngroups {
            return Err(re_err(format!("invalid group reference {g}")));
        }
        if !cur.is_empty() {
            out.push(Piece::Lit(std::mem::take(cur)));
        }
        out.push(Piece::Group(g));
        Ok(())
    };
    while i < cs.len() {
        let ch = cs[i];
        i += 1;
        if ch != '\\' {
            cur.push(ch);
            continue;
        }
        let Some(&e) = cs.get(i) else {
            return Err(re_err("bad escape (end of pattern)"));
        };
        i += 1;
        match e {
            'g' => {
                if cs.get(i) != Some(&'<') {
                    return Err(re_err("missing <"));
                }
                let close = (i..cs.len())
                    .find(|&k| cs[k] == '>')
                    .ok_or_else(|| re_err("missing >, unterminated name"))?;
                let name: String = cs[i + 1..close].iter().collect();
                i = close + 1;
                if name.is_empty() {
                    return Err(re_err("missing group name"));
                }
                let g = if name.chars().all(|c| c.is_ascii_digit()) {
                    name.parse::<usize>().unwrap_or(usize::MAX)
                } else {
                    match c.names.iter().find(|(n, _)| *n == name) {
                        Some((_, gi)) => *gi,
                        None => return Err(Error::index(format!("unknown group name '{name}'"))),
                    }
                };
                group(&mut cur, &mut out, g)?;
            }
            '0' => {
                let mut v = 0u32;
                for _ in 0..2 {
                    match cs.get(i).and_then(|c| c.to_digit(8)) {
                        Some(d) => {
                            v = v * 8 + d;
                            i += 1;
                        }
                        None => break,
                    }
                }
                cur.push(char::from_u32(v).unwrap_or('\0'));
            }
            '1'..='9' => {
                let a = cs.get(i).copied().filter(|c| c.is_ascii_digit());
                let b = cs.get(i + 1).copied().filter(|c| c.is_ascii_digit());
                if let (Some(a), Some(b)) = (a, b) {
                    if e <= '7' && a <= '7' && b <= '7' {
                        let v = (e as u32 - 48) * 64 + (a as u32 - 48) * 8 + (b as u32 - 48);
                        if v > 0o377 {
                            return Err(re_err("octal escape value outside of range 0-0o377"));
                        }
                        i += 2;
                        cur.push(char::from_u32(v).unwrap_or('\0'));
                        continue;
                    }
                }
                let mut g = e as usize - 48;
                if let Some(a) = a {
                    g = g * 10 + (a as usize - 48);
                    i += 1;
                }
                group(&mut cur, &mut out, g)?;
            }
            'a' => cur.push('\x07'),
            'b' => cur.push('\x08'),
            'f' => cur.push('\x0c'),
            'n' => cur.push('\n'),
            'r' => cur.push('\r'),
            't' => cur.push('\t'),
            'v' => cur.push('\x0b'),
            '\\' => cur.push('\\'),
            c if c.is_ascii_alphabetic() => {
                return Err(re_err(format!("bad escape \\{c}")));
            }
            c => {
                cur.push('\\');
                cur.push(c);
            }
        }
    }
    if !cur.is_empty() {
        out.push(Piece::Lit(cur));
    }
    Ok(out)
}

/// `re.sub` with a function producing each replacement (`None` = skip).
fn sub_with(
    c: &Compiled,
    s: &str,
    count: i64,
    mut f: impl FnMut(&Spans) -> Result<Option<String>>,
) -> Result<String> {
    if count < 0 {
        return Ok(s.to_string());
    }
    let ms = find_all(c, s, count as usize)?;
    let mut out = String::with_capacity(s.len());
    let mut last = 0;
    for sp in &ms {
        let (a, b) = sp[0].unwrap_or((last, last));
        out.push_str(&s[last..a]);
        if let Some(r) = f(sp)? {
            out.push_str(&r);
        }
        last = b;
    }
    out.push_str(&s[last..]);
    Ok(out)
}

fn sub_template(c: &Compiled, s: &str, repl: &str, count: i64) -> Result<String> {
    let pieces = parse_template(c, repl)?;
    sub_with(c, s, count, |sp| {
        let mut r = String::new();
        for p in &pieces {
            match p {
                Piece::Lit(l) => r.push_str(l),
                Piece::Group(g) => {
                    if let Some((a, b)) = sp[*g] {
                        r.push_str(&s[a..b])
                    }
                }
            }
        }
        Ok(Some(r))
    })
}

fn sub_lambda(cx: &Cx, c: &Compiled, s: &str, f: &Value, count: i64) -> Result<String> {
    sub_with(c, s, count, |sp| {
        match call_with_match(cx.env, f, c, s, sp)? {
            Value::Null => Ok(None),
            Value::Str(ref r) => Ok(Some(r.to_string())),
            other => Err(Error::type_(format!(
                "expected str instance, {} found",
                other.type_name()
            ))),
        }
    })
}

/// `re.split` (groups included; 0 = no limit, negative = no split).
fn split_impl(c: &Compiled, s: &str, maxsplit: i64) -> Result<Value> {
    if maxsplit < 0 {
        return Ok(Value::list(vec![Value::str(s)]));
    }
    let ms = find_all(c, s, maxsplit as usize)?;
    let mut out = Vec::new();
    let mut last = 0;
    for sp in &ms {
        let (a, b) = sp[0].unwrap_or((last, last));
        out.push(Value::str(&s[last..a]));
        for g in &sp[1..] {
            out.push(match g {
                Some((x, y)) => Value::str(&s[*x..*y]),
                None => Value::Null,
            });
        }
        last = b;
    }
    out.push(Value::str(&s[last..]));
    Ok(Value::list(out))
}

// ---------------------------------------------------------------------------
// Natives
// ---------------------------------------------------------------------------

fn regex_arg(v: &Value) -> Result<Arc<Compiled>> {
    as_regex(v).ok_or_else(|| Error::type_("expected a regex object"))
}

/// `regex.regex`: compiles a pattern with flags.
///
/// Matches yaql `regex.regex` (`regex(pattern, ignoreCase, multiLine,
/// dotAll)`). A bad pattern raises Python's `re.error` (kind `error`).
///
/// ```yaql
/// regex('ABC', ignoreCase => true).matches('xabcx')
/// # => true
/// regex('^b', multiLine => true).matches("a\nb")
/// # => true
/// regex('a.b', dotAll => true).matches("a\nb")
/// # => true
/// regex('(')
/// # error: error
/// ```
fn regex_(_: &Cx, a: Args) -> Result<Value> {
    let mut flags = 0;
    if a.bool(1) {
        flags |= IGNORECASE;
    }
    if a.bool(2) {
        flags |= MULTILINE;
    }
    if a.bool(3) {
        flags |= DOTALL;
    }
    Ok(regex_value(compile(a.str(0), flags)?))
}

/// `regex.matches`: `regexp.matches(string)`.
///
/// Matches yaql `regex.matches` (`regexp.matches(string)`): a search anywhere
/// in the string, not an anchored match.
///
/// ```yaql
/// regex(`a+`).matches('baaad')
/// # => true
/// regex(`^a+$`).matches('baaad')
/// # => false
/// ```
fn matches(_: &Cx, a: Args) -> Result<Value> {
    let c = regex_arg(a.get(0))?;
    Ok(Value::Bool(search_one(&c, a.str(1))?.is_some()))
}

/// `regex.matches_`: `string.matches(pattern)`.
///
/// Matches yaql `regex.matches_` (`string.matches(regexp)` with a pattern
/// string).
///
/// ```yaql
/// 'abc'.matches('^a')
/// # => true
/// 'abc'.matches('^b')
/// # => false
/// 'abc'.matches('[')
/// # error: error
/// ```
fn matches_(_: &Cx, a: Args) -> Result<Value> {
    let c = compile(a.str(1), 0)?;
    Ok(Value::Bool(search_one(&c, a.str(0))?.is_some()))
}

/// What compiled code runs for `string.matches(pattern)` and `string =~
/// pattern` of a constant pattern: the search of [`matches_`], the
/// pattern compiled once.
struct Search(Arc<Compiled>);

impl runtime::registry::StrTest for Search {
    /// `None` where [`matches_`] raises (the backtracking limit).
    fn test(&self, s: &str) -> Option<bool> {
        search_one(&self.0, s).ok().map(|m| m.is_some())
    }
}

/// The [`Search`] of a constant pattern; `None` for a bad pattern (whose
/// error [`matches_`] raises) or a value that is no string.
fn prepare_search(pattern: &Value) -> Option<Box<dyn runtime::registry::StrTest>> {
    let c = compile(pattern.as_str()?, 0).ok()?;
    Some(Box::new(Search(c)))
}

/// `regex.matches_operator_regex`: `string =~ regex`.
///
/// Matches yaql `regex.matches_operator_regex` (`#operator_=~` with a regex
/// object).
///
/// ```yaql
/// 'abc' =~ regex('B', ignoreCase => true)
/// # => true
/// ```
fn match_op_regex(_: &Cx, a: Args) -> Result<Value> {
    let c = regex_arg(a.get(1))?;
    Ok(Value::Bool(search_one(&c, a.str(0))?.is_some()))
}

/// `regex.matches_operator_string`: `string =~ pattern`.
///
/// Matches yaql `regex.matches_operator_string` (`#operator_=~` with a pattern
/// string).
///
/// ```yaql
/// 'abc' =~ '^a.c$'
/// # => true
/// 'abc' =~ '^A'
/// # => false
/// ```
fn match_op_string(_: &Cx, a: Args) -> Result<Value> {
    let c = compile(a.str(1), 0)?;
    Ok(Value::Bool(search_one(&c, a.str(0))?.is_some()))
}

/// `regex.not_matches_operator_regex`: `string !~ regex`.
///
/// Matches yaql `regex.not_matches_operator_regex` (`#operator_!~` with a
/// regex object).
///
/// ```yaql
/// 'abc' !~ regex('^b')
/// # => true
/// 'abc' !~ regex('b')
/// # => false
/// ```
fn not_match_op_regex(_: &Cx, a: Args) -> Result<Value> {
    let c = regex_arg(a.get(1))?;
    Ok(Value::Bool(search_one(&c, a.str(0))?.is_none()))
}

/// `regex.not_matches_operator_string`: `string !~ pattern`.
///
/// Matches yaql `regex.not_matches_operator_string` (`#operator_!~` with a
/// pattern string).
///
/// ```yaql
/// 'abc' !~ 'x'
/// # => true
/// 'abc' !~ 'b'
/// # => false
/// ```
fn not_match_op_string(_: &Cx, a: Args) -> Result<Value> {
    let c = compile(a.str(1), 0)?;
    Ok(Value::Bool(search_one(&c, a.str(0))?.is_none()))
}

/// `regex.search` without selector: the first matching substring or null.
///
/// Matches yaql `regex.search` (`regexp.search(string)`, no selector).
///
/// ```yaql
/// regex(`\d+`).search('ab12cd34')
/// # => "12"
/// regex('x').search('abc')
/// # => null
/// ```
fn search(_: &Cx, a: Args) -> Result<Value> {
    let c = regex_arg(a.get(0))?;
    let s = a.str(1);
    Ok(match search_one(&c, s)? {
        Some(sp) => match sp[0] {
            Some((x, y)) => Value::str(&s[x..y]),
            None => Value::Null,
        },
        None => Value::Null,
    })
}

/// `regex.search` with selector: the selector applied to the match records.
///
/// Matches yaql `regex.search` (`regexp.search(string, selector)`): `$`
/// (= `$1`) is the whole match as `{value, start, end}`, `$2`, `$3`, ... the
/// groups.
///
/// ```yaql
/// regex(`(\w)(\d+)`).search('ab12cd34', [$.value, $.start, $.end])
/// # => ["b12", 1, 4]
/// regex(`(\w)(\d+)`).search('ab12cd34', [$2.value, $3.value])
/// # => ["b", "12"]
/// regex('x').search('abc', $.value)
/// # => null
/// ```
fn search_sel(cx: &Cx, a: Args) -> Result<Value> {
    let c = regex_arg(a.get(0))?;
    let s = a.str(1);
    match search_one(&c, s)? {
        Some(sp) => call_with_match(cx.env, a.get(2), &c, s, &sp),
        None => Ok(Value::Null),
    }
}

/// `regex.search_all`: every matching substring (a generator).
///
/// Matches yaql `regex.search_all` (`regexp.searchAll(string)`, no selector);
/// empty matches follow Python 3.7+ `re.finditer`.
///
/// ```yaql
/// regex(`\d+`).searchAll('ab12cd34e5')
/// # => ["12", "34", "5"]
/// regex(`\d*`).searchAll('a1')
/// # => ["", "1", ""]
/// regex('x').searchAll('abc')
/// # => []
/// ```
fn search_all(_: &Cx, a: Args) -> Result<Value> {
    let c = regex_arg(a.get(0))?;
    let s = a.str(1).to_string();
    let ms = find_all(&c, &s, 0)?;
    Ok(Value::iter(ms.into_iter().map(move |sp| {
        Ok(match sp[0] {
            Some((x, y)) => Value::str(&s[x..y]),
            None => Value::Null,
        })
    })))
}

/// `regex.search_all` with selector (a generator calling it per match).
///
/// Matches yaql `regex.search_all` (`regexp.searchAll(string, selector)`).
///
/// ```yaql
/// regex(`(\w)(\d+)`).searchAll('ab12cd34', $3.value)
/// # => ["12", "34"]
/// regex(`\d+`).searchAll('ab12cd34', $.start)
/// # => [2, 6]
/// ```
fn search_all_sel(cx: &Cx, a: Args) -> Result<Value> {
    let c = regex_arg(a.get(0))?;
    let s = a.str(1).to_string();
    let ms = find_all(&c, &s, 0)?;
    let env = cx.env.clone();
    let f = a.get(2).clone();
    Ok(Value::iter(
        ms.into_iter()
            .map(move |sp| call_with_match(&env, &f, &c, &s, &sp)),
    ))
}

/// `regex.split`: `regexp.split(string, maxSplit)`.
///
/// Matches yaql `regex.split` (`regexp.split(string, maxSplit => 0)`):
/// captured groups are included, 0 means no limit and a negative `maxSplit`
/// no split at all.
///
/// ```yaql
/// regex(`[,;]`).split('a,b;c')
/// # => ["a", "b", "c"]
/// regex(`([,;])`).split('a,b;c')
/// # => ["a", ",", "b", ";", "c"]
/// regex(`[,;]`).split('a,b;c', 1)
/// # => ["a", "b;c"]
/// regex(`[,;]`).split('a,b;c', -1)
/// # => ["a,b;c"]
/// ```
fn split(_: &Cx, a: Args) -> Result<Value> {
    let c = regex_arg(a.get(0))?;
    split_impl(&c, a.str(1), a.int(2)?)
}

/// `regex.split_string`: `string.split(regexp, maxSplit)`.
///
/// Matches yaql `regex.split_string` (`string.split(regexp, maxSplit => 0)`).
///
/// ```yaql
/// 'a, b;c'.split(regex(`[,;] ?`))
/// # => ["a", "b", "c"]
/// 'a1b2c3'.split(regex(`\d`), 2)
/// # => ["a", "b", "c3"]
/// ```
fn split_string(_: &Cx, a: Args) -> Result<Value> {
    let c = regex_arg(a.get(1))?;
    split_impl(&c, a.str(0), a.int(2)?)
}

/// `regex.replace`: `regexp.replace(string, repl, count)`.
///
/// Matches yaql `regex.replace` (`regexp.replace(string, repl, count => 0)`):
/// `repl` is a Python `re.sub` template (`\1`, `\g<name>`); use a backtick
/// string so the backslashes survive.
///
/// ```yaql
/// regex(`\d+`).replace('a12b23', 'xx')
/// # => "axxbxx"
/// regex(`\d+`).replace('a12b23', 'xx', 1)
/// # => "axxb23"
/// regex(`(\w+)@(\w+)`).replace('joe@host', `\2 at \1`)
/// # => "host at joe"
/// regex('a').replace('abc', `\9`)
/// # error: error
/// ```
fn replace(_: &Cx, a: Args) -> Result<Value> {
    let c = regex_arg(a.get(0))?;
    Ok(Value::str(sub_template(&c, a.str(1), a.str(2), a.int(3)?)?))
}

/// `regex.replace_string`: `string.replace(regexp, repl, count)`.
///
/// Matches yaql `regex.replace_string` (`string.replace(regexp, repl,
/// count => 0)`).
///
/// ```yaql
/// 'a12b23'.replace(regex(`\d+`), 'xx')
/// # => "axxbxx"
/// 'joe@host'.replace(regex(`(?P<u>\w+)@`), `<\g<u>>`)
/// # => "<joe>host"
/// ```
fn replace_string(_: &Cx, a: Args) -> Result<Value> {
    let c = regex_arg(a.get(1))?;
    Ok(Value::str(sub_template(&c, a.str(0), a.str(2), a.int(3)?)?))
}

/// `regex.replace_by`: `regexp.replaceBy(string, repl, count)`.
///
/// Matches yaql `regex.replace_by` (`regexp.replaceBy(string, repl,
/// count => 0)`): `repl` is evaluated per match with the match published as in
/// `search`; a null result removes the match, a non-string one is a
/// `TypeError`.
///
/// ```yaql
/// regex(`\d+`).replaceBy('a1b22', str(int($.value) * 2))
/// # => "a2b44"
/// regex(`(\d)(\d)`).replaceBy('a12b34', $3.value + $2.value)
/// # => "a21b43"
/// regex(`\d+`).replaceBy('a1b22', null)
/// # => "ab"
/// regex(`\d+`).replaceBy('a1b22', len($.value))
/// # error: TypeError
/// ```
fn replace_by(cx: &Cx, a: Args) -> Result<Value> {
    let c = regex_arg(a.get(0))?;
    Ok(Value::str(sub_lambda(
        cx,
        &c,
        a.str(1),
        a.get(2),
        a.int(3)?,
    )?))
}

/// `regex.replace_by_string`: `string.replaceBy(regexp, repl, count)`.
///
/// Matches yaql `regex.replace_by_string` (`string.replaceBy(regexp, repl,
/// count => 0)`).
///
/// ```yaql
/// 'a12b23'.replaceBy(regex(`\d+`), with(int($.value)) -> switch($ < 20 => xx, true => yy))
/// # => "axxbyy"
/// 'a1b22'.replaceBy(regex(`\d+`), '<' + $.value + '>', 1)
/// # => "a<1>b22"
/// ```
fn replace_by_string(cx: &Cx, a: Args) -> Result<Value> {
    let c = regex_arg(a.get(1))?;
    Ok(Value::str(sub_lambda(
        cx,
        &c,
        a.str(0),
        a.get(2),
        a.int(3)?,
    )?))
}

/// `regex.escape_regex`: Python 3.7+ `re.escape`.
///
/// Matches yaql `regex.escape_regex` (`escapeRegex`): Python 3.7+ `re.escape`,
/// which escapes only regex metacharacters and whitespace.
///
/// ```yaql
/// escapeRegex('a.b*c')
/// # => "a\\.b\\*c"
/// escapeRegex('zz top_1')
/// # => "zz\\ top_1"
/// 'a.b' =~ escapeRegex('a.b')
/// # => true
/// ```
fn escape_regex(_: &Cx, a: Args) -> Result<Value> {
    let mut out = String::new();
    for c in a.str(0).chars() {
        if "()[]{}?*+-|^$\\.&~# \t\n\r\x0b\x0c".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    Ok(Value::str(out))
}

/// `regex.is_regex`.
///
/// Matches yaql `regex.is_regex` (`isRegex`).
///
/// ```yaql
/// isRegex(regex('a'))
/// # => true
/// isRegex('a')
/// # => false
/// isRegex(null)
/// # => false
/// ```
fn is_regex(_: &Cx, a: Args) -> Result<Value> {
    Ok(Value::Bool(is_regex_value(a.get(0))))
}

/// Registers the group.
pub fn register(r: &mut Registry) {
    let re = |n: &str| p(n, Ty::Check(is_regex_value));
    let s = |n: &str| p(n, Ty::Str);
    let flag = |n: &str| p(n, Ty::Bool).nullable().default(false);
    let count = |n: &str| p(n, Ty::Int).default(0i64);
    r.function(
        "regex",
        vec![
            s("pattern"),
            flag("ignoreCase"),
            flag("multiLine"),
            flag("dotAll"),
        ],
        regex_,
    );
    r.method("matches", vec![re("regexp"), s("string")], matches);
    r.method("matches", vec![s("string"), s("regexp")], matches_)
        .str_test(prepare_search);
    r.function(
        "#operator_=~",
        vec![s("string"), re("regexp")],
        match_op_regex,
    );
    r.function(
        "#operator_=~",
        vec![s("string"), s("pattern")],
        match_op_string,
    )
    .str_test(prepare_search);
    r.function(
        "#operator_!~",
        vec![s("string"), re("regexp")],
        not_match_op_regex,
    );
    r.function(
        "#operator_!~",
        vec![s("string"), s("pattern")],
        not_match_op_string,
    );
    r.method("search", vec![re("regexp"), s("string")], search);
    r.method(
        "search",
        vec![re("regexp"), s("string"), lazy("selector")],
        search_sel,
    );
    r.method("searchAll", vec![re("regexp"), s("string")], search_all);
    r.method(
        "searchAll",
        vec![re("regexp"), s("string"), lazy("selector")],
        search_all_sel,
    );
    r.method(
        "split",
        vec![re("regexp"), s("string"), count("maxSplit")],
        split,
    );
    r.method(
        "split",
        vec![s("string"), re("regexp"), count("maxSplit")],
        split_string,
    );
    r.method(
        "replace",
        vec![re("regexp"), s("string"), s("repl"), count("count")],
        replace,
    );
    r.method(
        "replace",
        vec![s("string"), re("regexp"), s("repl"), count("count")],
        replace_string,
    );
    r.method(
        "replaceBy",
        vec![re("regexp"), s("string"), lazy("repl"), count("count")],
        replace_by,
    );
    r.method(
        "replaceBy",
        vec![s("string"), re("regexp"), lazy("repl"), count("count")],
        replace_by_string,
    );
    r.function("escapeRegex", vec![s("string")], escape_regex)
        .pure_();
    r.function("isRegex", vec![p("value", Ty::Any).nullable()], is_regex)
        .pure_();
}

#[cfg(test)]
mod tests {
    use runtime::Value;

    fn eval(expr: &str) -> Result<Value, String> {
        let env = crate::env(runtime::Options::test_suite(false));
        let prog = compiler::compile(expr, &crate::registry(false), Default::default())
            .map_err(|e| format!("{e:?}"))?;
        let v = prog
            .eval(&env, Value::Null)
            .map_err(|e| e.kind().to_string())?;
        crate::finalize(&env, v).map_err(|e| e.kind().to_string())
    }

    fn ok(expr: &str) -> String {
        runtime::json::to_tagged_string(&eval(expr).unwrap())
    }

    #[test]
    fn translate_python_syntax() {
        assert_eq!(ok("'ab\\n' =~ 'b$'"), "true");
        assert_eq!(ok("'a{b' =~ 'a{b'"), "true");
        assert_eq!(ok("regex('(?P<x>a)(?P=x)').matches('xaa')"), "true");
        assert_eq!(ok("regex('(?<=a)b').search('cbab', $.start)"), "3");
        assert_eq!(eval("'a' =~ '('").unwrap_err(), "error");
    }

    #[test]
    fn search_and_replace() {
        assert_eq!(
            ok("regex(`(\\d+)\\.?(\\d+)?`).search('aa24.16bb', $2.value + '/' + str($3.start))"),
            "\"24/5\""
        );
        assert_eq!(ok("regex('x*').replace('abxd', '-')"), "\"-a-b--d-\"");
        assert_eq!(
            ok("regex('x*').split('axb')"),
            "[\"\", \"a\", \"\", \"b\", \"\"]"
        );
        assert_eq!(
            ok("regex(`([a-z])([A-Z])`).replace('fooBar', `\\2_\\1`)"),
            "\"foB_oar\""
        );
        assert_eq!(
            ok("'a1b22'.replaceBy(regex(`\\d+`), str($.value.len()))"),
            "\"a1b2\""
        );
        assert_eq!(ok("regex('é.').searchAll('aébéc', $.end)"), "[3, 5]");
        assert_eq!(ok("isRegex(regex('a'))"), "true");
        assert_eq!(ok("isRegex(lambda($))"), "false");
        assert_eq!(ok("escapeRegex('a.b:c d')"), "\"a\\\\.b:c\\\\ d\"");
    }
}
