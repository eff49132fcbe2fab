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

import functools
import inspect

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
        # Bumped by every change: what `_bindings` worked out stays valid
        # while no context of the chain changed.
        self._version = 0
        self._bound = None
        self.legacy = legacy if parent_context is None else parent_context.legacy
        if data is not NO_VALUE:
            self['$'] = data

    @property
    def parent(self):
        return self._parent

    def __setitem__(self, name, value):
        self._data[_name(name)] = value
        self._version += 1

    def __getitem__(self, name):
        return self.get_data(name)

    def __delitem__(self, name):
        del self._data[_name(name)]
        self._version += 1

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

    def __call__(self, name, engine=None, receiver=NO_VALUE,
                 data_context=None, use_convention=False,
                 function_filter=None):
        """The YAQL function ``name`` as a Python callable (the
        reference's ``context(name, engine, receiver)``): its arguments
        are passed by position and keyword, ``receiver`` (when given)
        first, as a method call's; a Python callable passed for a lambda
        is called with the lambda's ``$``.

        >>> where = create_context()('where', receiver=[1, 2, 3])
        >>> where(lambda x: x > 1)
        [2, 3]
        """
        def param(var, value):
            # A Python callable stands for a lambda of one argument.
            return f'${var}($)' if callable(value) else f'${var}'

        def call(*args, **kwargs):
            names = {f'_a{i}': a for i, a in enumerate(args)}
            params = [param(n, v) for n, v in names.items()]
            for i, (key, value) in enumerate(kwargs.items()):
                names[f'_k{i}'] = value
                params.append(f'{key} => {param(f"_k{i}", value)}')
            text = f"{name}({', '.join(params)})"
            if receiver is not NO_VALUE:
                names['_r'] = receiver
                text = '$_r.' + text
            expr = engine(text) if callable(engine) else compile(
                text, legacy=self.legacy)
            return expr.evaluate(context=data_context or self, **names)
        return call

    def register_function(self, func, name=None, function=None, method=None,
                          exclusive=False, **kwargs):
        """Makes ``func`` callable from YAQL as ``name(...)``. The name
        defaults to the function's in camelCase (``get_value`` is
        ``getValue``). A plain function takes its arguments as Python
        values, by position and keyword, and is callable as a method too
        (``x.name(...)``, ``x`` first). A function declared with
        :mod:`muranopl.yaql.language.specs` (or taking ``context``,
        ``engine`` or ``yaql_interface``, or registered with ``method``,
        or named as a library function) is called as the reference
        calls it: typed, lazy and injected parameters, its forms, and
        resolution against the library's functions of that name."""
        from muranopl.yaql.language import conventions, specs
        if isinstance(func, specs.FunctionDefinition):
            fd, special = func, True
        else:
            special = _declared(func)
            try:
                fd = specs.get_function_definition(
                    func, name=name, function=function, method=method,
                    convention=conventions.CamelCaseConvention())
            except (TypeError, ValueError, AttributeError):
                # A callable without a signature Python can read (a
                # builtin): plain.
                fd = specs.FunctionDefinition(
                    name or utils.convert_function_name(
                        getattr(func, '__name__', 'f')), func)
        if method and not fd.is_valid_method():
            raise exceptions.InvalidMethodException(fd.name)
        special = special or bool(method or function is False
                                  or exclusive or _injects(fd))
        if not special and _typed(fd):
            fd.payload = _checked(fd)
        self._functions.append((fd.name, fd, special))
        self._version += 1

    def _bindings(self, native=None):
        """``(data, variables, functions, specials)`` of this context and
        its parents, nearest first winning. ``functions``: the plain ones
        (registered under one name more than once: one
        :class:`_Overloads`); ``specials``: for the names called the
        reference's way (see :meth:`register_function`), each context's
        definitions, nearest first, with whether it is the root."""
        chain = []
        ctx = self
        while ctx is not None:
            chain.append(ctx)
            ctx = ctx._parent
        key = (native, tuple((id(c), c._version) for c in chain))
        if self._bound is not None and self._bound[0] == key:
            data, variables, functions, specials = self._bound[1]
            return data, dict(variables), functions, specials
        found = self._bind(chain, native)
        self._bound = (key, found)
        data, variables, functions, specials = found
        return data, dict(variables), functions, specials

    @staticmethod
    def _bind(chain, native):
        variables, layers, special = {}, {}, set()
        for ctx in reversed(chain):
            variables.update(ctx._data)
            mine = {}
            for name, fd, is_special in ctx._functions:
                mine.setdefault(name, []).append(fd)
                if is_special or (native is not None
                                  and native.has_function(name)):
                    special.add(name)
            for name, fds in mine.items():
                layers.setdefault(name, []).insert(
                    0, (fds, ctx._parent is None))
        functions = [
            (name, found[0][0][0].payload
             if len(found) == 1 and len(found[0][0]) == 1
             else _Overloads(name, [[fd.payload for fd in fds]
                                    for fds, _ in found]))
            for name, found in layers.items() if name not in special]
        specials = _Specials({name: layers[name] for name in special})
        data = variables.pop('1', NO_VALUE)
        return data, variables, functions, specials


