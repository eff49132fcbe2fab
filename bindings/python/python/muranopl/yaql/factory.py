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
(``yaql.convertTuplesToLists`` and ``yaql.convertInputData`` are accepted:
the results are lists either way).
"""

from muranopl import _native
from muranopl import yaql as _yaql


class YaqlEngine:
    """A configured engine: call it with an expression to compile it."""

    def __init__(self, legacy, options):
        self._options = dict(options or {})
        kwargs = {'legacy': legacy}
        for key, arg in (('yaql.limitIterators', 'limit_iterators'),
                         ('yaql.memoryQuota', 'memory_quota')):
            value = self._options.get(key)
            if value is not None:
                kwargs[arg] = None if value < 0 else int(value)
        if 'yaql.convertSetsToLists' in self._options:
            kwargs['convert_sets_to_lists'] = bool(
                self._options['yaql.convertSetsToLists'])
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
        return YaqlEngine(self.legacy, merged)


class YaqlFactory:
    """``YaqlFactory(keyword_operator='=>', allow_delegates=False)``: the
    operator table is the reference's; delegates are always allowed."""

    def __init__(self, keyword_operator='=>', allow_delegates=False):
        self.keyword_operator = keyword_operator
        self.allow_delegates = allow_delegates

    legacy = False

    def create(self, options=None):
        return YaqlEngine(self.legacy, options)
