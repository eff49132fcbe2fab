"""Bad input through the binding: each a clear Python exception (or a
well-defined value), never a crash."""

import threading

import pytest

import muranopl.yaql as yaql
from muranopl.yaql import exceptions, utils
from muranopl.yaql.language import specs, yaqltypes


class Keyed:
    """A mapping whose keys Python cannot hash (a dict cannot hold
    them)."""

    def __init__(self, items):
        self._items = items

    def keys(self):
        return [k for k, _ in self._items]

    def items(self):
        return list(self._items)

    def __getitem__(self, key):
        return dict((tuple(k), v) for k, v in self._items)[tuple(key)]

    def __iter__(self):
        return iter(self.keys())

    def __len__(self):
        return len(self._items)


def test_unhashable_keys_come_back_hashable():
    import collections.abc
    collections.abc.Mapping.register(Keyed)
    out = yaql.evaluate('$', Keyed([([1, 2], 'a'), ({'k': 1}, 'b')]))
    assert out[(1, 2)] == 'a'
    assert out[utils.FrozenDict({'k': 1})] == 'b'
    # Keys and set elements made by YAQL itself.
    assert yaql.evaluate('dict([1, [2]] => 3)') == {(1, (2,)): 3}
    # A set of YAQL dicts and lists reaching a Python function.
    seen = []
    ctx = yaql.create_context()
    ctx.register_function(lambda s: seen.append(s) or True, name='see')
    assert yaql.evaluate('see(set({a => 1}, [1]))', context=ctx) is True
    assert seen == [frozenset({utils.FrozenDict({'a': 1}), (1,)})]
    # A registered function returning lists that become keys of a YAQL
    # dict.
    ctx.register_function(lambda: [[1], [2]], name='pairs')
    assert yaql.evaluate('dict(pairs().select([$, 0]))', context=ctx) == {
        (1,): 0, (2,): 0}


def test_recursive_structures_are_a_recursion_error():
    loop = []
    loop.append(loop)
    with pytest.raises(RecursionError):
        yaql.evaluate('$', loop)
    d = {}
    d['self'] = d
    with pytest.raises(RecursionError):
        yaql.evaluate('$.self', d)
    # A registered function returning one: the same error, as itself.
    ctx = yaql.create_context()
    ctx.register_function(lambda: loop, name='loop')
    with pytest.raises(RecursionError):
        yaql.evaluate('loop()', context=ctx)
    # And from another thread (a smaller stack).
    errors = []

    def run():
        try:
            yaql.evaluate('$', loop)
        except RecursionError as e:
            errors.append(e)
    t = threading.Thread(target=run)
    t.start()
    t.join()
    assert len(errors) == 1


def test_a_generator_raising_midway():
    class Boom(Exception):
        pass

    def gen():
        yield 1
        yield 2
        raise Boom('third')
    with pytest.raises(Boom, match='third'):
        yaql.evaluate('$.sum()', gen())
    # The items before the failure were used lazily: `take` stops first.
    assert yaql.evaluate('$.take(2)', gen()) == [1, 2]
    # A registered function returning one.
    ctx = yaql.create_context()
    ctx.register_function(gen, name='gen')
    with pytest.raises(Boom):
        yaql.evaluate('gen().select($ * 2)', context=ctx)


def test_functions_that_raise():
    class Failed(Exception):
        pass
    err = Failed('no')

    def plain(x):
        raise err

    @specs.parameter('x', yaqltypes.Integer())
    def typed(x):
        raise err

    @specs.parameter('f', yaqltypes.Lambda())
    def lazy(f):
        return f(1)

    ctx = yaql.create_context()
    ctx.register_function(plain)
    ctx.register_function(typed)
    ctx.register_function(lazy)
    for expr in ('plain(1)', 'typed(1)', '[1, 2].select(typed($))'):
        with pytest.raises(Failed) as caught:
            yaql.evaluate(expr, context=ctx)
        assert caught.value is err
    # An engine error inside a lazy argument comes back as its class.
    with pytest.raises(ZeroDivisionError):
        yaql.evaluate('lazy($ / 0)', context=ctx)
    # A delegate raising inside the library's own `select`.
    with pytest.raises(Failed) as caught:
        yaql.evaluate('$.select($f($))', [1], f=plain)
    assert caught.value is err


def test_objects_that_are_not_json_like():
    class Thing:
        pass
    with pytest.raises(TypeError, match='Thing'):
        yaql.evaluate('$', Thing())
    with pytest.raises(TypeError, match='Thing'):
        yaql.evaluate('$', {'a': [Thing()]})
    with pytest.raises(TypeError, match='Thing'):
        yaql.evaluate('$x', x=Thing())
    # A registered function returning one.
    ctx = yaql.create_context()
    ctx.register_function(Thing, name='thing')
    with pytest.raises(TypeError, match='Thing'):
        yaql.evaluate('thing()', context=ctx)
    # Yaqlized, the object may go in and come back as itself.
    from muranopl.yaql import yaqlization
    obj = yaqlization.yaqlize(Thing())
    assert yaql.evaluate('$', obj) is obj
    assert yaql.evaluate('[$][0]', obj, context=yaql.create_context()) is obj
    # A yaqlized object's attribute that YAQL cannot look into stays
    # opaque: reading into it is an error of the reference's class.
    obj.inner = Thing()
    with pytest.raises(exceptions.NoFunctionRegisteredException):
        yaql.evaluate('$.inner.x', obj, context=yaql.create_context())
    # ... and comes back as itself.
    assert yaql.evaluate('[$.inner][0]', obj,
                         context=yaql.create_context()) is obj.inner


def test_bad_declarations():
    with pytest.raises(exceptions.NoParameterFoundException):
        @specs.parameter('y', yaqltypes.String())
        def f(x):
            return x
    with pytest.raises(exceptions.DuplicateParameterDecoratorException):
        @specs.parameter('x', yaqltypes.String())
        @specs.parameter('x', yaqltypes.Integer())
        def g(x):
            return x
    with pytest.raises(ValueError):
        specs.parameter('x', yaqltypes.Context())
    ctx = yaql.create_context()
    with pytest.raises(exceptions.InvalidMethodException):
        ctx.register_function(lambda: 1, name='m', method=True)
