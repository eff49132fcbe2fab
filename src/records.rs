//! Untrusted input read in bounded memory (issue 32): records (the lines
//! of JSON Lines, the elements of an RFC 7464 sequence, or a whole input)
//! no longer than a cap, each given up at the first byte that shows it
//! cannot be JSON text.
//!
//! A record is read a buffer at a time and checked as it comes: once a
//! byte no JSON text may hold turns up (a control character other than
//! whitespace, anywhere; or, where the first value should start, a byte
//! that cannot start one), the rest of the record is skipped without
//! being kept (a whole input is not read further at all). What was kept
//! ends at that byte, so parsing it fails there, with the error parsing
//! the whole record would have given. A record longer than the cap ends
//! the stream: its end cannot be known without reading an unbounded
//! amount of input.

use std::io::{BufRead, ErrorKind};

/// The default of `--max-record`, in bytes (256 MiB: the engine's
/// default quota for one string).
pub const DEFAULT_MAX_RECORD: usize = 256 << 20;

/// The cap `--max-record BYTES` asks for: none for 0.
pub fn cap(bytes: usize) -> Option<usize> {
    (bytes > 0).then_some(bytes)
}

/// A record as read.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Record {
    /// Its bytes, without the separator; when `cut`, only those up to and
    /// including the first that JSON text cannot hold there.
    pub bytes: Vec<u8>,
    /// The record cannot be JSON text: it was not read to its end.
    pub cut: bool,
}

/// Why a stream of records ended early.
#[derive(Debug)]
pub enum Stop {
    /// A record is longer than the cap (in bytes).
    TooLong(usize),
    /// The input could not be read.
    Io(std::io::Error),
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stop::TooLong(max) => write!(f, "longer than {max} bytes (--max-record)"),
            Stop::Io(e) => write!(f, "{e}"),
        }
    }
}

/// The records of `input`, separated by `sep` (each one whole input when
/// `None`), none longer than `max` bytes when a cap is given. After a
/// [`Stop`] the iterator ends.
pub struct Records<R> {
    input: R,
    sep: Option<u8>,
    max: usize,
    done: bool,
}

impl<R: BufRead> Records<R> {
    /// Records of `input` separated by `sep`, at most `max` bytes each.
    pub fn new(input: R, sep: Option<u8>, max: Option<usize>) -> Records<R> {
        Records {
            input,
            sep,
            max: max.unwrap_or(usize::MAX),
            done: false,
        }
    }

    fn read_one(&mut self) -> Option<Result<Record, Stop>> {
        let mut rec = Record::default();
        let (mut len, mut read_any, mut started) = (0usize, false, false);
        loop {
            let chunk = match self.input.fill_buf() {
                Ok(c) => c,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Some(Err(Stop::Io(e))),
            };
            if chunk.is_empty() {
                // The end of the input: a last record without a separator,
                // or (for a whole input) the input, empty or not.
                self.done = true;
                return (read_any || self.sep.is_none()).then(|| Ok(shrunk(rec)));
            }
            read_any = true;
            let end = self.sep.and_then(|s| find(s, chunk));
            let part = &chunk[..end.unwrap_or(chunk.len())];
            len = len.saturating_add(part.len());
            if len > self.max {
                return Some(Err(Stop::TooLong(self.max)));
            }
            if !rec.cut {
                match first_invalid(part, &mut started) {
                    Some(i) => {
                        keep(&mut rec.bytes, &part[..=i], self.max);
                        rec.cut = true;
                        if self.sep.is_none() {
                            // A whole input: nothing after it to read.
                            self.input.consume(i + 1);
                            return Some(Ok(rec));
                        }
                    }
                    None => keep(&mut rec.bytes, part, self.max),
                }
            }
            let used = part.len() + usize::from(end.is_some());
            self.input.consume(used);
            if end.is_some() {
                return Some(Ok(shrunk(rec)));
            }
        }
    }
}

