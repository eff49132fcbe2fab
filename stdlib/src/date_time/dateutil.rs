//! dateutil.parser.parse (the common formats).

use super::common::*;
use super::format::MONTHS;
use super::format::WEEKDAYS;
use runtime::ErrorKind;

use chrono::Datelike;
use runtime::{Error, Result};

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(String),
    Word(String),
    Sym(char),
}

fn tokenize(s: &str) -> Vec<Tok> {
    let cs: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < cs.len() {
        let c = cs[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let st = i;
            while i < cs.len()
                && (cs[i].is_ascii_digit()
                    || (cs[i] == '.' && cs.get(i + 1).is_some_and(|c| c.is_ascii_digit())))
            {
                i += 1;
            }
            let t: String = cs[st..i].iter().collect();
            if t.matches('.').count() > 1 {
                for (k, part) in t.split('.').enumerate() {
                    if k > 0 {
                        out.push(Tok::Sym('.'));
                    }
                    out.push(Tok::Num(part.to_string()));
                }
            } else {
                out.push(Tok::Num(t));
            }
        } else if c.is_alphabetic() {
            let st = i;
            while i < cs.len() && cs[i].is_alphabetic() {
                i += 1;
            }
            out.push(Tok::Word(cs[st..i].iter().collect()));
        } else {
            out.push(Tok::Sym(c));
            i += 1;
        }
    }
    out
}

fn month_of(w: &str) -> Option<i64> {
    let l = w.to_lowercase();
    if l == "sept" {
        return Some(9);
    }
    MONTHS
        .iter()
        .position(|m| {
            let m = m.to_lowercase();
            l == m || (l.len() == 3 && m.starts_with(&l))
        })
        .map(|x| x as i64 + 1)
}

fn weekday_of(w: &str) -> bool {
    let l = w.to_lowercase();
    WEEKDAYS.iter().any(|d| {
        let d = d.to_lowercase();
        l == d || (l.len() == 3 && d.starts_with(&l))
    }) || ["tues", "wed", "thur", "thurs"].contains(&l.as_str())
}

const JUMP: [&str; 12] = [
    "at", "on", "and", "ad", "m", "t", "of", "st", "nd", "rd", "th", "sept",
];

struct Ymd {
    vals: Vec<i64>,
    ystr: Option<usize>,
    mstr: Option<usize>,
    century: bool,
}

impl Ymd {
    fn push_num(&mut self, s: &str) -> Result<()> {
        let v: i64 = s.parse().map_err(|_| parser_error("bad number"))?;
        if s.len() > 2 {
            self.century = true;
            self.ystr = Some(self.vals.len());
        }
        self.vals.push(v);
        Ok(())
    }
    fn push_month(&mut self, m: i64) {
        self.mstr = Some(self.vals.len());
        self.vals.push(m);
    }
}

fn parser_error(m: &str) -> Error {
    Error::new(ErrorKind::ParserError, m.to_string())
}

/// `dateutil.parser.parse(s)` for the usual date/time spellings (ISO 8601,
/// compact `YYYYMMDD[THHMMSS]`, `M/D/Y`, month names, am/pm, UTC offsets).
/// Missing date parts come from today (`now_us`).
pub fn dateutil_parse(s: &str, now_us: i64) -> Result<(i64, Option<i32>)> {
    let toks = tokenize(s);
    if toks.is_empty() {
        return Err(parser_error("String does not contain a date"));
    }
    let mut p = DateParse {
        s,
        ymd: Ymd {
            vals: vec![],
            ystr: None,
            mstr: None,
            century: false,
        },
        hour: None,
        minute: None,
        second: None,
        micro: None,
        ampm: None,
        tz: None,
        flip: false,
    };
    let mut i = 0;
    while i < toks.len() {
        match &toks[i] {
            Tok::Num(t) => p.number(&toks, &mut i, t)?,
            Tok::Word(w) => p.word(&toks, &mut i, w)?,
            Tok::Sym(c @ ('+' | '-')) if p.hour.is_some() && p.tz.is_none_or(|t| t == 0) => {
                p.offset(&toks, &mut i, *c)?
            }
            Tok::Sym(' ' | '.' | ',' | ';' | '-' | '/' | '\'' | ':') => {}
            Tok::Sym(_) => return Err(p.unknown()),
        }
        i += 1;
    }
    if let (Some(pm), Some(h)) = (p.ampm, p.hour) {
        p.hour = Some(match (pm, h) {
            (true, h) if h < 12 => h + 12,
            (false, 12) => 0,
            (_, h) => h,
        });
    }
    let (y, m, d) = p.ymd.resolve(s)?;
    if p.ymd.vals.is_empty() && p.hour.is_none() && p.tz.is_none() {
        return Err(parser_error("String does not contain a date"));
    }
    p.finish(y, m, d, now_us)
}

