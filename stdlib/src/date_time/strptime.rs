//! strptime (CPython's `_strptime` in the C locale).

use super::common::*;
use super::format::MONTHS;
use super::format::WEEKDAYS;

use chrono::{Datelike, NaiveDate};
use runtime::{Error, Result};

fn names_re(names: &[&str], cut: Option<usize>) -> String {
    let mut v: Vec<String> = names
        .iter()
        .map(|n| {
            let n = n.to_lowercase();
            match cut {
                Some(k) => n[..k].to_string(),
                None => n,
            }
        })
        .collect();
    v.sort_by_key(|s| std::cmp::Reverse(s.len()));
    v.join("|")
}

fn directive_re(c: char, fmt: &str) -> Result<String> {
    let g = |name: char, body: &str| format!("(?P<{name}>{body})");
    Ok(match c {
        'd' => g('d', r"3[0-1]|[1-2]\d|0[1-9]|[1-9]| [1-9]"),
        'f' => g('f', r"[0-9]{1,6}"),
        'H' => g('H', r"2[0-3]|[0-1]\d|\d"),
        'I' => g('I', r"1[0-2]|0[1-9]|[1-9]"),
        'G' => g('G', r"\d\d\d\d"),
        'j' => g(
            'j',
            r"36[0-6]|3[0-5]\d|[1-2]\d\d|0[1-9]\d|00[1-9]|[1-9]\d|0[1-9]|[1-9]",
        ),
        'm' => g('m', r"1[0-2]|0[1-9]|[1-9]"),
        'M' => g('M', r"[0-5]\d|\d"),
        'S' => g('S', r"6[0-1]|[0-5]\d|\d"),
        'U' => g('U', r"5[0-3]|[0-4]\d|\d"),
        'W' => g('W', r"5[0-3]|[0-4]\d|\d"),
        'w' => g('w', r"[0-6]"),
        'u' => g('u', r"[1-7]"),
        'V' => g('V', r"5[0-3]|0[1-9]|[1-4]\d|\d"),
        'y' => g('y', r"\d\d"),
        'Y' => g('Y', r"\d\d\d\d"),
        'z' => g('z', r"[+-]\d\d:?[0-5]\d(:?[0-5]\d(\.\d{1,6})?)?|(?-i:Z)"),
        'A' => g('A', &names_re(&WEEKDAYS, None)),
        'a' => g('a', &names_re(&WEEKDAYS, Some(3))),
        'B' => g('B', &names_re(&MONTHS, None)),
        'b' => g('b', &names_re(&MONTHS, Some(3))),
        'p' => g('p', "am|pm"),
        'Z' => g('Z', "utc|gmt"),
        '%' => "%".to_string(),
        'c' => strptime_pattern("%a %b %d %H:%M:%S %Y", fmt)?,
        'x' => strptime_pattern("%m/%d/%y", fmt)?,
        'X' => strptime_pattern("%H:%M:%S", fmt)?,
        other => {
            return Err(Error::value(format!(
                "'{other}' is a bad directive in format '{fmt}'"
            )))
        }
    })
}

fn strptime_pattern(format: &str, whole: &str) -> Result<String> {
    let mut out = String::new();
    let mut it = format.chars().peekable();
    while let Some(c) = it.next() {
        if c == '%' {
            match it.next() {
                None => return Err(Error::value(format!("stray % in format '{whole}'"))),
                Some(d) if d.is_whitespace() => {
                    return Err(Error::value(format!(
                        "'\\' is a bad directive in format '{whole}'"
                    )))
                }
                Some(d) => out.push_str(&directive_re(d, whole)?),
            }
        } else if c.is_whitespace() {
            while it.peek().is_some_and(|c| c.is_whitespace()) {
                it.next();
            }
            out.push_str(r"\s+");
        } else {
            out.push_str(&::regex::escape(&c.to_string()));
        }
    }
    Ok(out)
}

fn ordinal(y: i64, m: i64, d: i64) -> Result<i64> {
    NaiveDate::from_ymd_opt(y as i32, m as u32, d as u32)
        .map(|x| x.num_days_from_ce() as i64)
        .ok_or_else(|| {
            if !(1..=9999).contains(&y) {
                Error::value(format!("year {y} is out of range"))
            } else if !(1..=12).contains(&m) {
                Error::value("month must be in 1..12")
            } else {
                Error::value("day is out of range for month")
            }
        })
}

fn from_ordinal(o: i64) -> Result<NaiveDate> {
    if !(1..=3_652_059).contains(&o) {
        return Err(Error::value("ordinal must be in 1..3652059"));
    }
    NaiveDate::from_num_days_from_ce_opt(o as i32).ok_or_else(|| Error::value("bad ordinal"))
}

