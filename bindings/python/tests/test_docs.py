"""Every docstring example of the package runs (doctest)."""

import doctest
import importlib

import pytest

from conftest import EXAMPLES

MODULES = ['muranopl', 'muranopl._errors', 'muranopl.yaql',
           'muranopl.yaql.exceptions', 'muranopl.yaql.factory',
           'muranopl.yaql.legacy', 'muranopl.yaql.utils',
           'muranopl.yaql.language.specs', 'muranopl.yaql.language.yaqltypes',
           'muranopl.yaql.language.conventions', 'muranopl.yaql.yaqlization',
           'muranopl.yaql.yaql_interface']


@pytest.mark.parametrize('name', MODULES)
def test_docstrings(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, extraglobs={'EXAMPLES': EXAMPLES},
                             optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    assert result.attempted > 0 or name == 'muranopl.yaql.legacy'