/// Appends `part` to `bytes`, a record capped at `max` bytes. Past
/// [`GROW_TO_CAP`], room for the whole cap is reserved at once: its pages
/// become resident only as they are written, where doubling would copy
/// the record again and again and leave the allocator holding each old
/// buffer (a 256 MiB line took 660 MB).
fn keep(bytes: &mut Vec<u8>, part: &[u8], max: usize) {
    let need = bytes.len() + part.len();
    if need > bytes.capacity() && need > GROW_TO_CAP && max < usize::MAX {
        bytes.reserve_exact(max - bytes.len());
    }
    bytes.extend_from_slice(part);
}

/// The record length past which a capped record's buffer is given the
/// whole cap (see [`Records::keep`]).
const GROW_TO_CAP: usize = 1 << 20;

/// `rec` without the room reserved past its end, when that is much.
fn shrunk(mut rec: Record) -> Record {
    if rec.bytes.capacity() > GROW_TO_CAP && rec.bytes.capacity() / 2 > rec.bytes.len() {
        rec.bytes.shrink_to_fit();
    }
    rec
}

impl<R: BufRead> Iterator for Records<R> {
    type Item = Result<Record, Stop>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let r = self.read_one();
        if matches!(r, Some(Err(_))) || self.sep.is_none() {
            self.done = true;
        }
        r
    }
}

/// The offset of the first `b` in `hay` (std's `memchr`, through
/// `skip_until`: fast in debug builds too).
fn find(b: u8, hay: &[u8]) -> Option<usize> {
    let mut rest = hay;
    let n = rest.skip_until(b).unwrap_or(0);
    (n > 0 && hay[n - 1] == b).then(|| n - 1)
}

/// The offset of the first byte of `part` that JSON text cannot hold
/// there; `started` says whether the record's first value has begun (a
/// byte other than whitespace was seen), and is updated.
fn first_invalid(part: &[u8], started: &mut bool) -> Option<usize> {
    let mut from = 0;
    if !*started {
        // Bytes that trimming takes for whitespace (form feed and vertical
        // tab too, so that a line of them stays blank) are passed over;
        // a byte past ASCII is left to the parser.
        match part
            .iter()
            .position(|&b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c))
        {
            None => return None,
            Some(i) => {
                *started = true;
                if part[i] < 0x80 && !may_start_json(part[i]) {
                    return Some(i);
                }
                from = i;
            }
        }
    }
    // A block at a time without early exits, which the compiler turns
    // into vector instructions; the byte only in the block that has one.
    const BLOCK: usize = 64;
    let rest = &part[from..];
    let block = rest
        .chunks(BLOCK)
        .position(|c| c.iter().fold(false, |bad, &b| bad | never_in_json(b)))?;
    let start = block * BLOCK;
    rest[start..]
        .iter()
        .position(|&b| never_in_json(b))
        .map(|i| from + start + i)
}

/// A byte that can start a JSON value.
fn may_start_json(b: u8) -> bool {
    matches!(
        b,
        b'{' | b'[' | b'"' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n'
    )
}

/// A control character JSON text cannot hold anywhere (strings must
/// escape them; only space, tab, LF and CR are whitespace). Vertical tab
/// and form feed are left to the parser, which refuses them too, so that
/// a line of nothing else stays blank.
fn never_in_json(b: u8) -> bool {
    b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// The error of a cut record (`text` is what was kept of it) when its
/// parser, unexpectedly, did not refuse it: serde_json's wording, with
/// the position of the byte it was cut at.
pub fn cut_error(text: &str) -> runtime::Error {
    let line = text.matches('\n').count() + 1;
    let col = text.len() - text.rfind('\n').map_or(0, |i| i + 1);
    runtime::Error::value(format!(
        "bad JSON: a byte JSON text cannot hold at line {line} column {col}"
    ))
}

/// Whether `file` (a path, or `-` for standard input) is a regular file:
/// its size bounds what reading it takes, so no cap is needed.
pub fn is_regular(file: &std::path::Path) -> bool {
    if file.as_os_str() != "-" {
        return std::fs::metadata(file).is_ok_and(|m| m.is_file());
    }
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        std::io::stdin()
            .as_fd()
            .try_clone_to_owned()
            .map(std::fs::File::from)
            .and_then(|f| f.metadata())
            .is_ok_and(|m| m.is_file())
    }
    #[cfg(not(unix))]
    false
}

