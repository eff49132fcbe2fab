"""Parameter types of functions registered from Python, with the names of
the reference's ``yaql.language.yaqltypes``.

A type decides whether a function takes an argument (``check``) and what
the function receives (``convert``). Most types look at the argument's
value; *lazy* types (``Lambda``, ``MappingRule``, ``YaqlExpression``)
receive the argument unevaluated, as a callable; *constant* types
(``Constant``, ``StringConstant``, ``Keyword``, ``NumericConstant``,
``BooleanConstant``) take only an argument written as a literal; *hidden*
types (``Context``, ``Engine``, ``Delegate``, ``Super``, ``Receiver``,
``YaqlInterface``, ``FunctionDefinition``) take no argument: the call
provides the value.

>>> from muranopl import yaql
>>> from muranopl.yaql.language import specs, yaqltypes
>>> @specs.parameter('s', yaqltypes.String())
... def shout(s):
...     return s.upper()
>>> ctx = yaql.create_context()
>>> ctx.register_function(shout)
>>> yaql.evaluate('shout(abc)', context=ctx)
'ABC'
>>> yaql.evaluate('shout(1)', context=ctx)
Traceback (most recent call last):
  ...
muranopl.yaql.exceptions.NoMatchingFunctionException: ...
"""

import abc
import collections.abc
import datetime
import re

from muranopl.yaql import exceptions
from muranopl.yaql import utils

_IDENTIFIER = re.compile(r'^[A-Za-z_][A-Za-z0-9_]*$')


class HiddenParameterType(metaclass=abc.ABCMeta):
    """A parameter the call fills in (no argument is bound to it)."""

    __slots__ = ()

    def check(self, value, context=None, engine=None, *args, **kwargs):
        return True


class LazyParameterType(metaclass=abc.ABCMeta):
    """A parameter that takes its argument unevaluated."""

    __slots__ = ()


class SmartType(metaclass=abc.ABCMeta):
    """The base of every parameter type: ``nullable`` says whether null
    is accepted."""

    __slots__ = ('nullable',)

    def __init__(self, nullable):
        self.nullable = nullable

    def check(self, value, context=None, engine=None, *args, **kwargs):
        return value is not None or self.nullable

    def convert(self, value, receiver, context, function_spec, engine,
                *args, **kwargs):
        if not self.check(value, context, engine):
            raise exceptions.ArgumentValueException()
        return value

    def is_specialization_of(self, other):
        return False


class GenericType(SmartType):
    """A type made of a ``checker(value, context)`` and a
    ``converter(value, receiver, context, function_spec, engine)``."""

    __slots__ = ('checker', 'converter')

    def __init__(self, nullable, checker=None, converter=None):
        super().__init__(nullable)
        self.checker = checker
        self.converter = converter

    def check(self, value, context=None, engine=None, *args, **kwargs):
        if value is None:
            return self.nullable
        return self.checker is None or bool(
            self.checker(value, context, *args, **kwargs))

    def convert(self, value, receiver, context, function_spec, engine,
                *args, **kwargs):
        value = super().convert(value, receiver, context, function_spec,
                                engine)
        if value is None or self.converter is None:
            return value
        return self.converter(value, receiver, context, function_spec,
                              engine, *args, **kwargs)


def _not_bool(value):
    return not isinstance(value, bool)


# What a YAQL dictionary is to the reference's type checks: a frozen
# mapping (its input data and `{...}`/`dict()` results are `FrozenDict`s),
# never a `dict`. An immutable instance, only read.
_YAQL_DICT = utils.FrozenDict()


class PythonType(GenericType):
    """Values of the Python type(s) ``python_type`` (a bool is not an
    ``int`` here, as in the reference), each passing ``validators``. A
    YAQL dictionary is checked as the reference's frozen one: ``dict``
    refuses it, ``Mapping`` takes it."""

    __slots__ = ('python_type', 'validators')

    def __init__(self, python_type, nullable=True, validators=None):
        self.python_type = python_type
        if validators is None:
            validators = []
        elif not isinstance(validators, (list, tuple)):
            validators = [validators]
        self.validators = list(validators)
        super().__init__(nullable, self._accepts)

    def _accepts(self, value, context=None, *args, **kwargs):
        probe = _YAQL_DICT if type(value) is dict else value
        return isinstance(probe, self.python_type) and all(
            v(value) for v in self.validators)

    def is_specialization_of(self, other):
        if not isinstance(other, PythonType):
            return False
        mine, theirs = self.python_type, other.python_type
        if isinstance(mine, tuple) or isinstance(theirs, tuple):
            return False
        return issubclass(mine, theirs) and not issubclass(theirs, mine)


