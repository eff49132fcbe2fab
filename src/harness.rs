//! The JSON Lines loop shared by the `harness dsl` and `harness schema`
//! commands (see `../shared/conformance/PROTOCOL.md`): one request per line,
//! exactly one response per line, flushed, a panic answered as an error.

use std::io::{BufRead, Write};
use std::panic::AssertUnwindSafe;

use serde_json::{json, Value as J};

use crate::records::{Records, Stop};

/// The non-blank lines of a JSON Lines stream (see [`requests`]).
pub struct Requests<R> {
    lines: Records<R>,
    line: usize,
    stopped: Option<String>,
}

/// The non-blank lines of a JSON Lines stream, each as text or as why it
/// cannot be a request (not UTF-8, not JSON from its first bytes: a NUL,
/// say). A bad line never ends the stream; a line longer than `max`
/// bytes (`None`: no cap), or input that cannot be read, is answered as
/// a bad line and ends it ([`Requests::stopped`] says why).
pub fn requests<R: BufRead>(input: R, max: Option<usize>) -> Requests<R> {
    Requests {
        lines: Records::new(input, Some(b'\n'), max),
        line: 0,
        stopped: None,
    }
}

impl<R> Requests<R> {
    /// Why the stream ended before the input did, if it did.
    pub fn stopped(&self) -> Option<&str> {
        self.stopped.as_deref()
    }
}

impl<R: BufRead> Iterator for Requests<R> {
    type Item = Result<String, String>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let r = self.lines.next()?;
            self.line += 1;
            let rec = match r {
                Ok(rec) => rec,
                Err(e) => {
                    let why = match e {
                        Stop::TooLong(_) => format!("line {} is {e}", self.line),
                        Stop::Io(_) => format!("line {}: {e}", self.line),
                    };
                    self.stopped = Some(why.clone());
                    return Some(Err(why));
                }
            };
            let line = match String::from_utf8(rec.bytes) {
                Ok(line) => line,
                Err(e) => return Some(Err(format!("the line is not UTF-8: {e}"))),
            };
            if line.trim().is_empty() {
                continue;
            }
            if rec.cut {
                // Only what precedes the first byte JSON cannot hold was
                // kept; its parse fails there.
                let e = serde_json::from_str::<J>(&line).err().map_or_else(
                    || crate::records::cut_error(&line).message().to_string(),
                    |e| e.to_string(),
                );
                return Some(Err(e));
            }
            return Some(Ok(line));
        }
    }
}

/// The exit status of a harness whose requests were `requests`: 0 when
/// the input was read to its end, else 2 (the reason printed to stderr).
pub fn status<R>(requests: &Requests<R>) -> i32 {
    match requests.stopped() {
        None => crate::args::exit::OK,
        Some(why) => {
            eprintln!("error: standard input: {why}; no more requests are read");
            crate::args::exit::USAGE
        }
    }
}

/// Serves requests from stdin with `run`, lines of at most `max` bytes
/// (see [`requests`]); `error_key` names the response field for failures
/// (`load_error` for dsl, `error` for schema).
pub fn serve(error_key: &str, max: Option<usize>, run: impl Fn(&J) -> J) -> i32 {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    let mut requests = requests(stdin.lock(), max);
    for line in requests.by_ref() {
        let failure = |id: J, name: &str, message: String| {
            let mut r = json!({"id": id});
            r[error_key] = json!({"names": [name], "message": message});
            r
        };
        let parsed = line.and_then(|l| serde_json::from_str::<J>(&l).map_err(|e| e.to_string()));
        let resp = match parsed {
            Err(e) => failure(J::Null, "ValueError", format!("bad request: {e}")),
            Ok(req) => {
                let id = req.get("id").cloned().unwrap_or(J::Null);
                std::panic::catch_unwind(AssertUnwindSafe(|| run(&req)))
                    .unwrap_or_else(|_| failure(id, "InternalError", "panic".into()))
            }
        };
        if writeln!(out, "{resp}").and_then(|_| out.flush()).is_err() {
            break;
        }
    }
    status(&requests)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_line_is_an_error_and_the_stream_goes_on() {
        let input: &[u8] = b"{\"id\": 1}\n\xff\xfe\n\n  \n{\"id\": 2}";
        let got: Vec<Result<String, String>> = requests(input, Some(1 << 20)).collect();
        assert_eq!(got.len(), 3, "{got:?}");
        assert_eq!(got[0].as_deref(), Ok("{\"id\": 1}"));
        assert!(got[1].as_ref().unwrap_err().contains("not UTF-8"));
        assert_eq!(got[2].as_deref(), Ok("{\"id\": 2}"));
        // A NUL: the line is a bad request, read no further than it.
        let input: &[u8] = b"{\"id\": \0\0\0\n{\"id\": 3}\n";
        let got: Vec<Result<String, String>> = requests(input, Some(1 << 20)).collect();
        assert_eq!(
            got,
            [
                Err("expected value at line 1 column 8".to_string()),
                Ok("{\"id\": 3}".to_string())
            ]
        );
        // A line past the cap ends the stream, with why.
        let input: &[u8] = b"{\"id\": 4}\n[1, 2, 3, 4, 5, 6]\n{\"id\": 5}\n";
        let mut reqs = requests(input, Some(12));
        let got: Vec<Result<String, String>> = reqs.by_ref().collect();
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(got[0].as_deref(), Ok("{\"id\": 4}"));
        assert_eq!(reqs.stopped(), got[1].as_ref().err().map(String::as_str));
        assert!(reqs
            .stopped()
            .is_some_and(|s| s.starts_with("line 2 is longer than 12 bytes")));
    }
}