/// Python `datetime.strptime(s, fmt)`: wall-clock microseconds and the
/// offset when `%z` was given.
pub fn strptime(s: &str, fmt: &str) -> Result<(i64, Option<i32>)> {
    let pat = strptime_pattern(fmt, fmt)?;
    let re = ::regex::Regex::new(&format!("(?i)^(?:{pat})")).map_err(|e| {
        let m = e.to_string();
        if m.contains("duplicate capture group name") {
            Error::new("error", "redefinition of group name")
        } else {
            Error::new("error", m)
        }
    })?;
    let Some(caps) = re.captures(s) else {
        return Err(Error::value(format!(
            "time data {} does not match format {}",
            runtime::pyrepr::str_repr(s),
            runtime::pyrepr::str_repr(fmt)
        )));
    };
    let end = caps.get(0).map_or(0, |m| m.end());
    if end != s.len() {
        return Err(Error::value(format!(
            "unconverted data remains: {}",
            &s[end..]
        )));
    }
    let fields = Fields::of(&caps)?;
    fields.check_iso()?;
    fields.resolve()
}

/// What the directives of a `strptime` match give (the locals of
/// CPython's `_strptime`).
struct Fields {
    year: Option<i64>,
    month: i64,
    day: i64,
    hour: i64,
    minute: i64,
    second: i64,
    fraction: i64,
    gmtoff: Option<i32>,
    iso_year: Option<i64>,
    iso_week: Option<i64>,
    week_of_year: i64,
    week_starts_mon: bool,
    weekday: Option<i64>,
    julian: Option<i64>,
}

/// The position of a (lower-cased) month or weekday name among `names`,
/// compared on their first `cut` characters when given.
fn name_index(names: &[&str], v: &str, cut: Option<usize>) -> Option<usize> {
    let l = v.to_lowercase();
    names.iter().position(|n| match cut {
        Some(c) => n[..c].to_lowercase() == l,
        None => n.to_lowercase() == l,
    })
}

/// The offset in seconds of a `%z` match (`Z`, `+HHMM[SS]`, `+HH:MM[:SS]`).
fn parse_gmtoff(v: &str) -> Result<i32> {
    let int = |t: &str| -> i64 { t.trim().parse::<i64>().unwrap_or(0) };
    if v == "Z" {
        return Ok(0);
    }
    let mut z: Vec<char> = v.chars().collect();
    if z.get(3) == Some(&':') {
        z.remove(3);
        if z.len() > 5 {
            if z[5] != ':' {
                return Err(Error::value(format!("Inconsistent use of : in {v}")));
            }
            z.remove(5);
        }
    }
    let z: String = z.into_iter().collect();
    let h = int(&z[1..3]);
    let m = int(&z[3..5]);
    let sec = if z.len() >= 7 { int(&z[5..7]) } else { 0 };
    let mut off = (h * 3600 + m * 60 + sec) as i32;
    if z.starts_with('-') {
        off = -off;
    }
    Ok(off)
}

impl Fields {
    /// Reads the groups of a match, in the order of the pattern (as
    /// Python iterates them).
    fn of(caps: &::regex::Captures) -> Result<Fields> {
        let mut f = Fields {
            year: None,
            month: 1,
            day: 1,
            hour: 0,
            minute: 0,
            second: 0,
            fraction: 0,
            gmtoff: None,
            iso_year: None,
            iso_week: None,
            week_of_year: -1,
            week_starts_mon: false,
            weekday: None,
            julian: None,
        };
        let pos = |n: &str| caps.name(n).map_or(usize::MAX, |m| m.start());
        let mut order: Vec<&str> = [
            "y", "Y", "G", "m", "B", "b", "d", "H", "I", "M", "S", "f", "A", "a", "w", "u", "j",
            "U", "W", "V", "z",
        ]
        .into_iter()
        .filter(|n| caps.name(n).is_some())
        .collect();
        order.sort_by_key(|n| pos(n));
        for k in order {
            let v = caps.name(k).map(|m| m.as_str()).unwrap_or_default();
            let ampm = caps.name("p").map(|m| m.as_str()).unwrap_or_default();
            f.set(k, v, ampm)?;
        }
        Ok(f)
    }