class MappingRule(LazyParameterType, SmartType):
    """A ``key => value`` argument, both sides unevaluated: the function
    receives a :class:`utils.MappingRule` of two callables."""

    __slots__ = ()

    def __init__(self):
        super().__init__(False)


class String(PythonType):
    """Strings."""

    __slots__ = ()

    def __init__(self, nullable=False):
        super().__init__(str, nullable)


class Integer(PythonType):
    """Integers (not booleans)."""

    __slots__ = ()

    def __init__(self, nullable=False):
        super().__init__(int, nullable, _not_bool)


class DateTime(PythonType):
    """Datetimes (a naive one is UTC)."""

    __slots__ = ()

    def __init__(self, nullable=False):
        super().__init__(datetime.datetime, nullable)

    def convert(self, value, *args, **kwargs):
        if isinstance(value, datetime.datetime) and value.tzinfo is None:
            value = value.replace(tzinfo=datetime.timezone.utc)
        return super().convert(value, *args, **kwargs)


def _iterable(value):
    return utils.is_iterable(value)


class Iterable(PythonType):
    """Collections other than strings and dictionaries."""

    __slots__ = ()

    def __init__(self, validators=None, nullable=False):
        super().__init__(collections.abc.Iterable, nullable,
                         [_iterable] + _as_list(validators))


class Iterator(Iterable):
    """Like :class:`Iterable`; the function receives an iterator."""

    __slots__ = ()

    def convert(self, value, *args, **kwargs):
        value = super().convert(value, *args, **kwargs)
        return None if value is None else iter(value)


class Sequence(PythonType):
    """Lists and tuples."""

    __slots__ = ()

    def __init__(self, validators=None, nullable=False):
        super().__init__(collections.abc.Sequence, nullable,
                         [lambda v: not isinstance(v, (str, bytes))]
                         + _as_list(validators))


def _as_list(validators):
    if validators is None:
        return []
    if isinstance(validators, (list, tuple)):
        return list(validators)
    return [validators]


class Number(PythonType):
    """Integers and floats (not booleans)."""

    __slots__ = ()

    def __init__(self, nullable=False):
        super().__init__((int, float), nullable, _not_bool)


class Lambda(LazyParameterType, SmartType):
    """The argument unevaluated: the function receives a callable that
    evaluates it, its arguments bound to ``$1``, ``$2``, ... (``$`` the
    first) and its keyword arguments to ``$name``. ``with_context``: the
    callable's first argument is a context, where the lambda runs (the
    variables set in it are the lambda's).
    ``method``: the receiver is the callable's first argument."""

    __slots__ = ('with_context', 'method')

    def __init__(self, with_context=False, method=False):
        super().__init__(True)
        self.with_context = with_context
        self.method = method

    def convert(self, value, receiver, context, function_spec, engine,
                *args, **kwargs):
        if value is None:
            return None
        if not callable(value):
            return lambda *a, **k: value
        if not self.with_context and not self.method:
            return value
        with_context, method = self.with_context, self.method

        def call(*a, **k):
            if with_context and a:
                # The lambda runs in the context given: what the function
                # set there (`ctx['$x'] = ...`) is its `$x`, its `$` the
                # context's unless arguments are given.
                from muranopl.yaql import _dispatch
                names = _dispatch.context_variables(a[0])
                a = a[1:]
                data = names.pop('1', utils.NO_VALUE)
                if not a and data is not utils.NO_VALUE:
                    a = (data,)
                k = {**names, **k}
            if method and receiver is not utils.NO_VALUE:
                a = (receiver,) + a
            return value(*a, **k)
        return call


class Super(HiddenParameterType, SmartType):
    """The function this one hides: a callable running the call as the
    contexts further out (and the library) would."""

    __slots__ = ('with_context', 'method', 'with_name')

    def __init__(self, with_context=False, method=None, with_name=False):
        super().__init__(False)
        self.with_context = with_context
        self.method = method
        self.with_name = with_name


class Context(HiddenParameterType, SmartType):
    """The context of the call (``context['$x']``, ``context('f')``)."""

    __slots__ = ()

    def __init__(self):
        super().__init__(False)


class Delegate(HiddenParameterType, SmartType):
    """A callable calling a YAQL function from the call's context: the
    function ``name``, or the one named by its first argument."""

    __slots__ = ('name', 'with_context', 'method', 'use_convention')

    def __init__(self, name=None, with_context=False, method=False,
                 use_convention=True):
        super().__init__(False)
        self.name = name
        self.with_context = with_context
        self.method = method
        self.use_convention = use_convention


class Receiver(HiddenParameterType, SmartType):
    """The receiver of a method call."""

    __slots__ = ()

    def __init__(self):
        super().__init__(False)


