#!/usr/bin/env python3
"""Contract validation at scale: `muranopl validate --jobs J` over one model
of N servers, against `muranopl batch` over the same N servers as JSON Lines
(DataFusion on this machine, J partitions), and against Ballista clusters on
loopback of one and of two executors (one task slot each). Rounds are
interleaved (the machines are noisy); each figure is the median wall time of
the whole command, start-up and catalogue load included, as objects/s.

Usage: benches/batch.py [--objects N] [--files F] [--jobs J] [--rounds R]
Needs a release build of both programs:
    cargo build --release && cargo build --release -p muranopl-datafusion
"""
import argparse, os, socket, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MURANOPL = os.path.join(ROOT, "target/release/muranopl")
BATCH = os.path.join(ROOT, "target/release/muranopl-batch")
EXAMPLE = os.path.join(ROOT, "examples/validate")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, procs):
    start = time.time()
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            if any(p.poll() is not None for p in procs):
                sys.exit("a cluster process exited early")
            if time.time() - start > 60:
                sys.exit(f"nothing listens on {port}")
            time.sleep(0.1)


def cluster(executors, mcat, work):
    """Starts a scheduler and `executors` executors; returns (url, procs)."""
    sched = free_port()
    addr = f"127.0.0.1:{sched}"
    quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    procs = [subprocess.Popen([BATCH, "scheduler", "--bind", addr, "--catalog", mcat], **quiet)]
    wait_port(sched, procs)
    for k in range(executors):
        port, grpc = free_port(), free_port()
        procs.append(subprocess.Popen(
            [BATCH, "executor", "--scheduler", addr, "--port", str(port), "--grpc-port", str(grpc),
             "--tasks", "1", "--catalog", mcat, "--work-dir", os.path.join(work, f"x{executors}-{k}")],
            **quiet))
        wait_port(port, procs)
    time.sleep(1)
    return f"df://{addr}", procs


def timed(cmd, expect):
    start = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True)
    secs = time.perf_counter() - start
    # `validate` exits 1 when it finds violations, as this data has.
    if out.returncode not in (0, 1) or expect not in out.stdout + out.stderr:
        sys.exit(f"{cmd[0]}: expected {expect!r} in its output:\n{out.stdout}{out.stderr}")
    return secs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--objects", type=int, default=1_000_000)
    ap.add_argument("--files", type=int, default=8)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    for p in (MURANOPL, BATCH):
        if not os.path.exists(p):
            sys.exit(f"{p} is missing: see the usage (release builds)")
    tmp = tempfile.mkdtemp(prefix="muranopl-batch-bench-")
    gen = os.path.join(ROOT, "scripts/gen-validate-model")
    fleet, models, mcat = (os.path.join(tmp, f) for f in ("fleet.json", "models", "catalog.mcat"))
    subprocess.run([gen, str(a.objects), fleet], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([gen, str(a.objects), models, "--jsonl", str(a.files)], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([BATCH, "pack", "-p", EXAMPLE, "-o", mcat], check=True, stdout=subprocess.DEVNULL)

    sql = ("SELECT count(*) AS objects, sum(cardinality(murano_validate('com.example.Server', json))) "
           f"AS violations FROM '{models}/*.jsonl'")
    expect = f'{{"objects":{a.objects},"violations":5}}'
    query = [BATCH, "--catalog", mcat, "--sql", sql, "--format", "jsonl", "-q"]
    runs = {
        f"muranopl validate --jobs {a.jobs}": (
            [MURANOPL, "validate", "-p", EXAMPLE, fleet, "--jobs", str(a.jobs)], "5 violation(s)"),
        f"muranopl batch (DataFusion, {a.jobs} partitions)": (query + ["--jobs", str(a.jobs)], expect),
    }
    procs = []
    try:
        for n in (1, 2):
            url, ps = cluster(n, mcat, tmp)
            procs += ps
            runs[f"muranopl batch --ballista ({n} executor{'s' if n > 1 else ''} x 1 task)"] = (
                query + ["--ballista", url], expect)
        times = {k: [] for k in runs}
        for _ in range(a.rounds):
            for k, (cmd, want) in runs.items():
                times[k].append(timed(cmd, want))
    finally:
        for p in procs:
            p.kill()
    base = statistics.median(times[next(iter(runs))])
    print(f"{a.objects} objects, {a.files} files, median of {a.rounds} interleaved rounds, "
          f"{os.cpu_count()} cores")
    print(f"| run | seconds | objects/s | vs validate |\n|---|---|---|---|")
    for k, ts in times.items():
        m = statistics.median(ts)
        print(f"| {k} | {m:.2f} | {a.objects / m:,.0f} | {base / m:.2f}x |")


if __name__ == "__main__":
    main()
