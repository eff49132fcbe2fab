"""The reference yaql's own test-suite against the binding (see
``reference_suite.py``)."""

import pathlib
import re
import subprocess
import sys

import pytest

SUITE = pathlib.Path(__file__).with_name('reference_suite.py')
# Every language test (yaql 0.2's tuples included).
MIN_LANGUAGE = 292
# Every test of the Python API without decorators (its insert_operator
# test parses `$.a[0]` with an operator inserted above `.`).
MIN_API = 32
# Every test through the reference's decorators, types and yaqlization.
MIN_DECORATORS = 42


def test_reference_suite():
    for module in ('yaql', 'testtools'):
        pytest.importorskip(module, reason=f'{module} is not installed: '
                            'the reference test-suite is not run')
    out = subprocess.run([sys.executable, str(SUITE), '-v'],
                         capture_output=True, text=True, timeout=600)
    counts = dict(re.findall(r'^([a-z-]+): (\d+)/\d+ passed', out.stdout, re.M))
    assert counts, out.stdout + out.stderr
    assert int(counts['language']) >= MIN_LANGUAGE, out.stdout
    assert int(counts['python-api']) >= MIN_API, out.stdout
    assert int(counts['decorators']) >= MIN_DECORATORS, out.stdout
