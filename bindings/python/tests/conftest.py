"""Shared paths for the binding's tests. Tests that need ``../shared``
(the conformance corpora and the fixtures' packages) or the reference
``yaql`` skip with a message when those are absent."""

import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
EXAMPLES = REPO / 'examples'
SHARED = REPO.parent / 'shared'
APPS = SHARED / 'fixtures' / 'apps'


def need_shared():
    if not (SHARED / 'conformance').is_dir():
        pytest.skip(f'{SHARED} is absent: the conformance corpora and '
                    'fixtures are not run')
