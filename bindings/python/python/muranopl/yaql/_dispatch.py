"""Calls of Python functions registered the reference's way, and of
yaqlized objects (the Python half of the native module's ``funcs``).

An evaluation whose context has functions with
:mod:`~muranopl.yaql.language.specs` definitions passes a
:class:`Dispatcher`; the engine hands it every call of those names with
the arguments unevaluated (``_native.Arg``) and where the call happens
(``_native.Caller``). The dispatcher resolves the call as the reference's
runner does: the contexts from the nearest out, in each the functions
whose parameters take the arguments (by position and name, then by the
arguments' values), ambiguity when two of one context do (or when the
laziness of an argument differs between candidates), and the library
last. It evaluates each argument at most once and calls the function
once.
"""

import types

from muranopl import _native
from muranopl.yaql import exceptions
from muranopl.yaql import utils
from muranopl.yaql.language import specs
from muranopl.yaql.language import yaqltypes

_DEFAULT = utils.create_marker('<default>')
_FAIL = utils.create_marker('<no match>')


class _Arg:
    """One argument: a native unevaluated one, or a Python value (a call
    from Python), evaluated at most once."""

    __slots__ = ('raw', '_value')

    def __init__(self, raw):
        self.raw = raw
        self._value = _FAIL

    @property
    def native(self):
        return isinstance(self.raw, _native.Arg)

    def value(self):
        if self._value is _FAIL:
            self._value = self.raw.value() if self.native else self.raw
        return self._value

    def lazy(self):
        """The argument as a callable that evaluates it."""
        if self.native:
            return self.raw
        raw = self.raw
        return raw if callable(raw) else (lambda *a, **k: raw)

    def rule(self):
        """A mapping rule's ``(source, destination)`` as callables that
        evaluate them, or ``None``."""
        if not self.native:
            return None
        sides = self.raw.pair()
        return None if sides is None else sides

    def constant(self):
        if not self.native:
            return True, self.raw
        ok, value = self.raw.constant()
        if ok and self.value() != value:
            return False, None
        return ok, value


_VALUE, _LAZY, _CONSTANT, _RULE, _OTHER = (
    'value', 'lazy', 'constant', 'rule', 'other')
_PLAIN_CONVERT = yaqltypes.GenericType.convert


def _kind(t):
    """How a parameter of type ``t`` takes its argument."""
    if isinstance(t, yaqltypes.MappingRule):
        return _RULE
    if yaqltypes.is_hidden(t):
        return _OTHER
    if yaqltypes.is_lazy(t):
        return _LAZY
    if yaqltypes.is_constant(t):
        return _CONSTANT
    return _VALUE


class _Plan:
    """What binding arguments to a definition needs, worked out once per
    definition and evaluation."""

    __slots__ = ('fd', 'visible', 'keyword', 'star', 'dstar', 'positional',
                 'kwonly')

    def __init__(self, fd):
        self.fd = fd
        params = fd.parameters
        ordered = sorted((p.position, k) for k, p in params.items()
                         if p.position is not None and k != '*')
        # (key, alias, required, lazy) of the parameters arguments bind
        # to by position, in order, and of the keyword-only ones.
        self.visible = [
            (k, params[k].alias or params[k].name,
             params[k].default is specs.NO_DEFAULT,
             yaqltypes.is_lazy(params[k].value_type))
            for _, k in ordered
            if not yaqltypes.is_hidden(params[k].value_type)]
        self.keyword = [
            (k, p.alias or p.name, p.default is specs.NO_DEFAULT,
             yaqltypes.is_lazy(p.value_type))
            for k, p in params.items()
            if p.position is None and k != '**'
            and not yaqltypes.is_hidden(p.value_type)]
        self.star = params.get('*')
        self.dstar = params.get('**')
        # What the payload takes, in order: (key, parameter).
        self.positional = [(k, params[k]) for _, k in ordered]
        self.kwonly = [(k, p) for k, p in params.items()
                       if p.position is None and k != '**']