class _Specials(dict):
    """The names called the reference's way, each with its layers of
    definitions; ``forms``: the ``(name, is_method)`` forms they take."""

    def __init__(self, layers):
        super().__init__(layers)
        self.forms = frozenset(
            (name, method) for name, found in layers.items()
            for fds, _ in found for fd in fds
            for method, on in ((False, fd.is_function), (True, fd.is_method))
            if on)


def _declared(func):
    """Whether ``func`` carries declarations of its own (decorators)."""
    fd = getattr(func, '__yaql_function__', None)
    return fd is not None and bool(
        fd.parameters or fd.name or fd.is_method or fd.no_kwargs or fd.meta
        or not fd.is_function or getattr(fd, 'returns_context', False))


def _typed(fd):
    """The parameters of ``fd`` a type restricts, by name: a default other
    than ``None`` types one, as in the reference (``opts={}`` takes only
    Python dicts, which YAQL's frozen ones are not; ``n=0`` only ints)."""
    from muranopl.yaql.language import yaqltypes
    return {key: p.value_type for key, p in fd.parameters.items()
            if isinstance(p.value_type, yaqltypes.PythonType)
            and p.value_type.python_type is not object}


def _checked(fd):
    """``fd``'s plain function, refusing with
    ``NoMatchingFunctionException`` the arguments its typed parameters do
    not take, as the reference's typed parameters refuse them (a left-out
    argument takes its default, which its type takes). It keeps the
    function's signature, and ``yaql_accepts(args, kwargs)`` lets
    :class:`_Overloads` pass over it for the next function."""
    func, types = fd.payload, _typed(fd)
    sig = _signature(func)

    def accepts(args, kwargs):
        try:
            given = sig.bind(*args, **kwargs).arguments
        except TypeError:
            return True
        return all(types[k].check(v) for k, v in given.items() if k in types)

    @functools.wraps(func)
    def call(*args, **kwargs):
        if not accepts(args, kwargs):
            raise exceptions.NoMatchingFunctionException(fd.name)
        return func(*args, **kwargs)

    call.yaql_accepts = accepts
    return call


def _accepts_all(args, kwargs):
    return True


def _injects(fd):
    from muranopl.yaql.language import yaqltypes
    return any(yaqltypes.is_hidden(p.value_type)
               or yaqltypes.is_lazy(p.value_type)
               for p in fd.parameters.values())


class _Overloads:
    """The functions registered under one name, as the reference resolves
    them: the nearest context that has a function whose parameters take
    the call's arguments wins; two such functions in one context are
    ambiguous."""

    def __init__(self, name, layers):
        self.name = name
        self.layers = [[(f, _signature(f)) for f in layer] for layer in layers]

    def __call__(self, *args, **kwargs):
        for layer in self.layers:
            fits = [f for f, sig in layer if _binds(sig, args, kwargs)
                    and getattr(f, 'yaql_accepts', _accepts_all)(args, kwargs)]
            if len(fits) > 1:
                raise exceptions.AmbiguousFunctionException(self.name)
            if fits:
                return fits[0](*args, **kwargs)
        raise exceptions.NoMatchingFunctionException(self.name)


def _signature(func):
    try:
        return inspect.signature(func)
    except (TypeError, ValueError):
        return None


def _binds(sig, args, kwargs):
    if sig is None:
        return True
    try:
        sig.bind(*args, **kwargs)
    except TypeError:
        return False
    return True