/// The state of [`dateutil_parse`] over the tokens of `s`.
struct DateParse<'a> {
    s: &'a str,
    ymd: Ymd,
    hour: Option<i64>,
    minute: Option<i64>,
    second: Option<i64>,
    micro: Option<i64>,
    ampm: Option<bool>,
    tz: Option<i32>,
    flip: bool,
}

fn is_sym(toks: &[Tok], i: usize, c: char) -> bool {
    matches!(toks.get(i), Some(Tok::Sym(x)) if *x == c)
}

/// Seconds and microseconds of `S[.ffffff]`.
fn sec_frac(t: &str) -> (i64, i64) {
    match t.split_once('.') {
        Some((a, b)) => {
            let mut f: String = b.chars().take(6).collect();
            while f.len() < 6 {
                f.push('0');
            }
            (a.parse().unwrap_or(0), f.parse().unwrap_or(0))
        }
        None => (t.parse().unwrap_or(0), 0),
    }
}

impl DateParse<'_> {
    fn unknown(&self) -> Error {
        parser_error(&format!("Unknown string format: {}", self.s))
    }

    /// A number token at `i`: a time (`HH[MM]`, `HHMMSS`, `H:M[:S]`), a
    /// compact or separated date, or one date part.
    fn number(&mut self, toks: &[Tok], i: &mut usize, t: &str) -> Result<()> {
        let int_part = t.split('.').next().unwrap_or("");
        let l = int_part.len();
        let next_word_ampm = matches!(toks.get(*i + 1), Some(Tok::Word(w)) if ["am","pm","a","p"].contains(&w.to_lowercase().as_str()));
        if self.ymd.vals.len() == 3
            && (l == 2 || l == 4)
            && self.hour.is_none()
            && !is_sym(toks, *i + 1, ':')
            && !next_word_ampm
            && !t.contains('.')
        {
            self.hour = Some(int_part[..2].parse().unwrap_or(0));
            if l == 4 {
                self.minute = Some(int_part[2..].parse().unwrap_or(0));
            }
        } else if l == 6 && !is_sym(toks, *i + 1, ':') {
            if self.ymd.vals.is_empty() && !t.contains('.') {
                self.ymd.push_num(&t[..2])?;
                self.ymd.push_num(&t[2..4])?;
                self.ymd.push_num(&t[4..])?;
            } else {
                self.hour = Some(t[..2].parse().unwrap_or(0));
                self.minute = Some(t[2..4].parse().unwrap_or(0));
                let (s2, f) = sec_frac(&t[4..]);
                self.second = Some(s2);
                self.micro = Some(f);
            }
        } else if (l == 8 || l == 12 || l == 14) && !t.contains('.') {
            self.ymd.push_num(&t[..4])?;
            self.ymd.push_num(&t[4..6])?;
            self.ymd.push_num(&t[6..8])?;
            if l > 8 {
                self.hour = Some(t[8..10].parse().unwrap_or(0));
                self.minute = Some(t[10..12].parse().unwrap_or(0));
                if l > 12 {
                    self.second = Some(t[12..].parse().unwrap_or(0));
                }
            }
        } else if is_sym(toks, *i + 1, ':') {
            self.clock(toks, i, int_part)?;
        } else if matches!(toks.get(*i + 1), Some(Tok::Sym('-' | '/' | '.'))) {
            self.separated_date(toks, i, int_part)?;
        } else if next_word_ampm {
            self.hour = Some(int_part.parse().unwrap_or(0));
        } else if self.ymd.vals.len() < 3 && !t.contains('.') {
            self.ymd.push_num(t)?;
        } else {
            return Err(self.unknown());
        }
        Ok(())
    }

    /// `H:M[:S[.f]]` from the hour at `i`.
    fn clock(&mut self, toks: &[Tok], i: &mut usize, int_part: &str) -> Result<()> {
        self.hour = Some(int_part.parse().unwrap_or(0));
        *i += 2;
        match toks.get(*i) {
            Some(Tok::Num(m)) => {
                let (mm, f) = sec_frac(m);
                self.minute = Some(mm);
                if f != 0 {
                    self.second = Some(f * 60 / 1_000_000);
                }
            }
            _ => return Err(self.unknown()),
        }
        if is_sym(toks, *i + 1, ':') {
            *i += 2;
            match toks.get(*i) {
                Some(Tok::Num(sx)) => {
                    let (s2, f) = sec_frac(sx);
                    self.second = Some(s2);
                    self.micro = Some(f);
                }
                _ => return Err(self.unknown()),
            }
        }
        Ok(())
    }

    /// `N-N[-N]` (or `/`, `.`; a part may be a month name) from the number
    /// at `i`.
    fn separated_date(&mut self, toks: &[Tok], i: &mut usize, int_part: &str) -> Result<()> {
        let sep = toks[*i + 1].clone();
        self.ymd.push_num(int_part)?;
        *i += 2;
        self.date_part(toks.get(*i))?;
        if toks.get(*i + 1) == Some(&sep) {
            *i += 2;
            self.date_part(toks.get(*i))?;
        }
        Ok(())
    }

    /// A number or month name of a separated date.
    fn date_part(&mut self, tok: Option<&Tok>) -> Result<()> {
        match tok {
            Some(Tok::Num(n)) => self.ymd.push_num(n)?,
            Some(Tok::Word(w)) => match month_of(w) {
                Some(m) => self.ymd.push_month(m),
                None => return Err(self.unknown()),
            },
            _ => return Err(self.unknown()),
        }
        Ok(())
    }

    /// A word token at `i`: a month (maybe `Mon-D[-Y]`), a weekday, am/pm,
    /// a UTC zone name or a filler word.
    fn word(&mut self, toks: &[Tok], i: &mut usize, w: &str) -> Result<()> {
        let lw = w.to_lowercase();
        if let Some(m) = month_of(w) {
            self.ymd.push_month(m);
            if matches!(toks.get(*i + 1), Some(Tok::Sym('-' | '/'))) {
                let sep = toks[*i + 1].clone();
                if let Some(Tok::Num(n2)) = toks.get(*i + 2) {
                    self.ymd.push_num(n2)?;
                    *i += 2;
                    if toks.get(*i + 1) == Some(&sep) {
                        if let Some(Tok::Num(n3)) = toks.get(*i + 2) {
                            self.ymd.push_num(n3)?;
                            *i += 2;
                        }
                    }
                }
            }
        } else if weekday_of(w) {
        } else if ["am", "pm", "a", "p"].contains(&lw.as_str()) && self.hour.is_some() {
            let pm = lw.starts_with('p');
            let h = self.hour.unwrap_or(0);
            if h > 12 {
                return Err(self.unknown());
            }
            self.ampm = Some(pm);
        } else if ["utc", "gmt", "z"].contains(&lw.as_str()) && self.tz.is_none() {
            self.tz = Some(0);
            // `GMT+3` means "my time + 3 is GMT".
            self.flip = matches!(toks.get(*i + 1), Some(Tok::Sym('+' | '-')));
        } else if JUMP.contains(&lw.as_str()) {
        } else {
            return Err(self.unknown());
        }
        Ok(())
    }

    /// A UTC offset `+HHMM`, `+H[H]:MM` or `+H[H]` from the sign at `i`.
    fn offset(&mut self, toks: &[Tok], i: &mut usize, c: char) -> Result<()> {
        let sign = if (c == '-') != self.flip { -1 } else { 1 };
        let Some(Tok::Num(n)) = toks.get(*i + 1) else {
            return Err(self.unknown());
        };
        let (h, m) = if n.len() == 4 {
            (n[..2].parse().unwrap_or(0), n[2..].parse().unwrap_or(0))
        } else if is_sym(toks, *i + 2, ':') {
            let m = match toks.get(*i + 3) {
                Some(Tok::Num(m)) => m.parse().unwrap_or(0),
                _ => return Err(self.unknown()),
            };
            *i += 2;
            (n.parse().unwrap_or(0), m)
        } else if n.len() <= 2 {
            (n.parse::<i32>().unwrap_or(0), 0)
        } else {
            return Err(self.unknown());
        };
        self.tz = Some(sign * (h * 3600 + m * 60));
        *i += 1;
        Ok(())
    }

    /// The wall-clock microseconds and offset: two-digit years in the
    /// century around today, missing date parts from today (`now_us`).
    fn finish(
        &self,
        mut y: Option<i64>,
        m: Option<i64>,
        d: Option<i64>,
        now_us: i64,
    ) -> Result<(i64, Option<i32>)> {
        let today = naive(now_us);
        if let Some(yy) = y {
            if yy < 100 && !self.ymd.century {
                let cy = today.year() as i64;
                let mut yr = yy + cy / 100 * 100;
                if yr >= cy + 50 {
                    yr -= 100;
                } else if yr < cy - 50 {
                    yr += 100;
                }
                y = Some(yr);
            }
        }
        let yy = y.unwrap_or(today.year() as i64);
        let mm = m.unwrap_or(today.month() as i64);
        let dd = match d {
            Some(d) => d,
            None => (today.day() as i64).min(if (1..=12).contains(&mm) {
                days_in_month(yy, mm)
            } else {
                31
            }),
        };
        let w = build_wall(
            yy,
            mm,
            dd,
            self.hour.unwrap_or(0),
            self.minute.unwrap_or(0),
            self.second.unwrap_or(0),
            self.micro.unwrap_or(0),
        )
        .map_err(|e| parser_error(&format!("{}: {}", e.message(), self.s)))?;
        Ok((w, self.tz))
    }
}

