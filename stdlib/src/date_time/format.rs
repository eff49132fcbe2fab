//! strftime (CPython's wrapper for %f/%z/%Z, then glibc in the C locale).

use super::common::*;

use chrono::{Datelike, NaiveDateTime, Timelike};
use runtime::value::DateTime;

pub(super) const WEEKDAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];
pub(super) const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

fn utcoffset_str(off: i32) -> String {
    let sign = if off < 0 { '-' } else { '+' };
    let a = off.unsigned_abs();
    let mut s = format!("{}{:02}{:02}", sign, a / 3600, (a % 3600) / 60);
    if !a.is_multiple_of(60) {
        s.push_str(&format!("{:02}", a % 60));
    }
    s
}

/// Python `datetime.strftime(fmt)` for an aware datetime.
pub fn strftime(d: &DateTime, fmt: &str) -> String {
    // CPython's wrap_strftime: %z, %Z and %f are expanded first.
    let w = wall(d);
    let mut pre = String::with_capacity(fmt.len() + 8);
    let mut it = fmt.chars().peekable();
    while let Some(c) = it.next() {
        if c != '%' {
            pre.push(c);
            continue;
        }
        match it.next() {
            None => pre.push('%'),
            Some('z') => pre.push_str(&utcoffset_str(d.offset)),
            Some('Z') => {
                if d.offset == 0 {
                    pre.push_str("UTC")
                }
            }
            Some('f') => pre.push_str(&format!("{:06}", w.rem_euclid(US_PER_SEC))),
            Some(x) => {
                pre.push('%');
                pre.push(x);
            }
        }
    }
    let room = strftime_room(pre.chars().count());
    glibc_strftime(&naive(w), d.offset, &pre, room).unwrap_or_default()
}

/// CPython's `time.strftime` calls C `wcsftime` with buffers of 1024
/// characters, doubling, and gives up with an empty string once the
/// buffer is at least 256 times the format's length: an output needs
/// fewer characters than the last buffer (one is the NUL). This bounds
/// what a width like `%99999999d` makes by the length of the format.
fn strftime_room(fmt_len: usize) -> usize {
    let mut room = 1024usize;
    while room < fmt_len.saturating_mul(256) {
        room = room.saturating_mul(2);
    }
    room
}

/// `s` padded on the left with `pad` to `width` characters.
fn pad_left(s: &str, width: usize, pad: char) -> String {
    let n = width.saturating_sub(s.chars().count());
    let mut r: String = std::iter::repeat_n(pad, n).collect();
    r.push_str(s);
    r
}

/// The output of a format without widths (for the composite directives).
pub(super) fn fixed(n: &NaiveDateTime, off: i32, fmt: &str) -> String {
    glibc_strftime(n, off, fmt, usize::MAX).unwrap_or_default()
}

