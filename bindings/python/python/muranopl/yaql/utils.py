"""Helpers shared with the reference's ``yaql.language.utils``."""

import collections.abc


class _NoValue:
    """The marker of an argument not given (``yaql.utils.NO_VALUE``)."""

    def __repr__(self):
        return 'NO_VALUE'


NO_VALUE = _NoValue()


class FrozenDict(collections.abc.Mapping):
    """A read-only, hashable dict: how a dictionary used as a dictionary
    key or set element comes back from YAQL.

    >>> d = FrozenDict({'a': 1})
    >>> d['a'], len(d), hash(d) == hash(FrozenDict({'a': 1}))
    (1, 1, True)
    """

    __slots__ = ('_d', '_hash')

    def __init__(self, d=(), **kwargs):
        self._d = dict(d, **kwargs)
        self._hash = None

    def __getitem__(self, key):
        return self._d[key]

    def __iter__(self):
        return iter(self._d)

    def __len__(self):
        return len(self._d)

    def __hash__(self):
        if self._hash is None:
            self._hash = hash(frozenset(self._d.items()))
        return self._hash

    def __repr__(self):
        return f'FrozenDict({self._d!r})'


def convert_function_name(name):
    """A Python function name in YAQL's camelCase convention
    (``get_value`` -> ``getValue``), as the reference's default context
    names registered functions.

    >>> convert_function_name('to_upper_case_')
    'toUpperCase'
    """
    name = name.rstrip('_')
    head = len(name) - len(name.lstrip('_'))
    parts = name[head:].split('_')
    return name[:head] + parts[0] + ''.join(
        p[:1].upper() + p[1:] for p in parts[1:])


class _Marker:
    __slots__ = ('_text',)

    def __init__(self, text):
        self._text = text

    def __repr__(self):
        return self._text


def create_marker(text):
    """A unique object printing as ``text`` (a sentinel)."""
    return _Marker(text)


def is_string(obj):
    return isinstance(obj, str)


def is_mapping(obj):
    return isinstance(obj, collections.abc.Mapping)


def is_iterator(obj):
    return isinstance(obj, collections.abc.Iterator)


def is_iterable(obj):
    """A collection YAQL iterates: not a string, not a mapping."""
    return isinstance(obj, collections.abc.Iterable) and not isinstance(
        obj, (str, bytes, collections.abc.Mapping))


def is_sequence(obj):
    return isinstance(obj, collections.abc.Sequence) and not isinstance(
        obj, (str, bytes))


class MappingRule:
    """A ``source => destination`` argument."""

    __slots__ = ('source', 'destination')

    def __init__(self, source, destination):
        self.source = source
        self.destination = destination


def convert_input_data(obj, rec=None):
    """Values cross into YAQL as they are here (the reference freezes
    them): returned unchanged."""
    return obj


def convert_output_data(obj, limit_func=None, engine=None, rec=None):
    """Results come back as plain Python values already: unchanged."""
    return obj


def limit_iterable(iterable, limit_or_engine):
    """The first ``limit`` items of ``iterable`` (an engine: its
    ``yaql.limitIterators`` option); more raise
    ``CollectionTooLargeException``."""
    limit = limit_or_engine
    if not isinstance(limit, int):
        limit = getattr(limit_or_engine, 'options', {}).get(
            'yaql.limitIterators', -1)
    from muranopl.yaql import exceptions
    for i, item in enumerate(iterable):
        if 0 <= limit <= i:
            raise exceptions.CollectionTooLargeException(limit)
        yield item


def limit_memory_usage(quota_or_engine, *args):
    """Memory is bounded by the engine itself: nothing to check here."""
