"""Function definitions and the decorators that declare them, with the
names of the reference's ``yaql.language.specs``.

A Python function registered in a context is described by a
:class:`FunctionDefinition`: its YAQL name, whether it is called as a
function (``f(x)``), a method (``x.f()``) or both, and one
:class:`ParameterDefinition` per parameter, each with a type from
:mod:`muranopl.yaql.language.yaqltypes`. The decorators build it on the
function (``func.__yaql_function__``); ``register_function`` completes it
from the signature: a parameter named ``context``, ``engine`` or
``yaql_interface`` receives that object, any other takes a value (of the
default's type when it has a default).

>>> from muranopl import yaql
>>> from muranopl.yaql.language import specs, yaqltypes
>>> @specs.parameter('n', yaqltypes.Integer())
... @specs.method
... def twice(n):
...     return 2 * n
>>> ctx = yaql.create_context()
>>> ctx.register_function(twice)
>>> yaql.evaluate('21.twice()', context=ctx)
42
"""

import inspect

from muranopl.yaql import exceptions
from muranopl.yaql import utils
from muranopl.yaql.language import yaqltypes

NO_DEFAULT = utils.create_marker('<NoValue>')


class ParameterDefinition:
    """One parameter: its Python ``name``, type, ``position`` among the
    positional parameters (``None`` for keyword-only and ``**``), the
    name YAQL code gives it (``alias``) and its ``default``."""

    __slots__ = ('value_type', 'name', 'position', 'default', 'alias')

    def __init__(self, name, value_type=None, position=None, alias=None,
                 default=None):
        self.value_type = value_type
        self.name = name
        self.position = position
        self.default = default
        self.alias = alias

    def __repr__(self):
        return (f'{self.name} => position={self.position} '
                f'value_type={self.value_type} default={self.default}')

    def clone(self):
        return ParameterDefinition(self.name, self.value_type, self.position,
                                   self.alias, self.default)


