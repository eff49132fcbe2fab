"""muranopl.yaql: values in and out, errors, callables, contexts, the
compatibility layer, limits and threads."""

import datetime
import re
import threading
import time

import pytest

import muranopl.yaql as yaql
from muranopl.yaql import exceptions, factory, legacy, utils


def test_scalars_and_collections_round_trip():
    data = {'i': 7, 'big': 2 ** 80, 'f': 1.5, 's': 'ü', 'b': True, 'n': None,
            'l': [1, [2]], 't': (3, 4)}
    assert yaql.evaluate('$', data) == {**data, 't': [3, 4]}
    assert yaql.evaluate('$.big * 2', data) == 2 ** 81
    assert yaql.evaluate('$.b', data) is True
    assert type(yaql.evaluate('$.f * 2', data)) is float


def test_integers_that_are_not_int():
    class Index:
        def __index__(self):
            return 41

    assert yaql.evaluate('$ + 1', Index()) == 42
    with pytest.raises(TypeError):
        yaql.evaluate('$', object())


def test_dicts_keep_their_order_and_any_key():
    assert list(yaql.evaluate('$', {'b': 1, 'a': 2})) == ['b', 'a']
    assert yaql.evaluate('dict([1, 2] => 3)') == {(1, 2): 3}
    key = next(iter(yaql.evaluate('dict({a => 1} => 2)')))
    assert isinstance(key, utils.FrozenDict) and key['a'] == 1
    assert yaql.evaluate('$.get(1)', {1: 'one', 'x': 2}) == 'one'


def test_sets():
    assert yaql.evaluate('$.len()', {1, 2, 2}) == 2
    assert sorted(yaql.evaluate('set(1, 2)')) == [1, 2]
    assert yaql.compile('set(1, 2)', legacy=True).evaluate() == frozenset({1, 2})
    assert yaql.evaluate('$.contains(3)', frozenset({3})) is True


def test_datetimes_and_timespans():
    utc = datetime.timezone.utc
    naive = datetime.datetime(2020, 1, 1)
    assert yaql.evaluate('$ + timespan(days => 1)', naive) == \
        datetime.datetime(2020, 1, 2, tzinfo=utc)
    plus2 = datetime.timezone(datetime.timedelta(hours=2))
    d = datetime.datetime(2020, 1, 1, 12, tzinfo=plus2)
    back = yaql.evaluate('$', d)
    assert back == d and back.utcoffset() == datetime.timedelta(hours=2)
    assert yaql.evaluate('$.hour', d) == 12
    assert yaql.evaluate('$ * 2', datetime.timedelta(minutes=1)) == \
        datetime.timedelta(minutes=2)
    assert yaql.evaluate('timespan(hours => 1).seconds') == 3600.0


def test_generators_stay_lazy():
    pulled = []

    def gen():
        for i in range(10 ** 9):
            pulled.append(i)
            yield i

    assert yaql.evaluate('$.where($ > 2).first()', gen()) == 3
    assert pulled == [0, 1, 2, 3]


def test_variables():
    assert yaql.evaluate('$x + $', 1, x=2) == 3
    assert yaql.compile('$.select($ * $k)').evaluate([1, 2], k=10) == [10, 20]


def test_errors_are_the_references_classes():
    cases = [
        ('foo(1)', exceptions.NoFunctionRegisteredException),
        ('[1].foo()', exceptions.NoMethodRegisteredException),
        ('len(1, 2, 3)', exceptions.NoMatchingFunctionException),
        ('[1, 2].select(1, 2, 3)', exceptions.NoMatchingMethodException),
        ('1 / 0', ZeroDivisionError),
        ('[].first()', StopIteration),
        ('{a => 1}.get(b) + dict(a => 1)[b]', KeyError),
        ('[1][5]', IndexError),
        ('int(x)', ValueError),
        ("regex('(')", re.error),
        ('0.assert($ > 1)', AssertionError),
    ]
    for expr, cls in cases:
        with pytest.raises(cls):
            yaql.evaluate(expr)
    assert issubclass(exceptions.NoMatchingMethodException,
                      exceptions.MethodResolutionError)
    assert issubclass(exceptions.YaqlGrammarException,
                      exceptions.YaqlParsingException)


def test_syntax_errors_carry_positions():
    with pytest.raises(exceptions.YaqlGrammarException) as e:
        yaql.compile('1 + (2 3)')
    assert e.value.position == 7
    assert e.value.value == '3'
    with pytest.raises(exceptions.YaqlLexicalException) as e:
        yaql.compile('1 + (2 ? 3)')
    assert e.value.position == 7
    with pytest.raises(exceptions.YaqlGrammarException) as e:
        yaql.compile('ü + (')
    assert e.value.position is None or e.value.position == 5


