//! Helpers shared by the integration tests that drive the `muranopl`
//! binary.
#![allow(dead_code)] // not every helper is used by every build of the suite

use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// The repository root (the tests run the binary from there).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `muranopl ARGS...` in the repository root.
pub fn muranopl(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_muranopl"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("run muranopl")
}

/// Standard output as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

/// Standard error as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

/// A JSON file, parsed.
pub fn read_json(path: &std::path::Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Runs `muranopl harness KIND` over request lines (each one line of
/// JSON); the parsed answers, in order, and how long the harness took.
pub fn harness(kind: &str, requests: &[String]) -> (Vec<serde_json::Value>, std::time::Duration) {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_muranopl"))
        .args(["harness", kind])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("run the harness");
    let t = std::time::Instant::now();
    let mut input = child.stdin.take().expect("stdin");
    for r in requests {
        writeln!(input, "{r}").expect("write a request");
    }
    drop(input);
    let out = child.wait_with_output().expect("the harness's answers");
    let answers = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("an answer is JSON"))
        .collect();
    (answers, t.elapsed())
}

/// A `muranopl serve` process on a free loopback port, killed on drop.
pub struct Served {
    pub child: std::process::Child,
    /// `127.0.0.1:PORT`.
    pub addr: String,
}

impl Served {
    /// Starts `muranopl serve --addr 127.0.0.1:0 ARGS...` and waits for
    /// the line naming its address. Its request log goes to `log` when
    /// given, else nowhere.
    pub fn start(args: &[&str], log: Option<&std::path::Path>) -> Served {
        use std::io::BufRead;
        use std::process::Stdio;
        let stderr = match log {
            Some(p) => Stdio::from(std::fs::File::create(p).expect("log file")),
            None => Stdio::null(),
        };
        let mut child = Command::new(env!("CARGO_BIN_EXE_muranopl"))
            .arg("serve")
            .args(args)
            .args(["--addr", "127.0.0.1:0"])
            .current_dir(root())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("start muranopl serve");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("the address line");
        let addr = line
            .trim()
            .rsplit("http://")
            .next()
            .unwrap_or("")
            .to_string();
        assert!(addr.starts_with("127.0.0.1:"), "serve printed {line:?}");
        Served { child, addr }
    }

    /// Sends one raw HTTP/1.1 request (closing the connection) and returns
    /// the status, the lower-cased head and the body.
    pub fn raw(&self, request: &str) -> (u16, String, String) {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(&self.addr).expect("connect");
        s.set_read_timeout(Some(std::time::Duration::from_secs(60)))
            .ok();
        s.write_all(request.as_bytes()).expect("send");
        let mut text = String::new();
        let _ = s.read_to_string(&mut text);
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
        let status = head
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        (status, head.to_ascii_lowercase(), body.to_string())
    }

    /// `METHOD PATH` with a JSON body (or none), `Connection: close`.
    pub fn request(
        &self,
        method: &str,
        path: &str,
        body: Option<&str>,
    ) -> (u16, serde_json::Value) {
        let body = body.unwrap_or("");
        let (status, _, text) = self.raw(&format!(
            "{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ));
        (
            status,
            serde_json::from_str(&text).unwrap_or(serde_json::Value::Null),
        )
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `muranopl ARGS...` with `input` on standard input.
pub fn muranopl_with_input(args: &[&str], input: &str) -> Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_muranopl"))
        .args(args)
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run muranopl");
    let mut stdin = child.stdin.take().expect("stdin");
    let input = input.to_string();
    // Written from a thread: a large input must not fill the pipe while
    // the child's output fills the other.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let out = child.wait_with_output().expect("wait for muranopl");
    writer.join().expect("write stdin");
    out
}

/// What a watched run of the binary did (see [`watch`]).
pub struct Watched {
    /// The exit status; `None` when it was killed (or died of a signal).
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    /// The peak resident memory seen, in bytes (`VmHWM`, polled).
    pub peak: u64,
    pub took: Duration,
    /// Killed for passing the memory or the time bound.
    pub killed: bool,
}

/// Standard input of a watched run.
pub enum Input {
    /// A file (`/dev/zero`).
    File(&'static str),
    /// These bytes, then this many MiB of that byte, through a pipe.
    Fill(&'static [u8], u8, usize),
    /// These bytes through a pipe.
    Bytes(Vec<u8>),
}

/// The peak resident memory of process `pid` so far, in bytes (0 once it
/// has exited).
pub fn vm_hwm(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// Runs `muranopl ARGS...` on `input`, polling its peak resident memory
/// every few milliseconds; kills it once it passes `max_rss` bytes or
/// `timeout`, so that a regression fails the test instead of the machine.
pub fn watch(args: &[&str], input: Input, max_rss: u64, timeout: Duration) -> Watched {
    use std::io::{Read, Write};
    use std::process::{Command, Stdio};
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_muranopl"));
    cmd.args(args)
        .current_dir(root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    match &input {
        Input::File(path) => cmd.stdin(std::fs::File::open(path).unwrap()),
        Input::Fill(..) | Input::Bytes(_) => cmd.stdin(Stdio::piped()),
    };
    let t = Instant::now();
    let mut child = cmd.spawn().expect("run muranopl");
    let feeder = child.stdin.take().map(|mut w| {
        std::thread::spawn(move || match input {
            Input::Fill(head, byte, mib) => {
                let buf = vec![byte; 1 << 20];
                let _ = w.write_all(head);
                for _ in 0..mib {
                    if w.write_all(&buf).is_err() {
                        break; // the child stopped reading
                    }
                }
            }
            Input::Bytes(b) => {
                let _ = w.write_all(&b);
            }
            Input::File(_) => {}
        })
    });
    let drain = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut s = Vec::new();
            if let Some(mut r) = r {
                let _ = r.read_to_end(&mut s);
            }
            String::from_utf8_lossy(&s).into_owned()
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|o| Box::new(o) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|e| Box::new(e) as Box<dyn Read + Send>),
    );
    let (mut peak, mut killed) = (0, false);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        peak = peak.max(vm_hwm(child.id()));
        if peak > max_rss || t.elapsed() > timeout {
            killed = true;
            let _ = child.kill();
            break child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let took = t.elapsed();
    if let Some(f) = feeder {
        f.join().unwrap();
    }
    Watched {
        code: status.code(),
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
        peak,
        took,
        killed,
    }
}

/// [`watch`] with nothing on standard input, checking that the run ended
/// by itself (within `max_rss` bytes and `timeout`) with exit status
/// `code`.
pub fn watch_ends(args: &[&str], max_rss: u64, timeout: Duration, code: i32) -> Watched {
    let w = watch(args, Input::Bytes(Vec::new()), max_rss, timeout);
    assert!(
        !w.killed,
        "{args:?}: killed at {} MB after {:?}",
        w.peak / 1_000_000,
        w.took
    );
    assert_eq!(w.code, Some(code), "{args:?}: {}{}", w.stdout, w.stderr);
    w
}

/// Says that a test is skipped, and why, where the run's output shows it:
/// written to the process's standard error directly (the test harness
/// captures only the print macros), so that a skip is seen without
/// `--nocapture` and never passes for a test that ran.
pub fn skip(why: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "SKIP: {why}");
}