class _KeywordRule(_Arg):
    """``name => value`` given to a function that takes no keyword
    arguments: a mapping rule whose source is the name."""

    __slots__ = ('name',)

    def __init__(self, name, arg):
        super().__init__(arg.raw)
        self.name = name

    @property
    def native(self):
        return False

    def value(self):
        return utils.MappingRule(self.name, _Arg(self.raw).value())

    def rule(self):
        name = self.name
        return (lambda: name), _Arg(self.raw).lazy()


class _Mapping:
    """How one function's parameters take a call's arguments."""

    __slots__ = ('plan', 'fd', 'bound', 'extra', 'extra_kw', 'lazy')

    def __init__(self, plan, bound, extra, extra_kw, lazy):
        self.plan = plan
        self.fd = plan.fd
        self.bound = bound          # parameter key -> _Arg or _DEFAULT
        self.extra = extra          # [_Arg] for *args
        self.extra_kw = extra_kw    # {name: _Arg} for **kwargs
        self.lazy = lazy            # positions and names taken lazily


def map_args(plan, args, kwargs):
    """A :class:`_Mapping` of ``args`` (``_Arg``) and ``kwargs`` onto the
    parameters of ``plan``'s definition, or ``None`` when they do not
    fit."""
    rest = dict(kwargs) if kwargs else {}
    bound, lazy = {}, set()
    nargs = len(args)
    for i, (key, alias, required, is_lazy) in enumerate(plan.visible):
        if i < nargs:
            if alias in rest:
                return None
            bound[key] = args[i]
            if is_lazy:
                lazy.add(i)
        elif alias in rest:
            bound[key] = rest.pop(alias)
            if is_lazy:
                lazy.add(alias)
        elif required:
            return None
        else:
            bound[key] = _DEFAULT
    extra = args[len(plan.visible):]
    if extra:
        if plan.star is None:
            return None
        if yaqltypes.is_lazy(plan.star.value_type):
            lazy.update(range(len(plan.visible), nargs))
    for key, alias, required, is_lazy in plan.keyword:
        if alias in rest:
            bound[key] = rest.pop(alias)
            if is_lazy:
                lazy.add(alias)
        elif required:
            return None
        else:
            bound[key] = _DEFAULT
    if rest:
        if plan.dstar is None:
            return None
        if yaqltypes.is_lazy(plan.dstar.value_type):
            lazy.update(rest)
    return _Mapping(plan, bound, list(extra), rest, frozenset(lazy))


