"""Python objects YAQL may look into (the reference's
``yaql.yaqlization``): a yaqlized object or class lets expressions read
its attributes (``$.attr``), index it (``$[key]``) and call its methods
(``$.method(1, x => 2)``); anything else in a Python object stays out of
reach.

>>> from muranopl import yaql
>>> from muranopl.yaql import yaqlization
>>> @yaqlization.yaqlize
... class Point:
...     def __init__(self, x):
...         self.x = x
...     def plus(self, n):
...         return self.x + n
>>> yaql.evaluate('$.x + $.plus(1)', Point(2), context=yaql.create_context())
5

Names starting with ``_`` are never reachable; ``whitelist`` and
``blacklist`` take names, compiled regular expressions or predicates;
``attribute_remapping`` maps a YAQL name to the Python one.
"""

import re

from muranopl.yaql import exceptions

YAQLIZATION_ATTR = '__yaqlization__'
_REGEX = type(re.compile('.'))


def yaqlize(class_or_object=None, yaqlize_attributes=True,
            yaqlize_methods=True, yaqlize_indexer=True,
            auto_yaqlize_result=False, whitelist=None, blacklist=None,
            attribute_remapping=None, blacklist_remapped_attributes=True):
    """Marks ``class_or_object`` (or, with no argument, returns a
    decorator doing it) with these settings."""
    def mark(something):
        if not hasattr(something, YAQLIZATION_ATTR):
            setattr(something, YAQLIZATION_ATTR, build_yaqlization_settings(
                yaqlize_attributes, yaqlize_methods, yaqlize_indexer,
                auto_yaqlize_result, whitelist, blacklist,
                attribute_remapping, blacklist_remapped_attributes))
        return something
    if class_or_object is None:
        return mark
    return mark(class_or_object)


def get_yaqlization_settings(class_or_object):
    return getattr(class_or_object, YAQLIZATION_ATTR, None)


def is_yaqlized(class_or_object):
    return hasattr(class_or_object, YAQLIZATION_ATTR)


def build_yaqlization_settings(
        yaqlize_attributes=True, yaqlize_methods=True, yaqlize_indexer=True,
        auto_yaqlize_result=False, whitelist=None, blacklist=None,
        attribute_remapping=None, blacklist_remapped_attributes=True):
    blacklist = set(blacklist or [])
    remapping = dict(attribute_remapping or {})
    if blacklist_remapped_attributes:
        for target in remapping.values():
            blacklist.add(target if isinstance(target, str) else target[0])
    return {
        'yaqlizeAttributes': yaqlize_attributes,
        'yaqlizeMethods': yaqlize_methods,
        'yaqlizeIndexer': yaqlize_indexer,
        'autoYaqlizeResult': auto_yaqlize_result,
        'whitelist': set(whitelist or []),
        'blacklist': blacklist,
        'attributeRemapping': remapping,
    }


def _matches(name, entry):
    if isinstance(entry, _REGEX):
        return entry.search(name) is not None
    if callable(entry):
        return bool(entry(name))
    return name == entry


def _check_name(name, settings, error=AttributeError):
    if name.startswith('_'):
        raise error('Cannot access ' + name)
    if settings['whitelist']:
        if not any(_matches(name, e) for e in settings['whitelist']):
            raise error('Cannot access ' + name)
    elif any(_matches(name, e) for e in settings['blacklist']):
        raise error('Cannot access ' + name)


class Opaque:
    """A Python object that is not yaqlized, as a method or attribute of
    a yaqlized one returns it: YAQL can hold it and give it back, not
    look into it (``obj``: the object)."""

    __slots__ = ('obj',)
    __yaqlization__ = None

    def __init__(self, obj):
        self.obj = obj

    def __repr__(self):
        return f'Opaque({self.obj!r})'


_DATA = (type(None), bool, int, float, str, list, tuple, dict, set,
         frozenset)


def _result(value, settings):
    """A method's or attribute's result, yaqlized too when the settings
    say so (the standard library's types excepted); an object YAQL could
    not take otherwise is :class:`Opaque`."""
    cls = value if isinstance(value, type) else type(value)
    if settings['autoYaqlizeResult'] and cls.__module__ != int.__module__:
        try:
            yaqlize(value, auto_yaqlize_result=True)
        except Exception:
            pass
    if isinstance(value, _DATA) or is_yaqlized(value) or callable(value) \
            or cls.__module__ in ('datetime', 'builtins'):
        return value
    return Opaque(value)


def get_attribute(obj, name):
    """``obj.name`` from YAQL."""
    settings = get_yaqlization_settings(obj)
    if settings is None or not settings['yaqlizeAttributes']:
        raise exceptions.NoFunctionRegisteredException('#property#' + name)
    _check_name(name, settings)
    name = settings['attributeRemapping'].get(name, name)
    return _result(getattr(obj, name), settings)


def get_item(obj, key):
    """``obj[key]`` from YAQL."""
    settings = get_yaqlization_settings(obj)
    if settings is None or not settings['yaqlizeIndexer']:
        raise exceptions.NoMatchingFunctionException('#indexer')
    if isinstance(key, str):
        _check_name(key, settings, KeyError)
    return _result(obj[key], settings)


def call_method(obj, name, args, kwargs):
    """``obj.name(args)`` from YAQL."""
    settings = get_yaqlization_settings(obj)
    if settings is None or not settings['yaqlizeMethods']:
        raise exceptions.NoMethodRegisteredException(name, obj)
    _check_name(name, settings)
    target = settings['attributeRemapping'].get(name, name)
    renames = {}
    if not isinstance(target, str):
        target, renames = target[0], (target[1] if len(target) > 1 else {})
    kwargs = {renames.get(k, k): v for k, v in kwargs.items()}
    return _result(getattr(obj, target)(*args, **kwargs), settings)