class FunctionDefinition:
    """A function as YAQL sees it; ``payload`` is the Python callable.
    ``parameters`` maps a parameter's name (``'*'`` and ``'**'`` for
    ``*args`` and ``**kwargs``) to its :class:`ParameterDefinition`."""

    __slots__ = ('is_method', 'is_function', 'name', 'parameters', 'payload',
                 'doc', 'no_kwargs', 'meta', 'returns_context')

    def __init__(self, name, payload, parameters=None, doc='', meta=None,
                 is_function=True, is_method=False, no_kwargs=False,
                 returns_context=False):
        self.is_method = is_method
        self.is_function = is_function
        self.name = name
        self.parameters = {} if not parameters else parameters
        self.payload = payload
        self.doc = doc
        self.no_kwargs = no_kwargs
        self.meta = meta or {}
        self.returns_context = returns_context

    def __call__(self, engine, context, receiver=utils.NO_VALUE):
        """A Python callable running this function with Python arguments
        (``receiver`` first when given), the hidden parameters filled
        from ``context`` and ``engine``."""
        def call(*args, **kwargs):
            if receiver is not utils.NO_VALUE:
                args = (receiver,) + args
            from muranopl.yaql import _dispatch
            return _dispatch.call_definition(self, engine, context, receiver,
                                             args, kwargs)
        return call

    def clone(self):
        return FunctionDefinition(
            self.name, self.payload,
            {k: p.clone() for k, p in self.parameters.items()}, self.doc,
            dict(self.meta), self.is_function, self.is_method,
            self.no_kwargs, self.returns_context)

    def strip_hidden_parameters(self):
        """A copy without the hidden parameters (positions closed up)."""
        fd = self.clone()
        hidden = [k for k, p in fd.parameters.items()
                  if yaqltypes.is_hidden(p.value_type)]
        for key in hidden:
            gone = fd.parameters.pop(key)
            if gone.position is None:
                continue
            for p in fd.parameters.values():
                if p.position is not None and p.position > gone.position:
                    p.position -= 1
        return fd

    def set_parameter(self, name, value_type=None, nullable=None,
                      alias=None, overwrite=False):
        """Declares parameter ``name`` (a name, a position, or a
        :class:`ParameterDefinition`) of type ``value_type`` (a yaqltypes
        type, a Python type or ``None``: any value)."""
        if isinstance(name, ParameterDefinition):
            if name.name in self.parameters and not overwrite:
                raise exceptions.DuplicateParameterDecoratorException(
                    function_name=self.name or self.payload.__name__,
                    param_name=name.name)
            self.parameters[name.name] = name
            return name
        spec = inspect.getfullargspec(self.payload)
        if isinstance(name, int):
            if 0 <= name < len(spec.args):
                name = spec.args[name]
            elif name == len(spec.args) and spec.varargs is not None:
                name = spec.varargs
            else:
                raise IndexError('argument position is out of range')
        key, position = name, None
        if name == spec.varkw:
            key = '**'
        elif name == spec.varargs:
            key, position = '*', len(spec.args)
        elif name in spec.args:
            position = spec.args.index(name)
        elif name not in spec.kwonlyargs:
            raise exceptions.NoParameterFoundException(
                function_name=self.name or self.payload.__name__,
                param_name=name)
        if key in self.parameters and not overwrite:
            raise exceptions.DuplicateParameterDecoratorException(
                function_name=self.name or self.payload.__name__,
                param_name=name)
        default = _default_of(spec, name)
        pd = ParameterDefinition(
            name, _value_type(value_type, nullable, default), position,
            alias, default)
        self.parameters[key] = pd
        return pd

    def insert_parameter(self, name, value_type=None, nullable=None,
                         alias=None, overwrite=False):
        pd = self.set_parameter(name, value_type, nullable, alias, overwrite)
        for p in self.parameters.values():
            if p is not pd and p.position is not None \
                    and pd.position is not None and p.position >= pd.position:
                p.position += 1
        return pd

    def is_valid_method(self):
        """Whether the function can be a method: its first argument (the
        receiver) exists and is not lazy."""
        first = None
        for p in self.parameters.values():
            if p.position is None or yaqltypes.is_hidden(p.value_type):
                continue
            if first is None or p.position < first.position:
                first = p
        return first is not None and not yaqltypes.is_lazy(first.value_type)

    def __repr__(self):
        return f'<FunctionDefinition {self.name}>'


def _default_of(spec, name):
    if spec.defaults and name in spec.args:
        index = spec.args.index(name) - len(spec.args)
        if index >= -len(spec.defaults):
            return spec.defaults[index]
    if spec.kwonlydefaults and name in spec.kwonlydefaults:
        return spec.kwonlydefaults[name]
    return NO_DEFAULT


def _value_type(value_type, nullable, default):
    if value_type is None:
        base = object if default in (None, NO_DEFAULT, utils.NO_VALUE) \
            else type(default)
        return yaqltypes.PythonType(base, True if nullable is None
                                    else nullable)
    if not isinstance(value_type, yaqltypes.SmartType):
        return yaqltypes.PythonType(
            value_type, default is None if nullable is None else nullable)
    return value_type


def _get_function_definition(func):
    fd = getattr(func, '__yaql_function__', None)
    if fd is None:
        fd = FunctionDefinition(None, func, {}, func.__doc__)
        func.__yaql_function__ = fd
    return fd


def _infer_parameter_type(name):
    if name in ('context', '__context'):
        return yaqltypes.Context()
    if name in ('engine', '__engine'):
        return yaqltypes.Engine()
    if name in ('yaql_interface', '__yaql_interface'):
        return yaqltypes.YaqlInterface()
    return None


def convert_function_name(function_name, convention):
    """``function_name`` without trailing ``_``, in ``convention``; a
    name such as ``#operator_foo`` keeps its marked head."""
    if not function_name:
        return function_name
    function_name = function_name.rstrip('_')
    if not convention:
        return function_name
    if not function_name[0].isalpha():
        end = function_name.find(function_name[0], 1)
        if end <= 1:
            return function_name
        return function_name[:end + 1] + convention.convert_function_name(
            function_name[end + 1:])
    return convention.convert_function_name(function_name)