impl Ymd {
    /// Year, month and day of the date parts (`yearfirst = dayfirst =
    /// false`).
    fn resolve(&self, s: &str) -> Result<(Option<i64>, Option<i64>, Option<i64>)> {
        let v = &self.vals;
        let (mut y, mut m, mut d): (Option<i64>, Option<i64>, Option<i64>) = (None, None, None);
        let n = v.len();
        if n > 3 {
            return Err(parser_error(&format!("More than three YMD values: {s}")));
        }
        let strs = self.ystr.is_some() as usize + self.mstr.is_some() as usize;
        if n > 0 && n == strs {
            if let Some(k) = self.ystr {
                y = Some(v[k]);
            }
            if let Some(k) = self.mstr {
                m = Some(v[k]);
            }
        } else if n == 1 || (self.mstr.is_some() && n == 2) {
            let other = match self.mstr {
                Some(k) => {
                    m = Some(v[k]);
                    v[(k + n - 1) % n]
                }
                None => v[0],
            };
            if n > 1 || self.mstr.is_none() {
                if other > 31 {
                    y = Some(other)
                } else {
                    d = Some(other)
                }
            }
        } else if n == 2 {
            if v[0] > 31 {
                (y, m) = (Some(v[0]), Some(v[1]));
            } else if v[1] > 31 {
                (m, y) = (Some(v[0]), Some(v[1]));
            } else {
                (m, d) = (Some(v[0]), Some(v[1]));
            }
        } else if n == 3 {
            let (a, b, c) = (Some(v[0]), Some(v[1]), Some(v[2]));
            match self.mstr {
                Some(0) if v[1] > 31 => (m, y, d) = (a, b, c),
                Some(0) => (m, d, y) = (a, b, c),
                Some(1) if v[0] > 31 => (y, m, d) = (a, b, c),
                Some(1) => (d, m, y) = (a, b, c),
                Some(_) if v[1] > 31 => (d, y, m) = (a, b, c),
                Some(_) => (y, d, m) = (a, b, c),
                None if v[0] > 31 || self.ystr == Some(0) => (y, m, d) = (a, b, c),
                None if v[0] > 12 => (d, m, y) = (a, b, c),
                None => (m, d, y) = (a, b, c),
            }
        }
        Ok((y, m, d))
    }
}