def test_registered_functions():
    ctx = yaql.create_context()

    def get_value(d, key, default=None):
        return d.get(key, default)

    ctx.register_function(get_value)
    ctx.register_function(lambda *a, **kw: [list(a), kw], name='echo')
    assert yaql.evaluate('getValue($, a)', {'a': 5}, context=ctx) == 5
    assert yaql.evaluate('$.getValue(b, 7)', {}, context=ctx) == 7
    assert yaql.evaluate('echo(1, x => 2)', context=ctx) == [[1], {'x': 2}]
    assert yaql.evaluate('$.select(getValue($, k))', [{'k': 1}, {}],
                         context=ctx) == [1, None]


def test_registration_errors():
    ctx = yaql.create_context()
    ctx.register_function(lambda *a, **kw: 1, name='f')
    assert yaql.evaluate('f(x => 4)', context=ctx) == 1
    with pytest.raises(exceptions.MappingTranslationException):
        yaql.evaluate('f(2 + 2 => 4)', context=ctx)
    with pytest.raises(exceptions.InvalidMethodException):
        ctx.register_function(lambda: 1, name='g', method=True)
    where = ctx('where', receiver=[1, 2, 3])
    assert where(lambda x: x > 1) == [2, 3]
    assert where(False) == []


def test_overloads_and_left_out_arguments():
    ctx = yaql.create_context()
    ctx.register_function(lambda a: a, name='f')
    ctx.register_function(lambda a, b: a + b, name='f')
    assert yaql.evaluate('[f(12), f(12, 13)]', context=ctx) == [12, 25]
    with pytest.raises(exceptions.NoMatchingFunctionException):
        yaql.evaluate('f(1, 2, 3)', context=ctx)
    child = ctx.create_child_context()
    child.register_function(lambda a: -a, name='f')
    assert yaql.evaluate('[f(12), f(12, 13)]', context=child) == [-12, 25]
    child.register_function(lambda x: x, name='f')
    with pytest.raises(exceptions.AmbiguousFunctionException):
        yaql.evaluate('f(1)', context=child)

    def g(a=11, b=22, c=33):
        return [a, b, c]

    ctx.register_function(g)
    assert yaql.evaluate('[g(,,1), g(0,,1), g(,1, c => 4)]', context=ctx) == \
        [[11, 22, 1], [0, 22, 1], [11, 1, 4]]
    with pytest.raises(exceptions.NoMatchingFunctionException):
        yaql.evaluate('g(,1, b => 4)', context=ctx)


def test_a_callables_exception_is_raised_as_itself():
    boom = ValueError('boom')
    ctx = yaql.create_context()

    def fail(x):
        raise boom

    ctx.register_function(fail)
    with pytest.raises(ValueError) as e:
        yaql.evaluate('[1, 2].select(fail($))', context=ctx)
    assert e.value is boom
    with pytest.raises(KeyError):
        yaql.evaluate('$f(1)', f={}.__getitem__)


def test_delegates_and_lambdas():
    assert yaql.evaluate('$f(20) + 1', f=lambda x: x * 2) == 41
    assert yaql.evaluate('$.select($f($))', [1, 2], f=str) == ['1', '2']
    double = yaql.evaluate('lambda($ * 2)')
    assert double(21) == 42
    assert yaql.evaluate('$.select(lambda($ + $2))', [1])[0](1, 2) == 3


def test_contexts():
    ctx = yaql.create_context()
    ctx['$x'] = 1
    ctx['y'] = 2
    ctx['$'] = [3]
    child = ctx.create_child_context()
    child['x'] = 10
    assert yaql.evaluate('[$x, $y, $]', context=child) == [10, 2, [3]]
    assert yaql.evaluate('[$x, $y, $]', context=ctx) == [1, 2, [3]]
    assert child['$y'] == 2 and 'y' not in child and '$y' in ctx
    del ctx['y']
    assert yaql.evaluate('$y', context=child) is None


def test_reference_entry_points():
    engine = factory.YaqlFactory(allow_delegates=True).create(
        options={'yaql.limitIterators': 3, 'yaql.memoryQuota': -1})
    ctx = yaql.create_context()
    assert engine('$.len()').evaluate(data=[1, 2], context=ctx) == 2
    with pytest.raises(exceptions.CollectionTooLargeException):
        engine('$').evaluate(data=[1, 2, 3, 4], context=ctx)
    old = legacy.YaqlFactory().create()
    assert old('dict(a => 1).a').evaluate(context=legacy.create_context()) == 1
    assert old('range(0, 3)').evaluate(context=legacy.create_context()) == [0, 1, 2]
    assert yaql.eval('$ + 1', 1) == 2