def convert_parameter_name(parameter_name, convention):
    if not parameter_name:
        return parameter_name
    parameter_name = parameter_name.rstrip('_')
    if not convention:
        return parameter_name
    return convention.convert_parameter_name(parameter_name)


def get_function_definition(func, name=None, function=None, method=None,
                            convention=None, parameter_type_func=None):
    """The complete definition of ``func``: its decorators' declarations,
    then a parameter per remaining argument (typed by
    ``parameter_type_func``, by default the context/engine injection by
    name), the name (``name``, else the function's in ``convention``)
    and the forms."""
    if parameter_type_func is None:
        parameter_type_func = _infer_parameter_type
    fd = _get_function_definition(func).clone()
    spec = inspect.getfullargspec(func)
    for arg in spec.args + spec.kwonlyargs:
        if arg not in fd.parameters:
            fd.set_parameter(arg, parameter_type_func(arg))
    if spec.varargs and '*' not in fd.parameters:
        fd.set_parameter(spec.varargs, parameter_type_func(spec.varargs))
    if spec.varkw and '**' not in fd.parameters:
        fd.set_parameter(spec.varkw, parameter_type_func(spec.varkw))
    if name is not None:
        fd.name = name
    elif fd.name is None:
        fd.name = convert_function_name(fd.payload.__name__, convention)
    elif convention is not None:
        fd.name = convert_function_name(fd.name, convention)
    if function is not None:
        fd.is_function = function
    if method is not None:
        fd.is_method = method
    if convention:
        for p in fd.parameters.values():
            if p.alias is None:
                p.alias = convert_parameter_name(p.name, convention)
    return fd


def _parameter(name, value_type=None, nullable=None, alias=None):
    def wrapper(func):
        _get_function_definition(func).set_parameter(
            name, value_type, nullable, alias)
        return func
    return wrapper


def parameter(name, value_type=None, nullable=None, alias=None):
    """Declares the type of parameter ``name``."""
    if isinstance(value_type, yaqltypes.HiddenParameterType):
        raise ValueError('Use inject() for hidden parameters')
    return _parameter(name, value_type, nullable=nullable, alias=alias)


def inject(name, value_type=None, nullable=None, alias=None):
    """Declares parameter ``name`` filled by the call (a hidden type)."""
    if value_type is not None and not isinstance(
            value_type, yaqltypes.HiddenParameterType):
        raise ValueError('Use parameter() for normal function parameters')
    return _parameter(name, value_type, nullable=nullable, alias=alias)


def name(function_name):
    """The function's YAQL name."""
    def wrapper(func):
        _get_function_definition(func).name = function_name
        return func
    return wrapper


def method(func):
    """Called as a method only (``receiver.f()``)."""
    fd = _get_function_definition(func)
    fd.is_method, fd.is_function = True, False
    return func


def extension_method(func):
    """Called as a method or as a function."""
    fd = _get_function_definition(func)
    fd.is_method, fd.is_function = True, True
    return func


def returns_context(func):
    """The function returns ``(value, context)``, or a generator whose
    first item is the context (the convention of the pre-1.0 yaql that
    had the flag; yaql 3 has none): the call's value is ``value``; the
    returned context is not carried on to the rest of the expression
    here."""
    _get_function_definition(func).returns_context = True
    return func


def no_kwargs(func):
    """Takes no keyword arguments: ``name => value`` is a mapping rule."""
    _get_function_definition(func).no_kwargs = True
    return func


def meta(name, value):
    """Attaches ``meta[name] = value`` to the definition."""
    def wrapper(func):
        _get_function_definition(func).meta[name] = value
        return func
    return wrapper


def yaql_property(source_type):
    """``obj.name`` for a value of ``source_type``: the function's name
    in camelCase becomes a property."""
    def decorator(func):
        @name('#property#{}'.format(get_function_definition(func).name))
        @parameter('obj', source_type)
        def wrapper(obj):
            return func(obj)
        return wrapper
    return decorator