    /// Takes the value `v` of the directive `k` (`ampm`: the `%p` match).
    fn set(&mut self, k: &str, v: &str, ampm: &str) -> Result<()> {
        let int = |t: &str| -> i64 { t.trim().parse::<i64>().unwrap_or(0) };
        match k {
            "y" => {
                let y = int(v);
                self.year = Some(if y <= 68 { y + 2000 } else { y + 1900 });
            }
            "Y" => self.year = Some(int(v)),
            "G" => self.iso_year = Some(int(v)),
            "m" => self.month = int(v),
            "B" => self.month = name_index(&MONTHS, v, None).unwrap_or(0) as i64 + 1,
            "b" => self.month = name_index(&MONTHS, v, Some(3)).unwrap_or(0) as i64 + 1,
            "d" => self.day = int(v),
            "H" => self.hour = int(v),
            "I" => {
                self.hour = int(v);
                let ampm = ampm.to_lowercase();
                if ampm.is_empty() || ampm == "am" {
                    if self.hour == 12 {
                        self.hour = 0
                    }
                } else if self.hour != 12 {
                    self.hour += 12
                }
            }
            "M" => self.minute = int(v),
            "S" => self.second = int(v),
            "f" => self.fraction = int(&format!("{v:0<6}")),
            "A" => self.weekday = name_index(&WEEKDAYS, v, None).map(|x| x as i64),
            "a" => self.weekday = name_index(&WEEKDAYS, v, Some(3)).map(|x| x as i64),
            "w" => {
                let w = int(v);
                self.weekday = Some(if w == 0 { 6 } else { w - 1 })
            }
            "u" => self.weekday = Some(int(v) - 1),
            "j" => self.julian = Some(int(v)),
            "U" | "W" => {
                self.week_of_year = int(v);
                self.week_starts_mon = k == "W";
            }
            "V" => self.iso_week = Some(int(v)),
            "z" => self.gmtoff = Some(parse_gmtoff(v)?),
            _ => {}
        }
        Ok(())
    }

    /// Refuses the ISO directives without their companions.
    fn check_iso(&self) -> Result<()> {
        if self.year.is_none() && self.iso_year.is_some() {
            if self.iso_week.is_none() || self.weekday.is_none() {
                return Err(Error::value(
                    "ISO year directive '%G' must be used with the ISO week directive '%V' \
                     and a weekday directive ('%A', '%a', '%w', or '%u').",
                ));
            }
            if self.julian.is_some() {
                return Err(Error::value(
                    "Day of the year directive '%j' is not compatible with ISO year \
                     directive '%G'. Use '%Y' instead.",
                ));
            }
        } else if self.week_of_year == -1 && self.iso_week.is_some() {
            if self.weekday.is_none() {
                return Err(Error::value(
                    "ISO week directive '%V' must be used with the ISO year directive '%G' \
                     and a weekday directive ('%A', '%a', '%w', or '%u').",
                ));
            }
            return Err(Error::value(
                "ISO week directive '%V' is incompatible with the year directive '%Y'. \
                 Use the ISO year '%G' instead.",
            ));
        }
        Ok(())
    }

    /// The wall-clock microseconds and the offset: the date from the
    /// year, week and weekday or day of the year when given.
    fn resolve(self) -> Result<(i64, Option<i32>)> {
        let Fields {
            year,
            mut month,
            mut day,
            mut julian,
            ..
        } = self;
        let mut leap_year_fix = false;
        let mut y = match year {
            Some(y) => y,
            None if month == 2 && day == 29 => {
                leap_year_fix = true;
                1904
            }
            None => 1900,
        };
        if julian.is_none() {
            if let Some(wdy) = self.weekday {
                if self.week_of_year != -1 {
                    let mut first = from_ordinal(ordinal(y, 1, 1)?)?
                        .weekday()
                        .num_days_from_monday() as i64;
                    let mut dow = wdy;
                    if !self.week_starts_mon {
                        first = (first + 1) % 7;
                        dow = (dow + 1) % 7;
                    }
                    let week0 = (7 - first) % 7;
                    julian = Some(if self.week_of_year == 0 {
                        1 + dow - first
                    } else {
                        1 + week0 + 7 * (self.week_of_year - 1) + dow
                    });
                } else if let (Some(iy), Some(iw)) = (self.iso_year, self.iso_week) {
                    let d = NaiveDate::from_isoywd_opt(
                        iy as i32,
                        iw as u32,
                        chrono::Weekday::try_from(wdy as u8).unwrap_or(chrono::Weekday::Mon),
                    )
                    .ok_or_else(|| Error::value(format!("Invalid week: {iw}")))?;
                    y = d.year() as i64;
                    month = d.month() as i64;
                    day = d.day() as i64;
                }
                if let Some(j) = julian {
                    if j <= 0 {
                        y -= 1;
                        julian = Some(j + if days_in_month(y, 2) == 29 { 366 } else { 365 });
                    }
                }
            }
        }
        match julian {
            None => {
                ordinal(y, month, day)?;
            }
            Some(j) => {
                let d = from_ordinal(j - 1 + ordinal(y, 1, 1)?)?;
                y = d.year() as i64;
                month = d.month() as i64;
                day = d.day() as i64;
            }
        }
        if leap_year_fix {
            y = 1900;
        }
        let w = build_wall(
            y,
            month,
            day,
            self.hour,
            self.minute,
            self.second,
            self.fraction,
        )?;
        Ok((w, self.gmtoff))
    }
}
