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


class NoFunctionRegisteredException(FunctionResolutionError):
    pass


class NoMethodRegisteredException(MethodResolutionError):
    pass


class NoMatchingFunctionException(FunctionResolutionError):
    pass


class NoMatchingMethodException(MethodResolutionError):
    pass


class AmbiguousFunctionException(FunctionResolutionError):
    pass


class AmbiguousMethodException(MethodResolutionError):
    pass


class ArgumentException(YaqlException):
    pass


class MappingTranslationException(YaqlException):
    pass


class ArgumentValueException(YaqlException):
    pass


class DuplicateParameterDecoratorException(YaqlException):
    pass


class InvalidMethodException(YaqlException):
    pass


class NoParameterFoundException(YaqlException):
    pass


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
    pass


class YaqlLexicalException(YaqlParsingException):
    pass


class InvalidOperatorTableException(YaqlException):
    pass


class WrappedException(YaqlException):
    pass


class CollectionTooLargeException(YaqlException):
    pass


class MemoryQuotaExceededException(YaqlException):
    pass


def _from_engine(kind, message, position, source, location, trace):
    """The exception object for an engine error of ``kind`` (called by
    the native module)."""
    cls = globals().get(kind)
    if isinstance(cls, type) and issubclass(cls, YaqlException):
        if issubclass(cls, YaqlParsingException):
            value = None
            if source is not None and position is not None:
                value = source[position:position + 1] or None
            return cls(value, position, message)
        exc = cls(message)
        exc.position = position
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
