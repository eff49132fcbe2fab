#!/usr/bin/env bash
# Runs every fuzz target for SECS seconds (default 30) over corpora seeded
# from the conformance cases and fixtures; any crash, timeout (10 s per
# input) or memory blow-up (2 GB) fails the run and leaves the input in
# fuzz/artifacts/<target>/; so does a leak. Needs the nightly toolchain (cargo-fuzz and
# libFuzzer); without one it says so and succeeds.
set -euo pipefail
# LeakSanitizer stays on: process-lifetime caches (the intern table, the
# core library) are reachable from statics and not reported; memory
# nothing reaches any more (a reference cycle) fails the run.
cd "$(dirname "$0")"
secs=${1:-30}
if ! cargo +nightly --version >/dev/null 2>&1; then
    echo "fuzz: skipped: no nightly toolchain (cargo-fuzz needs one)"
    exit 0
fi
if ! command -v cargo-fuzz >/dev/null; then
    echo "fuzz: skipped: cargo-fuzz is not installed (cargo install cargo-fuzz --locked)"
    exit 0
fi
python3 seed.py
# No debug info in the fuzz build (cargo-fuzz asks for line tables, which
# were more than half of each target: 2.2 GB of build instead of 1.6 GB);
# a crash's stack still names functions. Unset for line numbers.
export RUSTFLAGS="${RUSTFLAGS:-} -Cdebuginfo=0"
# Each target is linked, run, and its binary removed before the next: the
# libraries are built once and shared, and only one fuzz binary (each holds
# the whole engine under AddressSanitizer) is on disk at a time. That keeps
# the test command's peak disk within its budget (docs/testing.md); a rerun
# links each binary again (seconds).
out="target/$(rustc +nightly -vV | sed -n 's/^host: //p')/release"
mkdir -p logs
for t in $(cargo +nightly fuzz list); do
    echo "fuzz: $t for ${secs}s"
    cargo +nightly fuzz build -O "$t"
    if ! cargo +nightly fuzz run -O "$t" "corpus/$t" -- \
        -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        >"logs/$t.txt" 2>&1; then
        grep -E 'ERROR|SUMMARY|panicked|Test unit written' "logs/$t.txt" || tail -n 30 "logs/$t.txt"
        echo "fuzz: $t failed (log: fuzz/logs/$t.txt)"
        exit 1
    fi
    grep -E 'stat::number_of_executed_units|stat::peak_rss_mb' "logs/$t.txt" || true
    rm -f "$out/$t" "$out/deps/$t"-*
done
