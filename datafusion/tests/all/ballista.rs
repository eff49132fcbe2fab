//! A Ballista cluster on loopback: `muranopl batch scheduler` and two
//! `muranopl batch executor` processes over one catalogue artifact; a
//! validation query over 1M generated objects (50k in a debug build) split
//! into files gives what the same query gives on one machine.

use crate::common;

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_muranopl-batch");

/// Child processes, killed when the test ends however it ends.
struct Cluster(Vec<Child>);

impl Drop for Cluster {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn wait_for(port: u16, what: &str, cluster: &mut Cluster) {
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let start = Instant::now();
    while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
        for c in &mut cluster.0 {
            if let Ok(Some(status)) = c.try_wait() {
                panic!("a cluster process exited ({status}) before {what} listened");
            }
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{what} did not listen on {port}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn spawn(args: &[&str], log: &Path) -> Child {
    Command::new(BIN)
        .args(args)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .unwrap()
}

fn batch(args: &[&str]) -> String {
    let Output {
        status,
        stdout,
        stderr,
    } = Command::new(BIN).args(args).output().unwrap();
    let (out, err) = (
        String::from_utf8_lossy(&stdout),
        String::from_utf8_lossy(&stderr),
    );
    assert!(status.success(), "muranopl batch {args:?}: {status}\n{err}");
    out.into_owned()
}

#[test]
fn a_validation_query_on_two_executors_gives_the_local_result() {
    let n = if cfg!(debug_assertions) {
        50_000
    } else {
        1_000_000
    };
    let dir = tempfile::tempdir().unwrap();
    let models = dir.path().join("models");
    common::write_models(&models, n, 8);
    let mcat = dir.path().join("catalog.mcat");
    let mcat = mcat.to_str().unwrap();
    let example = common::example();
    batch(&["pack", "-p", example.to_str().unwrap(), "-o", mcat]);

    let sched = free_port();
    let sched_addr = format!("127.0.0.1:{sched}");
    let mut cluster = Cluster(Vec::new());
    let log = |name: &str| dir.path().join(format!("{name}.log"));
    cluster.0.push(spawn(
        &["scheduler", "--bind", &sched_addr, "--catalog", mcat],
        &log("scheduler"),
    ));
    wait_for(sched, "the scheduler", &mut cluster);
    for k in 0..2 {
        let (port, grpc) = (free_port(), free_port());
        let work = dir.path().join(format!("executor-{k}"));
        let args = [
            "executor",
            "--scheduler",
            &sched_addr,
            "--port",
            &port.to_string(),
            "--grpc-port",
            &grpc.to_string(),
            "--tasks",
            "1",
            "--catalog",
            mcat,
            "--work-dir",
            work.to_str().unwrap(),
        ];
        cluster.0.push(spawn(&args, &log(&format!("executor-{k}"))));
        wait_for(port, "an executor", &mut cluster);
    }

    let from = format!("'{}/*.jsonl'", models.display());
    let violations = format!(
        "SELECT id, v['property'] AS property, v['message'] AS message FROM
           (SELECT yaql_str('$[\"?\"].id', json) AS id, unnest(murano_validate('com.example.Server', json)) AS v FROM {from})
         ORDER BY id, property"
    );
    let totals = format!(
        "SELECT count(*) AS objects, sum(cardinality(murano_validate('com.example.Server', json))) AS violations,
                sum(yaql_int('$.tags.len()', json)) AS tags
         FROM {from} WHERE yaql_bool('$.enabled', json) OR NOT yaql_bool('$.enabled', json)"
    );
    let url = format!("df://{sched_addr}");
    for sql in [&violations, &totals] {
        let local = batch(&["--catalog", mcat, "--sql", sql, "--format", "jsonl", "-q"]);
        let remote = batch(&[
            "--catalog",
            mcat,
            "--ballista",
            &url,
            "--sql",
            sql,
            "--format",
            "jsonl",
            "-q",
        ]);
        assert_eq!(remote, local, "{sql}");
    }
    let local = batch(&[
        "--catalog",
        mcat,
        "--sql",
        &violations,
        "--format",
        "jsonl",
        "-q",
    ]);
    let ids: Vec<String> = common::planted(n)
        .iter()
        .map(|(i, _)| format!("srv{i:08}"))
        .collect();
    assert_eq!(local.lines().count(), ids.len(), "{local}");
    for (line, id) in local.lines().zip(&ids) {
        assert!(
            line.starts_with(&format!("{{\"id\":\"{id}\",\"property\":")),
            "{line}"
        );
    }
    let totals = batch(&[
        "--catalog",
        mcat,
        "--ballista",
        &url,
        "--sql",
        &totals,
        "--format",
        "jsonl",
        "-q",
    ]);
    assert!(
        totals.starts_with(&format!("{{\"objects\":{n},\"violations\":5,")),
        "{totals}"
    );
}

#[test]
fn a_cluster_without_our_functions_is_a_clear_error() {
    // No scheduler at all: the client says so instead of hanging.
    let port = free_port();
    let out = Command::new(BIN)
        .args([
            "--ballista",
            &format!("df://127.0.0.1:{port}"),
            "--sql",
            "SELECT yaql('1', '{}')",
            "-q",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("error: "), "{err}");
}

#[test]
fn the_cli_writes_parquet_and_reads_named_tables() {
    let dir = tempfile::tempdir().unwrap();
    let models = dir.path().join("models");
    common::write_models(&models, 1000, 2);
    let example = common::example();
    let example = example.to_str().unwrap();
    let pq = dir.path().join("v.parquet");
    let table = format!("m={}/*.jsonl", models.display());
    batch(&[
        "--catalog", example, "--table", &table, "--format", "parquet", "-o", pq.to_str().unwrap(), "-q",
        "--sql", "SELECT json AS model, cardinality(murano_validate('com.example.Server', json)) AS bad FROM m",
    ]);
    let named = format!("p={}", pq.display());
    let out = batch(&[
        "--table",
        &named,
        "--sql",
        "SELECT count(*) AS n, sum(bad) AS bad FROM p",
        "--format",
        "jsonl",
        "-q",
    ]);
    assert_eq!(out, "{\"n\":1000,\"bad\":5}\n");
    let out = batch(&[
        "--sql",
        &format!("SELECT count(*) AS n FROM '{}'", pq.display()),
    ]);
    assert!(out.contains("| 1000 |"), "{out}");
}
