#!/usr/bin/env bash
# Builds the Python package (maturin, through pip) into target/pyvenv with
# pytest, the reference yaql 3.2.0 (for its test-suite and the benchmark)
# and testtools, then runs the package's pytest suite. Skips with a message
# (exit 0) when python3 or its venv module is missing, or when the package
# registry cannot be reached; a build or test failure fails.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
venv=$root/target/pyvenv
if ! command -v python3 >/dev/null; then
    echo "SKIP: python3 is absent: the Python package is not built or tested"
    exit 0
fi
if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
    echo "SKIP: python3 has no venv module (python3-venv): the Python package is not tested"
    exit 0
fi
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
if ! "$venv/bin/pip" install -q --disable-pip-version-check pytest testtools 'yaql==3.2.0' 'maturin>=1.9,<2'; then
    echo "SKIP: the package registry cannot be reached: the Python package is not tested"
    exit 0
fi
# The build shares the workspace's target directory (and so its compiled
# crates) with cargo.
# The dev profile, as the rest of the test command builds: the wheel links
# the crates `cargo test --workspace` compiled (MURANOPL_PY_PROFILE=release
# for a release wheel).
PATH="$venv/bin:$PATH" CARGO_TARGET_DIR="$root/target" \
    MATURIN_PEP517_ARGS="--profile ${MURANOPL_PY_PROFILE:-dev}" "$venv/bin/pip" install -q --disable-pip-version-check \
    --no-build-isolation "$here"
cd "$here/tests"
exec "$venv/bin/python" -m pytest -q -p no:cacheprovider