class _Call:
    """One call being resolved."""

    def __init__(self, dispatcher, name, method, args, kwargs, caller,
                 receiver):
        self.d = dispatcher
        self.name = name
        self.method = method
        self.args = args
        self.kwargs = kwargs
        self.caller = caller
        self.receiver = receiver
        self._context = None

    @property
    def context(self):
        if self._context is None:
            self._context = CallContext(self.caller, self.d)
        return self._context

    def ambiguous(self):
        if self.method:
            return exceptions.AmbiguousMethodException(self.name,
                                                       self.receiver)
        return exceptions.AmbiguousFunctionException(self.name)

    def no_match(self):
        if self.method:
            return exceptions.NoMatchingMethodException(self.name,
                                                        self.receiver)
        return exceptions.NoMatchingFunctionException(self.name)

    def hidden(self, t, fd, depth):
        """The value a hidden parameter of type ``t`` receives."""
        if isinstance(t, yaqltypes.Context):
            return self.context
        if isinstance(t, yaqltypes.Engine):
            return self.d.engine
        if isinstance(t, yaqltypes.Receiver):
            return self.receiver
        if isinstance(t, yaqltypes.FunctionDefinition):
            return fd
        if isinstance(t, yaqltypes.YaqlInterface):
            from muranopl.yaql.yaql_interface import YaqlInterface
            return YaqlInterface(self.context, self.d.engine, self.receiver)
        if isinstance(t, yaqltypes.Super):
            return self.super_(t, depth)
        if isinstance(t, yaqltypes.Delegate):
            return self.delegate(t)
        return t.convert(None, self.receiver, self.context, fd, self.d.engine)

    def super_(self, t, depth):
        name, method = self.name, self.method

        def call(*args, **kwargs):
            if t.with_context and args:
                args = args[1:]
            found, value = self.d.resolve(
                name, method, [_Arg(a) for a in args],
                {k: _Arg(v) for k, v in kwargs.items()}, self.caller,
                depth + 1)
            if found:
                return value
            return self.caller.call(name, method, list(args), kwargs,
                                    library=True)
        return call

    def delegate(self, t):
        caller = self.caller

        def call(*args, **kwargs):
            if t.with_context and args:
                args = args[1:]
            name = t.name
            if name is None:
                name, args = args[0], args[1:]
            return caller.call(name, t.method, list(args), kwargs)
        return call

    def argument(self, p, arg):
        """What parameter ``p`` receives for ``arg``, or ``_FAIL``."""
        if arg is _DEFAULT:
            return p.default
        t = p.value_type
        kind = self.d.kind(t)
        try:
            if kind is _VALUE:
                value = arg.value()
                if not t.check(value, self.context, self.d.engine):
                    return _FAIL
                if type(t).convert is _PLAIN_CONVERT and \
                        getattr(t, 'converter', None) is None:
                    return value
                return t.convert(value, self.receiver, self.context, None,
                                 self.d.engine)
            if kind is _LAZY:
                return t.convert(arg.lazy(), self.receiver, self.context,
                                 None, self.d.engine)
            if kind is _CONSTANT:
                ok, value = arg.constant()
                if not ok or not t.check(value, self.context, self.d.engine):
                    return _FAIL
                return value
            if kind is _RULE:
                sides = arg.rule()
                if sides is None:
                    return _FAIL
                return utils.MappingRule(*sides)
            return _FAIL
        except exceptions.ArgumentValueException:
            return _FAIL

    def prepare(self, m, depth):
        """The payload's ``(args, kwargs)`` for mapping ``m``, or
        ``None`` when an argument's value does not fit."""
        fd, plan = m.fd, m.plan
        args, kwargs = [], {}
        for key, p in plan.positional:
            t = p.value_type
            if yaqltypes.is_hidden(t):
                args.append(self.hidden(t, fd, depth))
                continue
            v = self.argument(p, m.bound[key])
            if v is _FAIL:
                return None
            args.append(v)
        for a in m.extra:
            v = self.argument(plan.star, a)
            if v is _FAIL:
                return None
            args.append(v)
        for key, p in plan.kwonly:
            if yaqltypes.is_hidden(p.value_type):
                kwargs[p.name] = self.hidden(p.value_type, fd, depth)
                continue
            v = self.argument(p, m.bound[key])
            if v is _FAIL:
                return None
            kwargs[p.name] = v
        for k, a in m.extra_kw.items():
            v = self.argument(plan.dstar, a)
            if v is _FAIL:
                return None
            kwargs[k] = v
        return args, kwargs


def _specializes(m1, m2):
    """Whether mapping ``m1``'s parameter types are narrower than
    ``m2``'s (the reference's tie-break between two candidates)."""
    res = False
    for key, a1 in m1.bound.items():
        if key not in m2.bound:
            continue
        t1 = m1.fd.parameters[key].value_type
        t2 = m2.fd.parameters[key].value_type
        if t2.is_specialization_of(t1):
            return False
        if t1.is_specialization_of(t2):
            res = True
    return res


