"""YAQL for Python: the whole language and standard library (yaql 3,
and yaql 0.2 with ``legacy=True``), result for result as the reference
``yaql`` package, without its per-element cost.

>>> from muranopl import yaql
>>> yaql.evaluate('$.where($ > 1)', [1, 2, 3])
[2, 3]
>>> expr = yaql.compile('$.select($.name).where($.startsWith($prefix))')
>>> expr.evaluate([{'name': 'alice'}, {'name': 'bob'}], prefix='a')
['alice']

Limits are on by default (an evaluation ends, whatever the expression):
``limit_iterators`` (elements of one collection), ``memory_quota`` (bytes
of one value), ``max_memory`` (bytes one evaluation allocates) and
``timeout`` (seconds); ``None`` lifts one.

>>> yaql.evaluate('sequence().len()')
Traceback (most recent call last):
  ...
muranopl.yaql.exceptions.CollectionTooLargeException: ...
>>> yaql.compile('range(1000).len()', limit_iterators=100).evaluate()
Traceback (most recent call last):
  ...
muranopl.yaql.exceptions.CollectionTooLargeException: ...

Python functions become YAQL functions through a context, and a callable
in the data is a delegate (``$f(x)``); the first exception a callable
raises comes back as that same object:

>>> ctx = yaql.create_context()
>>> ctx.register_function(lambda x: x * 2, name='double')
>>> yaql.evaluate('double($)', 21, context=ctx)
42
>>> yaql.evaluate('$f(2) + $.n', {'n': 10}, f=lambda n: n + 1)
13

Code written for the reference keeps working with one import (see
:mod:`muranopl.yaql.factory`):

>>> import muranopl.yaql as yaql
>>> engine = yaql.factory.YaqlFactory().create()
>>> engine('$.sum()').evaluate(data=[1, 2, 3], context=yaql.create_context())
6

Every object here may be shared between threads; the GIL is released
while the engine runs.
"""

from muranopl import _native
from muranopl.yaql import exceptions
from muranopl.yaql import utils
from muranopl.yaql.utils import NO_VALUE

__all__ = ['compile', 'evaluate', 'eval', 'Expression', 'Context',
           'create_context', 'exceptions', 'factory', 'legacy', 'utils']


def _name(name):
    """A context key without its ``$`` (``$`` itself is ``1``)."""
    name = name[1:] if name.startswith('$') else name
    return name or '1'


class Context:
    """Variables and functions an evaluation sees, as the reference's
    ``yaql.language.contexts.Context``: ``ctx['$x'] = v`` (or
    ``ctx['x']``) binds ``$x``, ``ctx['$']`` is the data, and a child
    context sees its parent's names unless it rebinds them.

    >>> ctx = create_context()
    >>> ctx['limit'] = 2
    >>> child = ctx.create_child_context()
    >>> child['$items'] = [5, 6, 7]
    >>> evaluate('$items.take($limit)', context=child)
    [5, 6]
    >>> 'limit' in child, 'limit' in ctx, child['limit']
    (False, True, 2)
    """

    def __init__(self, parent_context=None, data=NO_VALUE, legacy=False):
        self._parent = parent_context
        self._data = {}
        self._functions = []
        self.legacy = legacy if parent_context is None else parent_context.legacy
        if data is not NO_VALUE:
            self['$'] = data

    @property
    def parent(self):
        return self._parent

    def __setitem__(self, name, value):
        self._data[_name(name)] = value

    def __getitem__(self, name):
        return self.get_data(name)

    def __delitem__(self, name):
        del self._data[_name(name)]

    def __contains__(self, name):
        return isinstance(name, str) and _name(name) in self._data

    def keys(self):
        return ['$' + k for k in self._data]

    def get_data(self, name, default=None, ask_parent=True):
        """The value of ``$name`` here (or in a parent), else ``default``."""
        name = _name(name)
        ctx = self
        while ctx is not None:
            if name in ctx._data:
                return ctx._data[name]
            ctx = ctx._parent if ask_parent else None
        return default

    def create_child_context(self):
        return Context(self)

    def register_function(self, func, name=None, **kwargs):
        """Makes ``func`` callable from YAQL as ``name(...)`` and as a
        method (``x.name(...)``, ``x`` first). The name defaults to the
        function's, in camelCase (``get_value`` is ``getValue``).
        Arguments arrive converted to Python values; the result is
        converted back."""
        definition = getattr(func, '__yaql_function__', None)
        if definition is not None:
            name = name or getattr(definition, 'name', None)
            func = getattr(definition, 'payload', func)
        if name is None:
            name = utils.convert_function_name(func.__name__)
        self._functions.append((name, func))

    def _bindings(self):
        """``(data, variables, functions)`` of this context and its
        parents, nearest first winning."""
        chain = []
        ctx = self
        while ctx is not None:
            chain.append(ctx)
            ctx = ctx._parent
        variables, functions = {}, []
        for ctx in reversed(chain):
            variables.update(ctx._data)
            functions.extend(ctx._functions)
        data = variables.pop('1', NO_VALUE)
        return data, variables, functions