/// Reads `file` (`-`: standard input) whole as one record, capped at `max`
/// bytes unless it is a regular file.
pub fn read_whole(file: &std::path::Path, max: Option<usize>) -> Result<Record, Stop> {
    let max = if is_regular(file) { None } else { max };
    let whole = |r: Box<dyn std::io::Read>| {
        let input = std::io::BufReader::with_capacity(1 << 16, r);
        Records::new(input, None, max)
            .next()
            .unwrap_or_else(|| Ok(Record::default()))
    };
    if file.as_os_str() == "-" {
        whole(Box::new(std::io::stdin().lock()))
    } else {
        whole(Box::new(std::fs::File::open(file).map_err(Stop::Io)?))
    }
}

/// The text of the model in `file` (`-`: standard input), read whole: at
/// most `max` bytes unless it is a regular file, and only up to the first
/// byte that shows it is not JSON (a NUL, say), whose parse error is then
/// the result.
pub fn read_model(file: &std::path::Path, max: Option<usize>) -> Result<String, String> {
    let cannot = if file.as_os_str() == "-" {
        "cannot read standard input"
    } else {
        "cannot read"
    };
    let Record { bytes, cut } = read_whole(file, max).map_err(|e| match e {
        Stop::TooLong(_) => format!("{cannot}: the model is {e}"),
        Stop::Io(_) => format!("{cannot}: {e}"),
    })?;
    let text = String::from_utf8(bytes)
        .map_err(|_| format!("{cannot}: stream did not contain valid UTF-8"))?;
    if cut {
        return Err(cut_message(&text));
    }
    Ok(text)
}

/// Why `text`, a model cut at the first byte no JSON text may hold there,
/// is not JSON: the error parsing it gives.
pub fn cut_message(text: &str) -> String {
    let e = runtime::json::from_tagged_str(text)
        .err()
        .unwrap_or_else(|| cut_error(text));
    e.message().to_string()
}

/// The error of a large model file whose first 64 KiB show it is no JSON
/// text (NUL bytes, say), found before anything reads it whole.
pub fn not_json_from_the_start(file: &std::path::Path) -> Option<String> {
    use std::io::Read;
    let head = std::fs::File::open(file).ok()?.take(1 << 16);
    let rec = Records::new(std::io::BufReader::new(head), None, None)
        .next()?
        .ok()?;
    rec.cut
        .then(|| cut_message(&String::from_utf8_lossy(&rec.bytes)))
}