class Engine(HiddenParameterType, SmartType):
    """The engine evaluating the call."""

    __slots__ = ()

    def __init__(self):
        super().__init__(False)


class FunctionDefinition(HiddenParameterType, SmartType):
    """The called function's own definition."""

    __slots__ = ()

    def __init__(self):
        super().__init__(False)


class Constant(SmartType):
    """An argument written as a literal (``qw``, ``'a b'``, ``12``,
    ``true``, ``null``); the function receives its value."""

    __slots__ = ('expand',)

    def __init__(self, nullable, expand=True):
        super().__init__(nullable)
        self.expand = expand

    def check_constant(self, value):
        return self.check(value, None, None)


class YaqlExpression(LazyParameterType, SmartType):
    """The argument unevaluated, as a callable (the reference passes its
    expression object)."""

    __slots__ = ('expression_type',)

    def __init__(self, expression_type=None):
        super().__init__(False)
        self.expression_type = expression_type


class StringConstant(Constant):
    """A string literal or a keyword (``abc``, ``'a b'``)."""

    __slots__ = ()

    def __init__(self, nullable=False):
        super().__init__(nullable)

    def check(self, value, context=None, *args, **kwargs):
        return super().check(value, context) and (
            value is None or isinstance(value, str))


class Keyword(Constant):
    """A bare keyword (``abc``)."""

    __slots__ = ()

    def __init__(self, expand=True):
        super().__init__(False, expand)

    def check(self, value, context=None, *args, **kwargs):
        return isinstance(value, str) and bool(_IDENTIFIER.match(value))


class BooleanConstant(Constant):
    """``true`` or ``false``."""

    __slots__ = ()

    def __init__(self, nullable=False, expand=True):
        super().__init__(nullable, expand)

    def check(self, value, context=None, *args, **kwargs):
        return super().check(value, context) and (
            value is None or isinstance(value, bool))


class NumericConstant(Constant):
    """A number literal."""

    __slots__ = ()

    def __init__(self, nullable=False, expand=True):
        super().__init__(nullable, expand)

    def check(self, value, context=None, *args, **kwargs):
        return super().check(value, context) and (
            value is None or isinstance(value, (int, float))
            and not isinstance(value, bool))


def _smart(t, nullable=True):
    """A Python type (or tuple of them) as a :class:`SmartType`."""
    if isinstance(t, SmartType):
        return t
    return PythonType(t, nullable)


class SmartTypeAggregation(SmartType, metaclass=abc.ABCMeta):
    """A type made of other types (Python types become
    :class:`PythonType`)."""

    __slots__ = ('types',)

    def __init__(self, *args, **kwargs):
        super().__init__(kwargs.pop('nullable', False))
        self.types = [_smart(t, self.nullable) for t in args]


class AnyOf(SmartTypeAggregation):
    """A value of any of the types; the first that takes it converts it."""

    __slots__ = ()

    def check(self, value, context=None, engine=None, *args, **kwargs):
        if value is None:
            return self.nullable or any(
                t.check(None, context, engine) for t in self.types)
        return any(t.check(value, context, engine) for t in self.types)

    def convert(self, value, receiver, context, function_spec, engine,
                *args, **kwargs):
        for t in self.types:
            if t.check(value, context, engine):
                return t.convert(value, receiver, context, function_spec,
                                 engine)
        raise exceptions.ArgumentValueException()


class Chain(SmartTypeAggregation):
    """A value every type takes, converted by each in turn."""

    __slots__ = ()

    def check(self, value, context=None, engine=None, *args, **kwargs):
        if value is None and not self.nullable:
            return False
        return all(t.check(value, context, engine) for t in self.types)

    def convert(self, value, receiver, context, function_spec, engine,
                *args, **kwargs):
        for t in self.types:
            value = t.convert(value, receiver, context, function_spec,
                              engine)
        return value


class NotOfType(SmartType):
    """A value ``smart_type`` does not take."""

    __slots__ = ('smart_type',)

    def __init__(self, smart_type, nullable=True):
        super().__init__(nullable)
        self.smart_type = _smart(smart_type, nullable=False)

    def check(self, value, context=None, engine=None, *args, **kwargs):
        if value is None:
            return self.nullable
        return not self.smart_type.check(value, context, engine)


class YaqlInterface(HiddenParameterType, SmartType):
    """A :class:`muranopl.yaql.yaql_interface.YaqlInterface` on the call's
    context: evaluate expressions and call functions from Python."""

    __slots__ = ()

    def __init__(self):
        super().__init__(False)


def is_lazy(value_type):
    return isinstance(value_type, LazyParameterType)


def is_hidden(value_type):
    return isinstance(value_type, HiddenParameterType)


def is_constant(value_type):
    return isinstance(value_type, Constant)