def create_context(data=NO_VALUE, context=None, *args, **kwargs):
    """A new root context (the reference's ``yaql.create_context``; its
    library options are accepted and ignored: the library is the
    engine's), or a child of ``context``."""
    if context is not None:
        ctx = context.create_child_context()
        if data is not NO_VALUE:
            ctx['$'] = data
        return ctx
    return Context(data=data)


class Expression:
    """A compiled expression. ``evaluate`` binds ``$`` to ``data``, the
    context's variables and functions, and ``**variables`` as
    ``$name``."""

    __slots__ = ('_native', 'engine')

    def __init__(self, native, engine=None):
        self._native = native
        self.engine = engine

    @property
    def source(self):
        return self._native.source

    def evaluate(self, data=NO_VALUE, context=None, **variables):
        if context is None:
            if data is NO_VALUE:
                data = None
            if variables:
                return self._native.evaluate(data, variables)
            return self._native.evaluate(data)
        bound, names, functions = context._bindings()
        if data is NO_VALUE:
            data = None if bound is NO_VALUE else bound
        if variables:
            names.update(variables)
        return self._native.evaluate(data, names, functions)

    def evaluate_many(self, items, context=None, return_exceptions=False,
                      **variables):
        """Evaluates once per element of ``items`` (each as ``$``), on
        every core; results in order. The first failure raises, or with
        ``return_exceptions`` each failure takes its item's place.

        >>> compile('$ * 2').evaluate_many([1, 2, 3])
        [2, 4, 6]
        """
        names, functions = {}, []
        if context is not None:
            _, names, functions = context._bindings()
        names.update(variables)
        return self._native.evaluate_many(items, names, functions,
                                          return_exceptions)

    def __repr__(self):
        return f'Expression({self.source!r})'


_DEFAULT = object()


def engine(legacy=False, limit_iterators=_DEFAULT, memory_quota=_DEFAULT,
           max_memory=_DEFAULT, timeout=_DEFAULT):
    """A native engine with these limits (``None`` lifts one; an omitted
    one keeps its default)."""
    given = {k: v for k, v in (('limit_iterators', limit_iterators),
                               ('memory_quota', memory_quota),
                               ('max_memory', max_memory),
                               ('timeout', timeout)) if v is not _DEFAULT}
    if not given:
        return _default_engine(legacy)
    return _native.Engine(legacy=legacy, **given)


def _default_engine(legacy):
    # Built once per interpreter and never changed: two immutable engines
    # (yaql 3 and yaql 0.2) with the default limits.
    cached = _DEFAULT_ENGINES[legacy]
    if cached is None:
        cached = _DEFAULT_ENGINES[legacy] = _native.Engine(legacy=legacy)
    return cached


_DEFAULT_ENGINES = [None, None]


def compile(expression, legacy=False, **limits):
    """Compiles ``expression`` (``legacy``: yaql 0.2 syntax and library).
    A syntax error raises ``YaqlGrammarException`` or
    ``YaqlLexicalException`` with its ``.position``.

    >>> compile('1 +')
    Traceback (most recent call last):
      ...
    muranopl.yaql.exceptions.YaqlGrammarException: ...
    """
    return Expression(engine(legacy, **limits).compile(expression))


def evaluate(expression, data=NO_VALUE, context=None, legacy=False,
             **variables):
    """Compiles and evaluates ``expression`` over ``data``."""
    return compile(expression, legacy).evaluate(data, context, **variables)


def eval(expression, data=None):
    """The reference's ``yaql.eval``: evaluates over ``data``."""
    return evaluate(expression, data)


from muranopl.yaql import factory  # noqa: E402
from muranopl.yaql import legacy  # noqa: E402