def test_legacy_tuples_are_tuples():
    """yaql 0.2's `=>` and `tuple()` build tuples, which a yaql 0.2 engine
    returns as tuples (its `yaql.convertTuplesToLists` is off); the data
    given to `evaluate` is frozen (its lists are tuples), context values
    stay lists, and a yaql 3 engine returns lists unless told otherwise.
    Every answer is the reference yaql 3.2.0's."""
    old = legacy.YaqlFactory().create()

    def ev(expr, data=None):
        return old(expr).evaluate(data=data, context=legacy.create_context())

    assert ev('1 => 2') == (1, 2)
    assert ev('1 => 2 => 3') == (1, 2, 3)
    assert ev('(1 => 2) => 3') == ((1, 2), 3)
    assert ev('1 => (2 => 3)') == (1, (2, 3))
    assert ev('tuple(null)') == (None,)
    assert ev('tuple()') == ()
    assert ev('[1, 2]') == [1, 2] and type(ev('[1, 2]')) is list
    assert ev('tuple(1, 2).select($ * 2)') == [2, 4]
    assert ev('list(1 => 2, [3])') == [(1, 2), [3]]
    assert ev('tuple(1, 2)[1]') == 2
    assert ev('len(1 => 2 => 3)') == 3
    assert ev('$', (1, [2])) == (1, (2,))
    assert ev('$', [1, (2,)]) == (1, (2,))
    with pytest.raises(ValueError):
        ev('switch($, [true, 1])', 1)
    assert ev('switch($, $ > 0 => pos)', 1) == 'pos'
    # yaql 3: lists by default, tuples when the option is off.
    assert yaql.evaluate('$', (1, 2)) == [1, 2]
    keep = factory.YaqlFactory().create({'yaql.convertTuplesToLists': False})
    assert keep('$').evaluate(data=(1, [2]), context=yaql.create_context()) \
        == (1, (2,))
    # A query's result is a list; the frozen items in it stay tuples.
    assert keep('$.select($)').evaluate(
        data=[1, [2]], context=yaql.create_context()) == [1, (2,)]
    assert keep('$.x').evaluate(
        data={'x': [1]}, context=yaql.create_context()) == (1,)
    # Values a context holds are not the data: they stay lists.
    ctx = yaql.create_context()
    ctx['x'] = [1, [2]]
    assert keep('$x').evaluate(context=ctx) == [1, [2]]
    ctx['$'] = [3]
    assert keep('$').evaluate(context=ctx) == [3]
    assert keep('[1, 2]').evaluate(context=yaql.create_context()) == [1, 2]
    assert yaql.evaluate('tuple(1, 2)', legacy=True) == (1, 2)


def test_limits_are_on_by_default():
    with pytest.raises(exceptions.CollectionTooLargeException):
        yaql.evaluate('sequence().len()')
    with pytest.raises(exceptions.MemoryQuotaExceededException):
        yaql.evaluate("'x' * 1000000000")
    with pytest.raises(TimeoutError):
        yaql.compile('range(100000000).select($ * 2).sum()',
                     limit_iterators=None, timeout=0.2).evaluate()
    with pytest.raises(ValueError):
        yaql.compile('1', timeout=-1)


def test_deep_data_is_an_error_not_a_crash():
    deep = []
    for _ in range(100000):
        deep = [deep]
    with pytest.raises(RecursionError):
        yaql.evaluate('$', deep)
    with pytest.raises(RecursionError):
        yaql.compile('range(100000).aggregate([$1], [])',
                     memory_quota=None).evaluate()


def test_deep_results_on_another_thread():
    out = []
    t = threading.Thread(target=lambda: out.append(pytest.raises(
        RecursionError, yaql.compile('range(100000).aggregate([$1], [])',
                                     memory_quota=None).evaluate)))
    t.start()
    t.join()
    assert out


def test_evaluate_many():
    expr = yaql.compile('$.x * 2')
    items = [{'x': i} for i in range(1000)]
    assert expr.evaluate_many(items) == [i * 2 for i in range(1000)]
    got = expr.evaluate_many([{'x': 1}, {'x': 'a'}, None],
                             return_exceptions=True)
    assert got[0] == 2 and got[1] == 'aa'
    assert isinstance(got[2], exceptions.YaqlException)
    with pytest.raises(ZeroDivisionError):
        yaql.compile('1 / $').evaluate_many([1, 0, 2])


def test_evaluate_many_keeps_each_items_exception():
    errors = {}

    def check(x):
        if x % 2:
            errors[x] = ValueError(x)
            raise errors[x]
        return x

    ctx = yaql.create_context()
    ctx.register_function(check)
    got = yaql.compile('check($)').evaluate_many(
        range(6), context=ctx, return_exceptions=True)
    assert got[0::2] == [0, 2, 4]
    assert [got[i] is errors[i] for i in (1, 3, 5)] == [True] * 3


def test_the_gil_is_released_while_the_engine_runs():
    expr = yaql.compile('range(30000000).select($ * 2).where($ mod 7 = 0).len()',
                        limit_iterators=None)
    done = []
    worker = threading.Thread(target=lambda: done.append(expr.evaluate()))
    worker.start()
    ticks = 0
    while worker.is_alive():
        ticks += 1
        time.sleep(0.001)
    worker.join()
    assert done == [4285715]
    # The main thread ran Python code all along.
    assert ticks > 20


def test_two_threads_evaluate_one_expression():
    expr = yaql.compile('$.select($ * $).sum()')
    results = [None] * 8

    def work(i):
        results[i] = expr.evaluate(list(range(1, i * 10 + 2)))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [sum(x * x for x in range(1, i * 10 + 2))
                       for i in range(8)]