def _call_partial(func, args, skipped, kwargs):
    """Calls ``func`` for ``f(, 1)``: the positional arguments at the
    indices ``skipped`` were left out, so those after a gap go by their
    parameters' names and the function's defaults fill the gaps (called
    by the native module)."""
    sig = _signature(func)
    positional = [] if sig is None else [
        p for p in sig.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    params = [p.name for p in positional]
    name = getattr(func, 'name', None) or getattr(func, '__name__', '?')
    gaps = set(skipped)
    if sig is not None and any(
            i >= len(positional) or positional[i].default is positional[i].empty
            for i in gaps):
        # Only a parameter with a default can be left out (the
        # reference's definitions refuse the call).
        raise exceptions.NoMatchingFunctionException(name)
    positional, named = [], dict(kwargs)
    for i, value in enumerate(args):
        if i < len(params) and i in gaps and params[i] in named:
            # Left out by position and given by name.
            raise exceptions.NoMatchingFunctionException(name)
        if i in gaps:
            continue
        if i < min(gaps):
            positional.append(value)
        elif i < len(params) and params[i] not in named:
            named[params[i]] = value
        else:
            raise exceptions.NoMatchingFunctionException(name)
    return func(*positional, **named)


def _takes_receiver(func):
    """Can ``func`` be called as a method (it takes a first argument)?"""
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD,
                          p.VAR_POSITIONAL) for p in params)


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
    ``$name``. Calling it evaluates it with ``$`` bound to the first
    argument (so it serves as a lambda)."""

    __slots__ = ('_native', 'engine', '_legacy', '_mixed_engine', '_core',
                 '_compiled')

    def __init__(self, native, engine=None, legacy=False, mixed_engine=None,
                 core=None):
        self._native = native
        self.engine = engine
        self._legacy = legacy
        # Makes the engine for a legacy context: this expression's yaql 3
        # syntax over the yaql 0.2 library.
        self._mixed_engine = mixed_engine
        # The native engine that compiled it, and the compilations for
        # contexts with functions called the reference's way or for
        # yaqlized objects, by what they need.
        self._core = core
        self._compiled = {}

    def _in(self, context, specials=None, objects=False):
        """The compiled expression for ``context``: a context made by
        ``legacy.create_context()`` brings the yaql 0.2 library, as the
        reference's legacy contexts do; functions called the reference's
        way (``specials``) and yaqlized objects need an engine that hands
        their calls to Python."""
        mixed = (context is not None and context.legacy and not self._legacy
                 and self._mixed_engine is not None)
        forms = specials.forms if specials else frozenset()
        if self._core is None or not (forms or objects):
            if not mixed:
                return self._native
            forms, objects = frozenset(), False
        key = (mixed, forms, objects)
        found = self._compiled.get(key)
        if found is None:
            core = self._mixed_engine() if mixed else self._core
            if forms or objects:
                core = core.extend(sorted(forms), objects)
            found = self._compiled[key] = core.compile(self.source)
        return found

    @property
    def source(self):
        return self._native.source

    def evaluate(self, data=NO_VALUE, context=None, **variables):
        if context is None:
            if data is NO_VALUE:
                data = None
            if type(data) not in _PLAIN and hasattr(data, '__yaqlization__'):
                return self._in(None, None, True).evaluate(
                    data, variables, None, _dispatch.Dispatcher(
                        {}, self._engine(), None))
            if variables:
                return self._native.evaluate(data, variables)
            return self._native.evaluate(data)
        if isinstance(context, _dispatch.CallContext):
            # The context a called function received: evaluate where the
            # call is.
            return context._evaluate(self.source, data, variables)
        bound, names, functions, specials = context._bindings(self._core)
        # The reference freezes the data it is given (lists into tuples),
        # not a `$` the context holds.
        as_given = data is NO_VALUE
        if as_given:
            data = None if bound is NO_VALUE else bound
        if variables:
            names.update(variables)
        dispatch = _dispatch.Dispatcher(specials, self._engine(), context)
        return self._in(context, specials, True).evaluate(
            data, names, functions, dispatch, as_given)

    def _engine(self):
        return self.engine if self.engine is not None else _Engine(
            self._legacy)

    def evaluate_many(self, items, context=None, return_exceptions=False,
                      **variables):
        """Evaluates once per element of ``items`` (each as ``$``), on
        every core; results in order. The first failure raises, or with
        ``return_exceptions`` each failure takes its item's place.

        >>> compile('$ * 2').evaluate_many([1, 2, 3])
        [2, 4, 6]
        """
        names, functions, native, dispatch = {}, [], self._native, None
        if context is not None:
            _, names, functions, specials = context._bindings(self._core)
            native = self._in(context, specials, True)
            dispatch = _dispatch.Dispatcher(specials, self._engine(), context)
        names.update(variables)
        return native.evaluate_many(items, names, functions,
                                    return_exceptions, dispatch)

    def __call__(self, *args, **variables):
        return self.evaluate(args[0] if args else NO_VALUE, **variables)

    def __repr__(self):
        return f'Expression({self.source!r})'


# Types that are never yaqlized: no attribute lookup for them.
_PLAIN = frozenset((type(None), bool, int, float, str, list, tuple, dict,
                    set, frozenset))


class _Engine:
    """The engine functions receive when the expression was compiled by
    :func:`compile` (not by a factory's engine): calling it compiles."""

    def __init__(self, legacy):
        self.legacy = legacy
        self.options = {}

    def __call__(self, expression, options=None):
        return compile(expression, self.legacy)


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
    def mixed():
        return _native.Engine(legacy=True, legacy_syntax=False,
                              convert_tuples_to_lists=True, **limits)

    core = engine(legacy, **limits)
    return Expression(core.compile(expression), legacy=legacy,
                      mixed_engine=mixed, core=core)


def evaluate(expression, data=NO_VALUE, context=None, legacy=False,
             **variables):
    """Compiles and evaluates ``expression`` over ``data``."""
    return compile(expression, legacy).evaluate(data, context, **variables)


def eval(expression, data=None):
    """The reference's ``yaql.eval``: evaluates over ``data``."""
    return evaluate(expression, data)


from muranopl.yaql import _dispatch  # noqa: E402
from muranopl.yaql import factory  # noqa: E402
from muranopl.yaql import legacy  # noqa: E402
from muranopl.yaql import language  # noqa: E402,F401
from muranopl.yaql import yaqlization  # noqa: E402,F401
