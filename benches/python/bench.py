#!/usr/bin/env python3
"""Binding vs reference: the `muranopl` Python binding against the reference
Python `yaql` (3.2.0), in one process, on workloads W1, W2, W5 and W7 of
workloads.json.

  W1, W2 (mode "eval"): one evaluation over the whole list; the time is
          per element (eval time / N).
  W5, W7 (mode "each"): one evaluation per element from a Python loop; the
          time is per evaluation. The binding's `evaluate_many` (all cores)
          is timed too and printed as an extra line, not as the headline.

Both engines compile once, outside the timed region; the timed region
includes converting the Python data on every call. Rounds are interleaved
(reference, then binding, for each workload, in each round); within a round
an engine's run is repeated until --min-time seconds are spent (the sample is
the mean per run: one run of the reference, many of the binding, whose single
run is only milliseconds). The table shows the median of the round samples
per engine and ratio = reference median / binding median.
Every run is cross-checked: both engines must return the same value
(W1, W2) or the same per-element results (W5, W7), or the script exits 1.

V7 (with --only V7, or in the default run when `jsonschema_rs` and
`fastjsonschema` are installed): W7's contract as validation, per object,
over the same W7 records: the binding's `Catalog.validate_many` (each
record an object model of a class whose property contracts say what
w7-schema.json says), `Catalog.validate_objects` (the records checked in
place as instances of that class), `jsonschema_rs` (`validator.is_valid`
per object) and `fastjsonschema` (the compiled validator per object), in
one interleaved run; all four must find the same records valid. With
--v7-baseline PATH (another build's `muranopl/_native*.so`, e.g. the
wheel before a change), that build's `validate_many` and
`validate_objects` are timed in the same run too ("... (baseline)").

Usage (from the repository root, with the venv that holds both engines):
  target/pyvenv/bin/python benches/python/bench.py \
      [--size 10000] [--w7-size 2000] [--v7-size 10000] [--rounds 3] \
      [--only W1,W5,V7] [--v7-baseline PATH] [--json]
"""
import argparse
import collections.abc  # noqa: F401  yaql 3.2.0 uses collections.abc without importing it
import gc
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BENCH_DIR = os.environ.get("BENCH_SHARED", os.path.join(os.path.dirname(ROOT), "shared", "bench"))
WORKLOAD_IDS = ["W1", "W2", "W5", "W7"]
VALIDATION_IDS = ["V7"]

# W7's class contract with strict types, as w7-schema.json has them (as
# benches/validate.rs checks it): MuranoPL's int() and string() would
# coerce "8080" and 42.
V7_MANIFEST = """Format: 1.4
Type: Library
FullName: bench.v7
Name: W7 contract
Version: 1.0.0
Classes:
  bench.Port: Port.yaml
"""
V7_CLASS = """Namespaces: {=: bench}
Name: Port
Properties:
  port:
    Contract: $.notNull().check(isInteger($) and $ > 0 and $ < 65536)
  scope:
    Contract: $.notNull().check($ in list(public, cloud, host, internal))
  protocol:
    Contract: $.notNull().check($ in list(TCP, UDP))
  name:
    Contract: $.notNull().check(isString($))
  settings:
    Contract:
      timeout: $.notNull().check(isInteger($) and $ >= 0)
      retries: $.check(isInteger($))
      label: $.check(isString($))
  ports:
    Contract: [$.notNull().check(isInteger($) and $ > 0 and $ < 65536), 1, 8]
"""


# --------------------------------------------------------------------------
# Cross-checking

def same(a, b):
    """Strict equality: same types (bool is not int, int is not float),
    lists element by element, dicts key by key, floats bit for bit
    (NaN equals NaN)."""
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def short(v, limit=300):
    s = repr(v)
    return s if len(s) <= limit else s[:limit] + "... (%d chars)" % len(s)


def describe(v):
    """Type and size of a result, for mismatch reports."""
    if isinstance(v, (list, tuple)):
        return "%s of %d" % (type(v).__name__, len(v))
    return type(v).__name__