/// glibc `strftime` in the C locale; `None` when the output would take
/// `room` characters or more.
fn glibc_strftime(n: &NaiveDateTime, off: i32, fmt: &str, room: usize) -> Option<String> {
    let chars: Vec<char> = fmt.chars().collect();
    let mut out = String::new();
    // Characters in `out`.
    let mut len = 0;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c != '%' {
            out.push(c);
            len += 1;
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        let mut pad: Option<char> = None;
        let mut upcase = false;
        let mut swapcase = false;
        while i < chars.len() && matches!(chars[i], '-' | '_' | '0' | '^' | '#') {
            match chars[i] {
                '^' => upcase = true,
                '#' => swapcase = true,
                p => pad = Some(p),
            }
            i += 1;
        }
        let mut width: Option<usize> = None;
        while i < chars.len() && chars[i].is_ascii_digit() {
            let d = chars[i].to_digit(10).unwrap_or(0) as usize;
            width = Some(width.unwrap_or(0).saturating_mul(10).saturating_add(d));
            i += 1;
        }
        if width.is_some_and(|w| w >= room) {
            return None;
        }
        if i < chars.len() && matches!(chars[i], 'E' | 'O') {
            i += 1;
        }
        let Some(&conv) = chars.get(i) else {
            out.extend(&chars[start..]);
            break;
        };
        i += 1;
        let num = |v: i64, w: usize, defpad: char| -> String {
            let p = pad.unwrap_or(defpad);
            let w = width.unwrap_or(w);
            let digits = v.unsigned_abs().to_string();
            let neg = if v < 0 { "-" } else { "" };
            match p {
                '-' => format!("{neg}{digits}"),
                '_' | ' ' => pad_left(&format!("{neg}{digits}"), w, ' '),
                _ => format!(
                    "{neg}{}",
                    pad_left(&digits, w.saturating_sub(neg.len()), '0')
                ),
            }
        };
        let text = |s: String| -> String {
            let s = if upcase {
                s.to_uppercase()
            } else if swapcase {
                if s.chars().any(|c| c.is_lowercase()) {
                    s.to_uppercase()
                } else {
                    s.to_lowercase()
                }
            } else {
                s
            };
            match width {
                Some(w) => pad_left(&s, w, if pad == Some('0') { '0' } else { ' ' }),
                None => s,
            }
        };
        let wd = n.weekday().num_days_from_monday() as usize;
        let sunday_wd = n.weekday().num_days_from_sunday() as i64;
        let yday = n.ordinal0() as i64;
        let h12 = match n.hour() % 12 {
            0 => 12,
            h => h as i64,
        };
        let ampm = if n.hour() < 12 { "AM" } else { "PM" };
        let piece = match conv {
            'a' => text(WEEKDAYS[wd][..3].to_string()),
            'A' => text(WEEKDAYS[wd].to_string()),
            'b' | 'h' => text(MONTHS[n.month0() as usize][..3].to_string()),
            'B' => text(MONTHS[n.month0() as usize].to_string()),
            'c' => text(fixed(n, off, "%a %b %e %H:%M:%S %Y")),
            'C' => num(n.year() as i64 / 100, 1, '0'),
            'd' => num(n.day() as i64, 2, '0'),
            'D' => text(fixed(n, off, "%m/%d/%y")),
            'e' => num(n.day() as i64, 2, '_'),
            'F' => text(fixed(n, off, "%Y-%m-%d")),
            'g' => num((n.iso_week().year() as i64).rem_euclid(100), 2, '0'),
            'G' => num(n.iso_week().year() as i64, 1, '0'),
            'H' => num(n.hour() as i64, 2, '0'),
            'I' => num(h12, 2, '0'),
            'j' => num(yday + 1, 3, '0'),
            'k' => num(n.hour() as i64, 2, '_'),
            'l' => num(h12, 2, '_'),
            'm' => num(n.month() as i64, 2, '0'),
            'M' => num(n.minute() as i64, 2, '0'),
            'n' => "\n".to_string(),
            'p' => {
                if swapcase {
                    text(ampm.to_lowercase()).to_lowercase()
                } else {
                    text(ampm.to_string())
                }
            }
            'P' => text(ampm.to_lowercase()),
            'r' => text(fixed(n, off, "%I:%M:%S %p")),
            'R' => text(fixed(n, off, "%H:%M")),
            's' => num(naive_to_wall(n).div_euclid(US_PER_SEC), 1, '0'),
            'S' => num(n.second() as i64, 2, '0'),
            't' => "\t".to_string(),
            'T' => text(fixed(n, off, "%H:%M:%S")),
            'u' => num(wd as i64 + 1, 1, '0'),
            'U' => num((yday + 7 - sunday_wd) / 7, 2, '0'),
            'V' => num(n.iso_week().week() as i64, 2, '0'),
            'w' => num(sunday_wd, 1, '0'),
            'W' => num((yday + 7 - wd as i64) / 7, 2, '0'),
            'x' => text(fixed(n, off, "%m/%d/%y")),
            'X' => text(fixed(n, off, "%H:%M:%S")),
            'y' => num((n.year() as i64).rem_euclid(100), 2, '0'),
            'Y' => num(n.year() as i64, 1, '0'),
            'z' => text(utcoffset_str(off)),
            'Z' => text(String::new()),
            '%' => "%".to_string(),
            _ => chars[start..i].iter().collect(),
        };
        out.push_str(&piece);
        len += piece.chars().count();
        if len >= room {
            return None;
        }
    }
    (len < room).then_some(out)
}
