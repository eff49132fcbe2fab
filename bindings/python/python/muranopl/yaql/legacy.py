"""yaql 0.2 compatibility (the reference's ``yaql.legacy``): the legacy
grammar (``=>`` is an operator) and library, as MuranoPL format 1.0 and
1.1 packages use them.

>>> from muranopl.yaql import legacy
>>> engine = legacy.YaqlFactory().create()
>>> engine('dict(a => 1).a').evaluate(context=legacy.create_context())
1
"""

from muranopl.yaql import Context
from muranopl.yaql import factory as _factory
from muranopl.yaql.utils import NO_VALUE


class YaqlFactory(_factory.YaqlFactory):
    """The factory of yaql 0.2 engines."""

    legacy = True

    def __init__(self, allow_delegates=False):
        super().__init__('=>', allow_delegates)


def create_context(data=NO_VALUE, *args, **kwargs):
    """A root context for a yaql 0.2 engine."""
    return Context(data=data, legacy=True)