class Dispatcher:
    """The Python functions of one evaluation's context, by name: for
    each name, the contexts' definitions nearest first (``layers``: a
    list of ``(definitions, is_root)``); the library is outside them
    all."""

    def __init__(self, layers, engine, context):
        self.layers = layers
        self.engine = engine
        self.context = context
        # Worked out once per evaluation: each definition's plan, and the
        # library's laziness per call shape.
        self._plans = {}
        self._laziness = {}
        self._kinds = {}

    def kind(self, t):
        """:func:`_kind` of ``t``, by its class."""
        found = self._kinds.get(type(t))
        if found is None:
            found = self._kinds[type(t)] = _kind(t)
        return found

    def plan(self, fd):
        found = self._plans.get(id(fd))
        if found is None or found.fd is not fd:
            found = self._plans[id(fd)] = _Plan(fd)
        return found

    def library_laziness(self, caller, name, method, npos, kwargs):
        key = (name, method, npos, tuple(kwargs))
        found = self._laziness.get(key)
        if found is None:
            found = self._laziness[key] = [
                (frozenset(positions) | frozenset(names), no_kw)
                for positions, names, no_kw in caller.library_laziness(
                    name, method, npos, list(kwargs))]
        return found

    def call(self, name, method, args, kwargs, caller):
        """Called by the engine: ``(True, result)``, or ``(False, None)``
        for the library to run the call."""
        args = [_Arg(a) for a in args]
        kwargs = {k: _Arg(v) for k, v in kwargs.items()}
        return self.resolve(name, method, args, kwargs, caller, 0)

    def resolve(self, name, method, args, kwargs, caller, start):
        layers = self.layers.get(name, ())
        receiver = args[0].value() if method and args else utils.NO_VALUE
        call = _Call(self, name, method, args, kwargs, caller, receiver)
        found = False
        levels, lazy = [], None
        for depth, (layer, _) in enumerate(layers):
            if depth < start:
                continue
            level = []
            for fd in layer:
                if not (fd.is_method if method else fd.is_function):
                    continue
                found = True
                if fd.no_kwargs:
                    # Keyword arguments are mapping rules, after the
                    # positional ones.
                    m = map_args(self.plan(fd), args + [
                        _KeywordRule(k, a) for k, a in kwargs.items()], {})
                elif any(a.native and a.raw.is_mapping() for a in args):
                    # `f(2 + 2 => 4)`: a mapping whose key is not a name
                    # cannot be a keyword argument of a Python function.
                    raise exceptions.MappingTranslationException()
                else:
                    m = map_args(self.plan(fd), args, kwargs)
                if m is None:
                    continue
                if lazy is None:
                    lazy = m.lazy
                elif lazy != m.lazy:
                    raise call.ambiguous()
                level.append(m)
            if level:
                levels.append((depth, level))
        if levels and caller is not None:
            # The library is the outermost layer: its overloads that take
            # these arguments must agree on what is lazy.
            for lib_lazy, no_kw in self.library_laziness(
                    caller, name, method, len(args), kwargs):
                if no_kw and kwargs:
                    continue
                if lib_lazy != lazy:
                    raise call.ambiguous()
        for depth, level in levels:
            winner, prepared = None, None
            for m in level:
                ready = call.prepare(m, depth)
                if ready is None:
                    continue
                if winner is not None:
                    if _specializes(winner, m):
                        continue
                    if not _specializes(m, winner):
                        raise call.ambiguous()
                winner, prepared = m, ready
            if winner is None:
                continue
            result = winner.fd.payload(*prepared[0], **prepared[1])
            if winner.fd.returns_context:
                result = _value_of(result)
            return True, result
        if found and not self._library_takes(call):
            raise call.no_match()
        return False, None

    def _library_takes(self, call):
        """Whether a library function may take the call (judged on the
        arguments evaluated so far)."""
        if call.kwargs:
            return call.caller.library_has(call.name, call.method,
                                           [None] * len(call.args),
                                           [False] * len(call.args))
        values = [a._value for a in call.args]
        known = [v is not _FAIL for v in values]
        return call.caller.library_has(
            call.name, call.method,
            [v if k else None for v, k in zip(values, known)], known)

    # Yaqlized objects.

    def attr(self, obj, name, caller):
        from muranopl.yaql import yaqlization
        return yaqlization.get_attribute(obj, name)

    def index(self, obj, key, caller):
        from muranopl.yaql import yaqlization
        return yaqlization.get_item(obj, key.value())

    def method(self, obj, name, args, kwargs, caller):
        from muranopl.yaql import yaqlization
        args = [a.value() for a in args]
        kwargs = {k: v.value() for k, v in kwargs.items()}
        return yaqlization.call_method(obj, name, args, kwargs)