def diff(wid, expr, ref, got, what="binding"):
    """A readable account of how `got` differs from `ref` (None if same)."""
    if same(ref, got):
        return None
    lines = ["%s: %s differs from reference" % (wid, what),
             "  expression: %s" % expr,
             "  reference : %s  %s" % (describe(ref), short(ref)),
             "  %-10s: %s  %s" % (what[:10], describe(got), short(got))]
    if isinstance(ref, list) and isinstance(got, list):
        for i, (x, y) in enumerate(zip(ref, got)):
            if not same(x, y):
                lines.append("  first difference at index %d: reference %s, %s %s"
                             % (i, short(x, 120), what, short(y, 120)))
                break
        n_diff = sum(1 for x, y in zip(ref, got) if not same(x, y))
        lines.append("  %d of %d positions differ; lengths %d vs %d"
                     % (n_diff, min(len(ref), len(got)), len(ref), len(got)))
    return "\n".join(lines)


def digest(v):
    """The short result digest shown in the table (what was checked)."""
    if isinstance(v, list):
        if v and all(type(x) is bool for x in v):
            return "%d/%d true" % (sum(v), len(v))
        return "len %d" % len(v)
    return short(v, 40)


# --------------------------------------------------------------------------
# Data

def ensure_data(data_dir, dataset, n):
    path = os.path.join(data_dir, "%s-%d.json" % (dataset, n))
    if not os.path.exists(path):
        gen = os.path.join(BENCH_DIR, "gen_data.py")
        print("generating %s (%s)" % (path, gen), file=sys.stderr)
        subprocess.check_call([sys.executable, gen, "--out", data_dir,
                               "--only", dataset, "--sizes", str(n)])
    with open(path) as f:
        data = json.load(f)
    if not isinstance(data, list) or len(data) != n:
        raise SystemExit("%s: expected a list of %d elements" % (path, n))
    return path, data


# --------------------------------------------------------------------------
# Engines

def make_runners(expr, mode):
    """Compiled runners: name -> f(data) -> result. Compilation happens here,
    outside any timed region."""
    import yaql
    import muranopl.yaql as my

    engine = yaql.factory.YaqlFactory().create()
    ctx = yaql.create_context()
    ref = engine(expr)
    mine = my.compile(expr)
    ref_eval = ref.evaluate
    my_eval = mine.evaluate

    if mode == "eval":
        def run_ref(data):
            return ref_eval(data=data, context=ctx)

        def run_mine(data):
            return my_eval(data)
        return {"reference": run_ref, "binding": run_mine}

    def run_ref_each(items):
        return [ref_eval(data=x, context=ctx) for x in items]

    def run_mine_each(items):
        return [my_eval(x) for x in items]

    def run_mine_many(items):
        return mine.evaluate_many(items)
    return {"reference": run_ref_each, "binding": run_mine_each,
            "evaluate_many": run_mine_many}


def timed(fn, data, min_time, check):
    """One round's sample for one engine: `fn(data)` run until `min_time`
    seconds have been spent in it (at least once), mean time per run.
    `check(result)` sees every result, outside the timed region."""
    total, runs = 0.0, 0
    while True:
        gc.collect()
        t0 = time.perf_counter()
        out = fn(data)
        total += time.perf_counter() - t0
        runs += 1
        check(out)
        if total >= min_time:
            return total / runs, runs


# --------------------------------------------------------------------------
# V7: validation against JSON Schema validators

