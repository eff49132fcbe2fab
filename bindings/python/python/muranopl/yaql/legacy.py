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
    """The factory of yaql 0.2 engines: the reference's table has no
    name-value operator, and ``=>`` is a binary operator in a group of its
    own after ``or``'s.

    >>> [t[0] if t else '|' for t in YaqlFactory().operators[-5:]]
    ['or', '|', '=>', '|', '->']
    """

    legacy = True

    def __init__(self, allow_delegates=False):
        super().__init__(None, allow_delegates)
        self.insert_operator('or', True, '=>',
                             _factory.OperatorType.BINARY_LEFT_ASSOCIATIVE,
                             True)
        self._standard = list(self.operators)


def create_context(data=NO_VALUE, *args, **kwargs):
    """A root context for a yaql 0.2 engine."""
    return Context(data=data, legacy=True)
