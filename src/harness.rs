//! The JSON Lines loop shared by the `harness dsl` and `harness schema`
//! commands (see `../shared/conformance/PROTOCOL.md`): one request per line,
//! exactly one response per line, flushed, a panic answered as an error.

use std::io::{BufRead, Write};

/// The longest request line read (longer ones are answered with an error).
pub const MAX_LINE: usize = 256 << 20;

/// The non-blank lines of a JSON Lines stream, each as text or as why it
/// cannot be a request (not UTF-8, longer than [`MAX_LINE`]); a bad line
/// never ends the stream.
pub fn requests(mut input: impl BufRead) -> impl Iterator<Item = Result<String, String>> {
    std::iter::from_fn(move || loop {
        let mut buf = Vec::new();
        let n = match std::io::Read::take(&mut input, MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut buf)
        {
            Ok(0) | Err(_) => return None,
            Ok(n) => n,
        };
        if n > MAX_LINE && buf.last() != Some(&b'\n') {
            // Skip the rest of the line.
            let mut rest = Vec::new();
            while input.read_until(b'\n', &mut rest).is_ok_and(|k| k > 0) {
                if rest.last() == Some(&b'\n') {
                    break;
                }
                rest.clear();
            }
            return Some(Err(format!(
                "a request line is longer than {MAX_LINE} bytes"
            )));
        }
        match String::from_utf8(buf) {
            Ok(line) if line.trim().is_empty() => continue,
            Ok(line) => return Some(Ok(line)),
            Err(e) => return Some(Err(format!("the line is not UTF-8: {e}"))),
        }
    })
}
use std::panic::AssertUnwindSafe;

use serde_json::{json, Value as J};

/// Serves requests from stdin with `run`; `error_key` names the response
/// field for failures (`load_error` for dsl, `error` for schema).
pub fn serve(error_key: &str, run: impl Fn(&J) -> J) -> i32 {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for line in requests(stdin.lock()) {
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
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_line_is_an_error_and_the_stream_goes_on() {
        let input: &[u8] = b"{\"id\": 1}\n\xff\xfe\n\n  \n{\"id\": 2}";
        let got: Vec<Result<String, String>> = requests(input).collect();
        assert_eq!(got.len(), 3, "{got:?}");
        assert_eq!(got[0].as_deref(), Ok("{\"id\": 1}\n"));
        assert!(got[1].as_ref().unwrap_err().contains("not UTF-8"));
        assert_eq!(got[2].as_deref(), Ok("{\"id\": 2}"));
    }
}
