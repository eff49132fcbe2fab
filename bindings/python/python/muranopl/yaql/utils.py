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
