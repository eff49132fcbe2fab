#!/usr/bin/env bash
# Whole-file validation against its peers, interleaved: the object model of
# examples/validate with N servers (scripts/gen-validate-model, 177 MB at
# 1M) validated by
#   - `muranopl validate` (the classes' contracts, streaming, all cores);
#   - `jsonschema-cli` (the jsonschema crate's own CLI) with the same rules
#     as a JSON Schema (benches/whole_file/validate.schema.json);
#   - a small Rust program doing what a user of the jsonschema crate would
#     write: serde_json's DOM, then `validator_for(schema).iter_errors`
#     (benches/whole_file_jsonschema.rs; the workspace's serde_json has
#     `arbitrary_precision` on, as the engine needs it).
# Each run's wall time and peak RSS (`/usr/bin/time`), the median over
# ROUNDS rounds, and every tool's violation count (all must find the
# model's 5 planted violations).
#
# Usage: benches/whole-file.sh [N] [ROUNDS]   (defaults 1000000 and 3)
# Needs: a release build (`cargo build --release`), and jsonschema-cli
# (`cargo install jsonschema-cli --root target/bench-peers/tools`; the
# peer is skipped with a message without it).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000000}
rounds=${2:-3}
model=target/bench-peers/data/model-$n.json
schema=benches/whole_file/validate.schema.json
mkdir -p target/bench-peers/data
[ -f "$model" ] || scripts/gen-validate-model "$n" "$model" >/dev/null
bin=target/release/muranopl
[ -x "$bin" ] || { echo "build first: cargo build --release" >&2; exit 2; }
peer=$(cargo bench --bench whole_file_jsonschema --no-run 2>&1 |
    sed -n 's/.*Executable .*(\(.*whole_file_jsonschema-[0-9a-f]*\)).*/\1/p' | tail -1)
cli=target/bench-peers/tools/bin/jsonschema-cli
[ -x "$cli" ] || { echo "jsonschema-cli: skipped (cargo install jsonschema-cli --root target/bench-peers/tools)" >&2; cli=; }

# run NAME CMD...: wall seconds, peak KB and the violations it reports.
run() {
    local name=$1 out=/tmp/whole-file-$1.out
    shift
    /usr/bin/time -f "%e %M" -o /tmp/whole-file.time "$@" >"$out" 2>&1 || true
    local count
    case $name in
        muranopl) count=$(grep -c ': \$\.Objects' "$out" || true) ;;
        jsonschema-cli) count=$(grep -cE '^[0-9]+\. ' "$out" || true) ;;
        rust-jsonschema) count=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["errors"])' "$out") ;;
    esac
    echo "$name $(tail -n 1 /tmp/whole-file.time) $count"
}
: >/tmp/whole-file.results
for r in $(seq "$rounds"); do
    run muranopl "$bin" validate -p examples/validate "$model" >>/tmp/whole-file.results
    [ -z "$cli" ] || run jsonschema-cli "$cli" validate "$schema" --instance "$model" --errors-only >>/tmp/whole-file.results
    run rust-jsonschema "$peer" "$model" "$schema" >>/tmp/whole-file.results
done
python3 - "$n" <<'PY'
import statistics, sys
n = int(sys.argv[1])
rows = {}
for line in open("/tmp/whole-file.results"):
    name, wall, kb, count = line.split()
    rows.setdefault(name, []).append((float(wall), int(kb), int(count)))
base = statistics.median(w for w, _, _ in rows["muranopl"])
print(f"whole-file validation, {n} objects (median of {len(rows['muranopl'])} interleaved rounds)")
print(f"{'tool':18} {'wall s':>8} {'objects/s':>11} {'peak RSS':>10} {'violations':>10} {'muranopl / tool':>16}")
for name, rs in rows.items():
    wall = statistics.median(w for w, _, _ in rs)
    kb = max(k for _, k, _ in rs)
    counts = sorted({c for _, _, c in rs})
    print(f"{name:18} {wall:8.2f} {n / wall:11,.0f} {kb / 1024:8.0f}MB {','.join(map(str, counts)):>10} {base / wall:16.2f}")
PY