/// The text of `file` (`-`: standard input) for a parser that wants it
/// whole (YAML settings, answers): at most `max` bytes unless it is a
/// regular file, and read no further than the first control character no
/// YAML or JSON text may hold (C0 but tab, line feed and carriage return),
/// which is the error, with its line and column.
pub fn read_text(file: &std::path::Path, max: Option<usize>) -> Result<String, String> {
    let max = if is_regular(file) {
        usize::MAX
    } else {
        max.unwrap_or(usize::MAX)
    };
    let input: Box<dyn std::io::Read> = if file.as_os_str() == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(std::fs::File::open(file).map_err(|e| e.to_string())?)
    };
    let mut input = std::io::BufReader::with_capacity(1 << 16, input);
    let mut text = Vec::new();
    loop {
        let chunk = match input.fill_buf() {
            Ok([]) => break,
            Ok(c) => c,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.to_string()),
        };
        let bad = chunk
            .iter()
            .position(|&b| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r'));
        let n = bad.unwrap_or(chunk.len());
        if text.len() + n > max {
            return Err(format!("longer than {max} bytes (--max-record)"));
        }
        text.extend_from_slice(&chunk[..n]);
        if let Some(i) = bad {
            let b = chunk[i];
            let line = text.iter().filter(|&&c| c == b'\n').count() + 1;
            let col = text.len() - text.iter().rposition(|&c| c == b'\n').map_or(0, |p| p + 1) + 1;
            return Err(format!(
                "a control character (\\x{b:02x}) no YAML or JSON text may hold at line {line} column {col}"
            ));
        }
        let n = chunk.len();
        input.consume(n);
    }
    String::from_utf8(text).map_err(|e| format!("not UTF-8: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], max: Option<usize>) -> Vec<Result<(String, bool), String>> {
        Records::new(input, Some(b'\n'), max)
            .map(|r| {
                r.map(|r| (String::from_utf8_lossy(&r.bytes).into_owned(), r.cut))
                    .map_err(|e| e.to_string())
            })
            .collect()
    }

    #[test]
    fn lines_are_split_and_cut_at_the_first_byte_json_cannot_hold() {
        let got = lines(
            b"{\"a\": 1}\n\n x\0yz\n[1, \"\x1b]0;t\x07\"]\n \x0c\n2",
            None,
        );
        let want: Vec<Result<(String, bool), String>> = vec![
            Ok(("{\"a\": 1}".into(), false)),
            Ok(("".into(), false)),
            Ok((" x".into(), true)),
            Ok(("[1, \"\x1b".into(), true)),
            Ok((" \x0c".into(), false)),
            Ok(("2".into(), false)),
        ];
        assert_eq!(got, want);
        assert_eq!(lines(b"1\n", None), vec![Ok(("1".into(), false))]);
        assert_eq!(lines(b"", None), vec![]);
    }

    #[test]
    fn a_record_past_the_cap_ends_the_stream() {
        let got = lines(b"1234\n12345\n1\n", Some(4));
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(got[0], Ok(("1234".into(), false)));
        assert_eq!(
            got[1],
            Err("longer than 4 bytes (--max-record)".to_string())
        );
        // A cut record still counts towards the cap.
        assert!(lines(b"\0\0\0\0\0\n", Some(4))[0].is_err());
    }

    #[test]
    fn a_whole_input_is_one_record_even_empty() {
        let one = |input: &[u8]| Records::new(input, None, Some(8)).collect::<Vec<_>>().len();
        assert_eq!(one(b""), 1);
        assert_eq!(one(b"[1]\n[2]\n"), 1);
        let mut r = Records::new(&b"{\"a\"\0\0"[..], None, None);
        let rec = r.next().unwrap().unwrap();
        assert_eq!((rec.bytes.as_slice(), rec.cut), (&b"{\"a\"\0"[..], true));
        assert!(r.next().is_none());
        // Cut at its first byte, an endless input is not read on.
        let zeros = std::io::BufReader::new(std::io::repeat(0));
        let rec = Records::new(zeros, None, None).next().unwrap().unwrap();
        assert_eq!((rec.bytes.as_slice(), rec.cut), (&b"\0"[..], true));
    }

    #[test]
    fn a_cut_record_fails_to_parse_where_the_whole_one_does() {
        for whole in [
            "\0",
            "  hello",
            "{\"a\": \"x\0y\"}",
            "[1, 2]\x01",
            "{\"a\"\x02: 1}",
        ] {
            let rec = Records::new(whole.as_bytes(), None, None)
                .next()
                .unwrap()
                .unwrap();
            assert!(rec.cut, "{whole:?}");
            let kept = String::from_utf8(rec.bytes).unwrap();
            let want = runtime::json::from_tagged_str(whole).unwrap_err();
            let got = runtime::json::from_tagged_str(&kept).unwrap_err();
            assert_eq!(got.message(), want.message(), "{whole:?}");
        }
    }
}
