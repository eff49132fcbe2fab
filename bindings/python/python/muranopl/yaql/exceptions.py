"""The exceptions YAQL evaluation raises, named and nested as the
reference's ``yaql.language.exceptions`` so that ``except`` clauses
written for it keep working.

Errors the reference lets escape as Python built-ins stay built-ins:
``KeyError``, ``IndexError``, ``ValueError``, ``TypeError``,
``ZeroDivisionError``, ``StopIteration`` (``first()`` of nothing),
``AssertionError`` (``assert()``), ``OverflowError`` and ``re.error`` (a bad
regular expression). Limits raise ``CollectionTooLargeException``,
``MemoryQuotaExceededException``, ``RecursionError`` and ``TimeoutError``.

>>> from muranopl import yaql
>>> try:
...     yaql.evaluate('foo(1)')
... except NoFunctionRegisteredException as e:
...     print(type(e).__name__, isinstance(e, FunctionResolutionError))
NoFunctionRegisteredException True
>>> str(NoMatchingFunctionException('f'))
'No function "f" matches supplied arguments'
"""

import builtins
import re

from muranopl._errors import MuranoPLError


class YaqlException(Exception):
    """The base of YAQL's own exceptions."""


class ResolutionError(YaqlException):
    pass


class FunctionResolutionError(ResolutionError):
    pass


class MethodResolutionError(ResolutionError):
    pass


# The constructors take the reference's arguments, so that code raising
# these classes itself keeps working; the engine's errors are made by
# ``_from_engine`` with the engine's message.

class NoFunctionRegisteredException(FunctionResolutionError):
    def __init__(self, name):
        super().__init__(f'Unknown function "{name}"')


class NoMethodRegisteredException(MethodResolutionError):
    def __init__(self, name, receiver):
        super().__init__(f'Unknown method "{name}" for receiver {receiver}')


class NoMatchingFunctionException(FunctionResolutionError):
    def __init__(self, name):
        super().__init__(f'No function "{name}" matches supplied arguments')


class NoMatchingMethodException(MethodResolutionError):
    def __init__(self, name, receiver):
        super().__init__(f'No method "{name}" for receiver {receiver} '
                         'matches supplied arguments')


class AmbiguousFunctionException(FunctionResolutionError):
    def __init__(self, name):
        super().__init__(f'Ambiguous function "{name}"')


class AmbiguousMethodException(MethodResolutionError):
    def __init__(self, name, receiver):
        super().__init__(f'Ambiguous method "{name}" for receiver {receiver}')


class ArgumentException(YaqlException):
    def __init__(self, argument_name):
        self.parameter_name = argument_name
        super().__init__(f'Invalid argument {argument_name}')


class MappingTranslationException(YaqlException):
    def __init__(self):
        super().__init__('Cannot convert mapping to keyword argument')


class ArgumentValueException(YaqlException):
    def __init__(self):
        super().__init__()


class DuplicateParameterDecoratorException(YaqlException):
    def __init__(self, function_name, param_name):
        super().__init__(f"Function '{function_name}' has multiple "
                         f"decorators for parameter '{param_name}'")


class InvalidMethodException(YaqlException):
    def __init__(self, function_name):
        super().__init__(
            f"Function '{function_name}' cannot be called as a method")


class NoParameterFoundException(YaqlException):
    def __init__(self, function_name, param_name):
        super().__init__(f"Function '{function_name}' has no parameter "
                         f"called '{param_name}'")


class YaqlParsingException(YaqlException):
    """A syntax error: ``position`` is the offending token's offset (in
    characters) in the expression, ``None`` at its end; ``value`` is the
    token."""

    def __init__(self, value, position, message):
        self.value = value
        self.position = position
        self.message = message
        super().__init__(message)


class YaqlGrammarException(YaqlParsingException):
    def __init__(self, expr, value, position):
        if position is None:
            message = 'Parse error: unexpected end of statement'
        else:
            message = (f"Parse error: unexpected '{value}' at position "
                       f"{position} of expression '{expr}'")
        super().__init__(value, position, message)


class YaqlLexicalException(YaqlParsingException):
    def __init__(self, value, position):
        super().__init__(value, position, "Lexical error: illegal "
                         f"character '{value}' at position {position}")


class InvalidOperatorTableException(YaqlException):
    def __init__(self, op):
        super().__init__(
            f"Invalid records in operator table for operator '{op}")


class WrappedException(YaqlException):
    def __init__(self, exception):
        self.wrapped = exception
        super().__init__(str(exception))


class CollectionTooLargeException(YaqlException):
    def __init__(self, count):
        super().__init__(f'Collection length exceeds {count} elements')


class MemoryQuotaExceededException(YaqlException):
    def __init__(self):
        super().__init__('Expression consumed too much memory')


def _from_engine(kind, message, position, source, location, trace):
    """The exception object for an engine error of ``kind`` (called by
    the native module)."""
    cls = globals().get(kind)
    if isinstance(cls, type) and issubclass(cls, YaqlException):
        exc = cls.__new__(cls)
        Exception.__init__(exc, message)
        exc.position = position
        if issubclass(cls, YaqlParsingException):
            exc.message = message
            exc.value = None
            if source is not None and position is not None:
                exc.value = source[position:position + 1] or None
        return exc
    if kind == 'error':
        return re.error(message)
    if kind == 'UnicodeDecodeError':
        return UnicodeDecodeError('utf-8', b'', 0, 0, message)
    cls = getattr(builtins, kind, None)
    if (isinstance(cls, type) and issubclass(cls, Exception)
            and not issubclass(cls, Warning)):
        return cls(message)
    return MuranoPLError(kind, message, location, trace)
