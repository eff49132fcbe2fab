"""The reference yaql's own test-suite against the binding (see
``reference_suite.py``)."""

import pathlib
import re
import subprocess
import sys

import pytest

SUITE = pathlib.Path(__file__).with_name('reference_suite.py')
# Every language test but two: yaql 0.2's `1 => 2` is a tuple there, a
# list here (TestLegacy.test_tuples and test_tuples_func).
MIN_LANGUAGE = 297


def test_reference_suite():
    for module in ('yaql', 'testtools'):
        pytest.importorskip(module, reason=f'{module} is not installed: '
                            'the reference test-suite is not run')
    out = subprocess.run([sys.executable, str(SUITE), '-v'],
                         capture_output=True, text=True, timeout=600)
    m = re.search(r'language: (\d+)/(\d+) passed', out.stdout)
    assert m, out.stdout + out.stderr
    assert int(m.group(1)) >= MIN_LANGUAGE, out.stdout