def load_baseline(path):
    """Another build of the extension module (`muranopl._native`), loaded
    beside the installed one (not registered as a module)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("muranopl._native", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def validation_runners(records, schema_path, tmp, baseline=None):
    """name -> f(records) -> [bool valid per record]; setup (package,
    models, compiled schemas) outside any timed region. `baseline`: the
    path of another build of the extension module, whose validate_many
    and validate_objects run too."""
    import fastjsonschema
    import jsonschema_rs
    import muranopl

    pkg = os.path.join(tmp, "v7")
    os.makedirs(os.path.join(pkg, "Classes"), exist_ok=True)
    with open(os.path.join(pkg, "manifest.yaml"), "w") as f:
        f.write(V7_MANIFEST)
    with open(os.path.join(pkg, "Classes", "Port.yaml"), "w") as f:
        f.write(V7_CLASS)
    cat = muranopl.Catalog.load([pkg])
    with open(schema_path) as f:
        schema = json.load(f)
    validator = jsonschema_rs.validator_for(schema)
    is_valid = validator.is_valid
    fj = fastjsonschema.compile(schema)
    fj_error = fastjsonschema.JsonSchemaException
    # The object models validate_many takes: each record with its header
    # (made once, as a caller holding models would have them).
    models = [dict(r, **{"?": {"id": "o%d" % i, "type": "bench.Port"}})
              for i, r in enumerate(records)]

    def run_many(_):
        return [not v for v in cat.validate_many(models)]

    def run_objects(recs):
        return [not v for v in cat.validate_objects("bench.Port", recs)]

    def run_jsonschema_rs(recs):
        return [is_valid(r) for r in recs]

    def run_fastjsonschema(recs):
        out = []
        for r in recs:
            try:
                fj(r)
                out.append(True)
            except fj_error:
                out.append(False)
        return out
    runners = {"jsonschema_rs": run_jsonschema_rs,
               "fastjsonschema": run_fastjsonschema,
               "validate_many": run_many,
               "validate_objects": run_objects}
    if baseline:
        base = load_baseline(baseline).Catalog.load([pkg])
        violation = muranopl.Violation

        def run_many_baseline(_):
            return [not v for v in base.validate_many(models, False, violation)]

        def run_objects_baseline(recs):
            return [not v for v in base.validate_objects("bench.Port", recs)]
        runners["validate_many (baseline)"] = run_many_baseline
        runners["validate_objects (baseline)"] = run_objects_baseline
    return runners


def run_validation(a, data_dir, out):
    """The V7 rows: µs per object for each validator, interleaved."""
    import tempfile
    try:
        import fastjsonschema  # noqa: F401
        import jsonschema_rs  # noqa: F401
    except ImportError as e:
        print("V7 skipped: %s (pip install jsonschema-rs fastjsonschema)" % e,
              file=out)
        return None, []
    with open(a.workloads) as f:
        spec = {w["id"]: w for w in json.load(f)["workloads"]}
    w7 = spec["W7"]
    path, records = ensure_data(data_dir, w7["dataset"], a.v7_size)
    schema_path = os.path.join(BENCH_DIR, w7["schema"])
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        runners = validation_runners(records, schema_path, tmp, a.v7_baseline)
        expected = runners["jsonschema_rs"](records)
        for name, fn in runners.items():
            got = fn(records)
            if got != expected:
                failures.append("V7: %s finds %d valid, jsonschema_rs %d"
                                % (name, sum(got), sum(expected)))
        times = {k: [] for k in runners}
        for r in range(a.rounds):
            for name, fn in runners.items():
                t, runs = timed(fn, records, a.min_time, lambda _: None)
                times[name].append(t)
            print("round %d/%d V7: %s" % (r + 1, a.rounds, "  ".join(
                "%s %.2f ms" % (k, v[-1] * 1e3) for k, v in times.items())),
                file=sys.stderr)
    n = len(records)
    med = {k: statistics.median(v) * 1e6 / n for k, v in times.items()}
    print("", file=out)
    print("V7 %s, N=%d (%d valid), %s" % (w7["title"], n, sum(expected), path),
          file=out)
    for name in runners:
        print("    %-27s %s µs/object   jsonschema_rs/this %.2f   "
              "fastjsonschema/this %.2f"
              % (name, fmt_us(med[name]), med["jsonschema_rs"] / med[name],
                 med["fastjsonschema"] / med[name]), file=out)
    row = {"id": "V7", "title": w7["title"], "n": n, "valid": sum(expected),
           "unit": "µs/object", "us": med,
           "rounds_s": times, "same_result": not failures}
    return row, failures


# --------------------------------------------------------------------------
# Reporting

def fmt_us(us):
    if us >= 100:
        return "%.1f" % us
    if us >= 10:
        return "%.2f" % us
    if us >= 1:
        return "%.3f" % us
    return "%.4f" % us


def fmt_ratio(r):
    return "%.0fx" % r if r >= 10 else "%.1fx" % r


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", default=os.path.join("target", "bench-peers", "data"),
                    help="where gen_data.py files live (generated there if "
                         "missing; a relative path is from the repository root)")
    ap.add_argument("--size", type=int, default=10000, help="N for W1, W2, W5")
    ap.add_argument("--w7-size", type=int, default=2000, help="N for W7")
    ap.add_argument("--v7-size", type=int, default=10000, help="N for V7")
    ap.add_argument("--v7-baseline", default=None, metavar="PATH",
                    help="another build of muranopl/_native*.so whose "
                         "validate_many and validate_objects V7 times too")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--min-time", type=float, default=0.2,
                    help="seconds: within a round, an engine's run is repeated "
                         "until this much time is spent; the sample is the mean "
                         "(the reference needs one run; the binding many)")
    ap.add_argument("--only", default=",".join(WORKLOAD_IDS + VALIDATION_IDS),
                    help="comma-separated subset of "
                         + ",".join(WORKLOAD_IDS + VALIDATION_IDS))
    ap.add_argument("--workloads", default=os.path.join(BENCH_DIR, "workloads.json"))
    ap.add_argument("--json", action="store_true",
                    help="print a JSON summary on stdout (the table then goes to stderr)")
    a = ap.parse_args()

    if a.rounds < 1:
        ap.error("--rounds must be >= 1")
    only = [w.strip().upper() for w in a.only.split(",") if w.strip()]
    bad = [w for w in only if w not in WORKLOAD_IDS + VALIDATION_IDS]
    if bad:
        ap.error("unknown workload(s) %s; choose from %s"
                 % (",".join(bad), ",".join(WORKLOAD_IDS + VALIDATION_IDS)))
    data_dir = a.data_dir if os.path.isabs(a.data_dir) else os.path.join(ROOT, a.data_dir)
    out = sys.stderr if a.json else sys.stdout
    started = time.perf_counter()

    import yaql
    import muranopl
    try:
        from importlib.metadata import version
        ref_version, my_version = version("yaql"), version("muranopl")
    except Exception:  # pragma: no cover
        ref_version = getattr(yaql, "__version__", "?")
        my_version = getattr(muranopl, "__version__", "?")

    with open(a.workloads) as f:
        spec = {w["id"]: w for w in json.load(f)["workloads"]}

    # Load data, compile, warm up and cross-check once (untimed).
    work = []
    failures = []
    for wid in [w for w in WORKLOAD_IDS if w in only]:
        w = spec[wid]
        n = a.w7_size if wid == "W7" else a.size
        path, data = ensure_data(data_dir, w["dataset"], n)
        runners = make_runners(w["yaql"], w["mode"])
        warm = data[:200]
        for name, fn in runners.items():
            fn(warm)
        work.append({"id": wid, "title": w["title"], "mode": w["mode"],
                     "expr": w["yaql"], "n": n, "path": path, "data": data,
                     "runners": runners, "times": {k: [] for k in runners},
                     "runs": {k: [] for k in runners},
                     "result": None, "failed": False})

    print("muranopl %s vs yaql %s | Python %s | %d cores | rounds %d"
          % (my_version, ref_version, platform.python_version(),
             os.cpu_count() or 0, a.rounds), file=out)
    for w in work:
        print("  %s  N=%-6d %s" % (w["id"], w["n"], w["path"]), file=out)

    for r in range(a.rounds):
        for w in work:
            if w["failed"]:
                continue
            # The reference's first result is the expected one; every later
            # run of either engine (reference included) must match it.
            def check_ref(out, w=w, r=r):
                if w["result"] is None:
                    w["result"] = out
                    return
                d = diff(w["id"], w["expr"], w["result"], out,
                         "reference round %d" % (r + 1))
                if d and not w["failed"]:
                    failures.append(d)
                    w["failed"] = True
            t, runs = timed(w["runners"]["reference"], w["data"], a.min_time, check_ref)
            w["times"]["reference"].append(t)
            w["runs"]["reference"].append(runs)
            for name in [x for x in w["runners"] if x != "reference"]:
                def check(out, w=w, name=name):
                    d = diff(w["id"], w["expr"], w["result"], out, name)
                    if d and not w["failed"]:
                        failures.append(d)
                        w["failed"] = True
                t, runs = timed(w["runners"][name], w["data"], a.min_time, check)
                w["times"][name].append(t)
                w["runs"][name].append(runs)
            print("round %d/%d %s: %s" % (
                r + 1, a.rounds, w["id"],
                "  ".join("%s %.2f ms x%d" % (k, v[-1] * 1e3, w["runs"][k][-1])
                           for k, v in w["times"].items() if v)),
                file=sys.stderr)
        out.flush()

    # Table.
    rows = []
    print("", file=out)
    for w in work:
        unit = "µs/el" if w["mode"] == "eval" else "µs/eval"
        med = {k: statistics.median(v) * 1e6 / w["n"] for k, v in w["times"].items() if v}
        ratio = med["reference"] / med["binding"]
        spread = {k: (min(v) * 1e6 / w["n"], max(v) * 1e6 / w["n"])
                  for k, v in w["times"].items() if v}
        mark = "  MISMATCH" if w["failed"] else ""
        print("%-3s reference %s %s  binding %s %s  ratio %s   [%s; %s]%s"
              % (w["id"], fmt_us(med["reference"]), unit, fmt_us(med["binding"]), unit,
                 fmt_ratio(ratio), w["title"], digest(w["result"]), mark), file=out)
        row = {"id": w["id"], "title": w["title"], "mode": w["mode"], "n": w["n"],
               "expr": w["expr"], "unit": unit,
               "reference_us": med["reference"], "binding_us": med["binding"],
               "ratio": ratio, "spread_us": spread, "check": digest(w["result"]),
               "same_result": not w["failed"],
               "rounds_s": {k: v for k, v in w["times"].items()},
               "runs_per_round": {k: v for k, v in w["runs"].items()}}
        if "evaluate_many" in med:
            many = med["evaluate_many"]
            row["evaluate_many_us"] = many
            row["evaluate_many_ratio"] = med["reference"] / many
            print("    (extra) binding evaluate_many, all cores %s %s  ratio %s"
                  % (fmt_us(many), unit, fmt_ratio(med["reference"] / many)), file=out)
        rows.append(row)

    validation = None
    if "V7" in only:
        validation, v_failures = run_validation(a, data_dir, out)
        failures.extend(v_failures)

    elapsed = time.perf_counter() - started
    for f in failures:
        print("\nRESULT MISMATCH\n" + f, file=sys.stderr)
    print("run took %.1f s (data load, warm-up, %d rounds)" % (elapsed, a.rounds), file=out)
    if rows:
        low = min(rows, key=lambda x: x["ratio"])
        summary = "SUMMARY min ratio: %s (%s)" % (fmt_ratio(low["ratio"]), low["id"])
    else:
        summary = "SUMMARY min ratio: n/a (no workloads)"
    if failures:
        summary += "  RESULTS DIFFER: %s" % ",".join(
            [w["id"] for w in work if w["failed"]]
            + (["V7"] if validation and not validation["same_result"] else []))
    if a.json:
        print(json.dumps({
            "binding": "muranopl %s" % my_version, "reference": "yaql %s" % ref_version,
            "python": platform.python_version(), "cores": os.cpu_count(),
            "rounds": a.rounds, "elapsed_s": elapsed, "workloads": rows,
            "validation": validation,
            "min_ratio": min(x["ratio"] for x in rows) if rows else None,
            "mismatches": failures}, indent=2, ensure_ascii=False))
    print(summary, file=out)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