def call_definition(fd, engine, context, receiver, args, kwargs):
    """Runs definition ``fd`` with Python arguments (the reference's
    ``FunctionDefinition.__call__``), outside any evaluation."""
    d = Dispatcher({}, engine, context)
    call = _Call(d, fd.name, receiver is not utils.NO_VALUE, (), {},
                 None, receiver)
    call._context = context
    m = map_args(d.plan(fd), [_Arg(a) for a in args],
                 {k: _Arg(v) for k, v in kwargs.items()})
    prepared = None if m is None else call.prepare(m, 0)
    if prepared is None:
        raise exceptions.NoMatchingFunctionException(fd.name)
    result = fd.payload(*prepared[0], **prepared[1])
    return _value_of(result) if fd.returns_context else result


def _value_of(result):
    """The value of a ``returns_context`` function's result, as the
    pre-1.0 yaql that had the flag reads it: ``(value, context)``, or a
    generator whose first item is the context and the rest the value."""
    if isinstance(result, types.GeneratorType):
        next(result)
        return result
    value, _context = result
    return value


def context_variables(ctx):
    """The variables (names without ``$``; ``1`` is ``$``) a called
    function set in ``ctx`` and the contexts it made ``ctx`` from: what
    the reference's evaluation in ``ctx`` sees beyond the call's own."""
    chain = []
    while isinstance(ctx, CallContext):
        chain.append(ctx)
        ctx = ctx._parent
    names = {}
    for c in reversed(chain):
        names.update(c._data)
    return names


class CallContext:
    """The context a called function receives: reads ``$`` and the
    variables where the call happens (then the evaluation's context),
    keeps what the function sets, and calls YAQL functions from there
    (``context('name', engine)(args)``)."""

    def __init__(self, caller, dispatcher, parent=None):
        self._caller = caller
        self._dispatcher = dispatcher
        self._parent = parent
        self._data = {}

    @property
    def parent(self):
        return self._parent if self._parent is not None \
            else self._dispatcher.context

    def _key(self, name):
        name = name[1:] if name.startswith('$') else name
        return name or '1'

    def get_data(self, name, default=None, ask_parent=True):
        key = self._key(name)
        if key in self._data:
            return self._data[key]
        if not ask_parent:
            return default
        if self._parent is not None:
            return self._parent.get_data(name, default)
        found, value = self._caller.var(key)
        if found:
            return value
        ctx = self._dispatcher.context
        if ctx is not None:
            return ctx.get_data(name, default)
        return default

    def __getitem__(self, name):
        return self.get_data(name)

    def __setitem__(self, name, value):
        self._data[self._key(name)] = value

    def __delitem__(self, name):
        del self._data[self._key(name)]

    def __contains__(self, name):
        key = self._key(name)
        if key in self._data:
            return True
        found, _ = self._caller.var(key)
        return found

    def keys(self):
        return ['$' + k for k in self._data]

    def create_child_context(self):
        return CallContext(self._caller, self._dispatcher, self)

    def __call__(self, name, engine=None, receiver=utils.NO_VALUE,
                 data_context=None, use_convention=False,
                 function_filter=None):
        caller = self._caller

        def call(*args, **kwargs):
            method = receiver is not utils.NO_VALUE
            if method:
                args = (receiver,) + args
            return caller.call(name, method, list(args), kwargs)
        return call

    def _evaluate(self, source, data, variables):
        """Evaluates ``source`` where the call is, with what this context
        set, ``$`` bound to ``data`` (when given) and ``variables``."""
        names = context_variables(self)
        names.update(variables)
        if data is utils.NO_VALUE:
            data = names.pop('1', utils.NO_VALUE)
        return self._caller.eval(
            source, None if data is utils.NO_VALUE else data, names)

    def register_function(self, *args, **kwargs):
        raise NotImplementedError(
            'functions are registered before the evaluation here')
