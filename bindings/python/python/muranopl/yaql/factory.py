"""The reference's engine factory, for code written against ``yaql``:

>>> from muranopl.yaql import factory, create_context
>>> engine = factory.YaqlFactory().create(options={'yaql.limitIterators': 100})
>>> engine('$.len()').evaluate(data=[1, 2], context=create_context())
2
>>> engine.options['yaql.limitIterators']
100

Options are the reference's names; ``-1`` means unlimited, and an option
not given keeps this engine's default (limits on):
``yaql.limitIterators``, ``yaql.memoryQuota``, ``yaql.convertSetsToLists``
``yaql.convertTuplesToLists`` (a yaql 0.2 engine keeps tuples: ``1 => 2``
and ``tuple(1, 2)`` come back as ``(1, 2)``, as do Python tuples in the
data; Python lists stay lists) and ``yaql.convertInputData`` (accepted).

The operator table (``YaqlFactory.operators``, ``insert_operator``) is
the reference's, and edits follow its rules. An engine made from the
standard table parses with the built-in grammar; one made from an edited
table parses with that table (precedence climbing over its groups, the
first the tightest), so an inserted operator is parsed at its level with
its associativity and calls ``#operator_<symbol>`` (``#unary_operator_``
for a unary one, ``*<alias>`` with an alias), as in the reference:

>>> from muranopl.yaql import create_context
>>> from muranopl.yaql.language import specs
>>> f = YaqlFactory()
>>> f.insert_operator('*', True, '**', OperatorType.BINARY_RIGHT_ASSOCIATIVE,
...                   False)
>>> ctx = create_context()
>>> @specs.name('#operator_**')
... def power(a, b):
...     return a ** b
>>> ctx.register_function(power)
>>> f.create()('2 ** 3 ** 2 + 1').evaluate(context=ctx)
513
"""

import collections

from muranopl import _native
from muranopl import yaql as _yaql

OperatorType = collections.namedtuple('OperatorType', [
    'PREFIX_UNARY', 'SUFFIX_UNARY', 'BINARY_LEFT_ASSOCIATIVE',
    'BINARY_RIGHT_ASSOCIATIVE', 'NAME_VALUE_PAIR'])(
    *('PREFIX_UNARY', 'SUFFIX_UNARY', 'BINARY_LEFT_ASSOCIATIVE',
      'BINARY_RIGHT_ASSOCIATIVE', 'NAME_VALUE_PAIR'))

_L = OperatorType.BINARY_LEFT_ASSOCIATIVE
_PREFIX = OperatorType.PREFIX_UNARY


def _standard_operators():
    """The reference's table, highest precedence first; ``()`` separates
    precedence groups."""
    groups = [
        [('.', _L), ('?.', _L)],
        [('[]', _L), ('{}', _L)],
        [('+', _PREFIX), ('-', _PREFIX)],
        [('=~', _L), ('!~', _L)],
        [('*', _L), ('/', _L), ('mod', _L)],
        [('+', _L), ('-', _L)],
        [('>', _L), ('<', _L), ('>=', _L), ('<=', _L),
         ('!=', _L, 'not_equal'), ('=', _L, 'equal'), ('in', _L)],
        [('not', _PREFIX)],
        [('and', _L)],
        [('or', _L)],
        [('->', OperatorType.BINARY_RIGHT_ASSOCIATIVE)],
    ]
    table = []
    for group in groups:
        if table:
            table.append(())
        table.extend(group)
    return table


class YaqlEngine:
    """A configured engine: call it with an expression to compile it."""

    def __init__(self, legacy, options, operators=None):
        self._options = dict(options or {})
        self._operators = operators
        kwargs = {'legacy': legacy}
        if operators is not None:
            kwargs['operators'] = [
                (t[0], t[1], t[2] if len(t) > 2 else None) if t else None
                for t in operators]
        for key, arg in (('yaql.limitIterators', 'limit_iterators'),
                         ('yaql.memoryQuota', 'memory_quota')):
            value = self._options.get(key)
            if value is not None:
                kwargs[arg] = None if value < 0 else int(value)
        if 'yaql.convertSetsToLists' in self._options:
            kwargs['convert_sets_to_lists'] = bool(
                self._options['yaql.convertSetsToLists'])
        # The reference's yaql 0.2 factory turns the option off.
        kwargs['convert_tuples_to_lists'] = not legacy and bool(
            self._options.get('yaql.convertTuplesToLists', True))
        self._kwargs = kwargs
        self._engine = _native.Engine(**kwargs)

    @property
    def options(self):
        return self._options

    @property
    def legacy(self):
        return self._engine.legacy

    def __call__(self, expression, options=None):
        return _yaql.Expression(self._engine.compile(expression), self,
                                self.legacy, self._mixed_engine,
                                self._engine)

    def _mixed_engine(self):
        """This engine's options and yaql 3 syntax over the yaql 0.2
        library (for legacy contexts)."""
        return _native.Engine(**dict(self._kwargs, legacy=True,
                                     legacy_syntax=False))

    def copy(self, options):
        merged = dict(self._options)
        merged.update(options)
        return YaqlEngine(self.legacy, merged, self._operators)


class YaqlFactory:
    """``YaqlFactory(keyword_operator='=>', allow_delegates=False)``:
    delegates are always allowed.

    >>> f = YaqlFactory()
    >>> f.insert_operator('and', True, '&', OperatorType.BINARY_LEFT_ASSOCIATIVE,
    ...                   True)
    >>> [t[0] if t else '|' for t in f.operators[-8:]]
    ['|', 'and', '|', '&', '|', 'or', '|', '->']
    """

    def __init__(self, keyword_operator='=>', allow_delegates=False):
        self.keyword_operator = keyword_operator
        self.allow_delegates = allow_delegates
        self.operators = _standard_operators()
        if keyword_operator:
            self.operators.insert(
                0, (keyword_operator, OperatorType.NAME_VALUE_PAIR))
        self._standard = list(self.operators)

    legacy = False

    def insert_operator(self, existing_operator, existing_operator_binary,
                        new_operator, new_operator_type, create_group,
                        new_operator_alias=None):
        """Adds ``new_operator`` to the table: in the precedence group
        after ``existing_operator`` (the binary or the unary one), or in
        a group of its own after it with ``create_group``; with no
        existing operator, first. ``ValueError`` when the existing one is
        not in the table."""
        binary = (OperatorType.BINARY_LEFT_ASSOCIATIVE,
                  OperatorType.BINARY_RIGHT_ASSOCIATIVE)
        table = self.operators
        at = 0
        if existing_operator is not None:
            found = [i for i, t in enumerate(table)
                     if len(t) > 1 and t[0] == existing_operator
                     and (t[1] in binary) == bool(existing_operator_binary)
                     and (existing_operator_binary or t[1] in (
                         OperatorType.PREFIX_UNARY,
                         OperatorType.SUFFIX_UNARY))]
            if not found:
                raise ValueError(f'Operator {existing_operator} is not found')
            at = found[0]
            while at < len(table) and len(table[at]) > 1:
                at += 1
        if create_group:
            if at == len(table):
                table.append(())
                at += 1
            else:
                while at < len(table) and len(table[at]) < 2:
                    at += 1
                table.insert(at, ())
        table.insert(at, (new_operator, new_operator_type,
                          new_operator_alias))

    def create(self, options=None):
        """An engine with ``options``; ``InvalidOperatorTableException``
        when the table gives an operator two roles of one kind (or has two
        name-value operators)."""
        table = None
        if self.operators != self._standard:
            table = [tuple(t) for t in self.operators]
        return YaqlEngine(self.legacy, options, table)
