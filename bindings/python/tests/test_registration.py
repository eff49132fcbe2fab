"""Functions registered the way the reference's two big users register
theirs, through ``muranopl.yaql`` and, where it is installed, through the
reference ``yaql`` with the same code: both must give the recorded
results.

- Mistral: plain functions taking ``context`` (``env()``, ``task()``,
  ``execution()``), registered with ``register_function(f, name=...)`` in
  a root context, evaluated in child contexts holding ``__env``-style
  keys.
- Murano's engine: ``@specs.parameter`` with ``yaqltypes`` types,
  ``@specs.method``/``@specs.extension_method``, lazy ``Lambda``
  arguments, injected engines and contexts, ``@specs.name`` and
  ``@specs.yaql_property``.
"""

import json

import pytest

import muranopl.yaql as my_yaql
from muranopl.yaql import exceptions as my_exceptions
from muranopl.yaql.language import specs as my_specs
from muranopl.yaql.language import yaqltypes as my_yaqltypes


def mistral_functions():
    """Mistral's functions (``mistral/utils/expression_utils.py``),
    trimmed of its database."""
    def env_(context):
        return context['__env']

    def execution_(context):
        ex = context['__execution']
        return {'id': ex['id'], 'name': ex['name'], 'input': ex['input']}

    def task_(context, task_name=None):
        tasks = context['__execution']['tasks']
        name = task_name or context['__task_execution']['name']
        return tasks[name]

    def tasks_(context, workflow_execution_id=None, recursive=False,
               state=None):
        tasks = context['__execution']['tasks'].values()
        return [t for t in tasks if state is None or t['state'] == state]

    def json_pp_(context, data=None):
        return json.dumps(data if data is not None else context['$'],
                          indent=4, sort_keys=True)

    def global_(context, var_name):
        return context['__execution']['globals'].get(var_name)

    return {'env': env_, 'execution': execution_, 'task': task_,
            'tasks': tasks_, 'json_pp': json_pp_, 'global': global_}


MISTRAL_DATA = {
    'x': 5,
    'items': [1, 2, 3],
}
MISTRAL_KEYS = {
    '__env': {'region': 'r1', 'limit': 2},
    '__execution': {
        'id': 'ex-1', 'name': 'wf', 'input': {'a': 1},
        'globals': {'g': 'G'},
        'tasks': {'t1': {'name': 't1', 'state': 'SUCCESS', 'result': 10},
                  't2': {'name': 't2', 'state': 'ERROR', 'result': None}},
    },
    '__task_execution': {'name': 't2'},
}
MISTRAL_CASES = [
    ('env().region', 'r1'),
    ('$.items.take(env().limit)', [1, 2]),
    ('execution().id + "/" + execution().name', 'ex-1/wf'),
    ('execution().input.a + $.x', 6),
    ('task(t1).result * 2', 20),
    ("task('t1').state", 'SUCCESS'),
    ('task().name', 't2'),
    ('tasks(state => ERROR).select($.name)', ['t2']),
    ('tasks().len()', 2),
    ('global(g)', 'G'),
    ('json_pp($.items)', '[\n    1,\n    2,\n    3\n]'),
    ('$.items.select($ + env().limit)', [3, 4, 5]),
]


def mistral_run(yaql, expr):
    root = yaql.create_context()
    for name, func in mistral_functions().items():
        root.register_function(func, name=name)
    ctx = root.create_child_context()
    ctx['$'] = MISTRAL_DATA
    for key, value in MISTRAL_KEYS.items():
        ctx[key] = value
    engine = yaql.factory.YaqlFactory().create()
    return engine(expr).evaluate(context=ctx)


def murano_context(yaql, specs, yaqltypes):
    """Functions declared as Murano's engine declares its own
    (``murano/dsl/yaql_functions.py`` and friends)."""
    @specs.parameter('collection', yaqltypes.Iterable())
    @specs.parameter('predicate', yaqltypes.Lambda())
    @specs.method
    def keep(collection, predicate):
        return [x for x in collection if predicate(x)]

    @specs.parameter('name', yaqltypes.String())
    @specs.parameter('default', nullable=True)
    @specs.inject('ctx', yaqltypes.Context())
    def var(ctx, name, default=None):
        value = ctx['$' + name]
        return default if value is None else value

    @specs.parameter('value', yaqltypes.Number())
    @specs.extension_method
    def double(value):
        return value * 2

    @specs.parameter('value', yaqltypes.String())
    @specs.name('double')
    @specs.extension_method
    def double_string(value):
        return value + value

    @specs.parameter('template', yaqltypes.String())
    @specs.inject('engine', yaqltypes.Engine())
    @specs.inject('context', yaqltypes.Context())
    def render(engine, context, template):
        return engine(template).evaluate(context=context)

    @specs.yaql_property(yaqltypes.String())
    def shouted(obj):
        return obj.upper() + '!'

    @specs.parameter('sequence', yaqltypes.Sequence())
    @specs.parameter('selector', yaqltypes.Lambda(), nullable=True)
    @specs.method
    def total(sequence, selector=None):
        return sum(selector(x) if selector else x for x in sequence)

    @specs.no_kwargs
    @specs.parameter('args', yaqltypes.Number())
    def maximum(*args):
        return max(args)

    ctx = yaql.create_context()
    for f in (keep, var, double, double_string, render, shouted,
              total, maximum):
        ctx.register_function(f)
    child = ctx.create_child_context()
    child['limit'] = 2
    return child


MURANO_CASES = [
    ('[1, 2, 3, 4].keep($ > $limit)', None, [3, 4]),
    ('var(limit)', None, 2),
    ('var(missing, 7)', None, 7),
    ('double(21)', None, 42),
    ('"ab".double()', None, 'abab'),
    ('double(1.5)', None, 3.0),
    ("render('$ + 1')", 41, 42),
    ('$.shouted', 'ab', 'AB!'),
    ('[1, 2, 3].total()', None, 6),
    ('[1, 2, 3].total($ * 10)', None, 60),
    ('maximum(3, 9, 4)', None, 9),
]

MURANO_ERRORS = [
    ('keep([1], $ > 0)', 'NoFunctionRegisteredException'),
    ('double(true)', 'NoMatchingFunctionException'),
    ('"x".keep(true)', 'NoMatchingMethodException'),
    ('var(1)', 'NoMatchingFunctionException'),
    ('1.shouted', 'NoMatchingFunctionException'),
]


def murano_run(yaql, specs, yaqltypes, expr, data):
    ctx = murano_context(yaql, specs, yaqltypes)
    engine = yaql.factory.YaqlFactory().create()
    return engine(expr).evaluate(data=data, context=ctx)


def reference():
    """The reference ``yaql``'s modules, if it is installed."""
    ref = pytest.importorskip('yaql', reason='the reference yaql is not '
                              'installed: results not re-recorded')
    import yaql.language.factory  # noqa: F401
    from yaql.language import specs, yaqltypes
    return ref, specs, yaqltypes


def plain(value):
    """A reference result in plain Python types (its frozen dicts and
    tuples as dicts and lists)."""
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict) or hasattr(value, 'items'):
        return {k: plain(v) for k, v in value.items()}
    return value


@pytest.mark.parametrize('expr,expected', MISTRAL_CASES)
def test_mistral_functions(expr, expected):
    assert mistral_run(my_yaql, expr) == expected


@pytest.mark.parametrize('expr,expected', MISTRAL_CASES)
def test_mistral_functions_match_the_reference(expr, expected):
    ref, _, _ = reference()
    assert plain(mistral_run(ref, expr)) == expected


@pytest.mark.parametrize('expr,data,expected', MURANO_CASES)
def test_murano_functions(expr, data, expected):
    got = murano_run(my_yaql, my_specs, my_yaqltypes, expr, data)
    assert got == expected and type(got) is type(expected)


@pytest.mark.parametrize('expr,data,expected', MURANO_CASES)
def test_murano_functions_match_the_reference(expr, data, expected):
    ref, specs, yaqltypes = reference()
    assert plain(murano_run(ref, specs, yaqltypes, expr, data)) == expected


@pytest.mark.parametrize('expr,error', MURANO_ERRORS)
def test_murano_function_errors(expr, error):
    with pytest.raises(getattr(my_exceptions, error)):
        murano_run(my_yaql, my_specs, my_yaqltypes, expr, None)


@pytest.mark.parametrize('expr,error', MURANO_ERRORS)
def test_murano_function_errors_match_the_reference(expr, error):
    ref, specs, yaqltypes = reference()
    from yaql.language import exceptions
    with pytest.raises(getattr(exceptions, error)):
        murano_run(ref, specs, yaqltypes, expr, None)


def resolution_contexts(yaql, specs, yaqltypes):
    """Functions named as the library's: the library is the outermost
    context, so a registered function that takes the call wins, unless
    the two disagree on which arguments are lazy (ambiguous)."""
    @specs.parameter('s', yaqltypes.String())
    @specs.name('len')
    def my_len(s):
        return 'mine'

    @specs.parameter('x', yaqltypes.Integer())
    @specs.name('abs')
    def my_abs(x):
        return 'abs'

    @specs.parameter('n', yaqltypes.Integer())
    def to_upper(n):
        return -n

    def plain_max(a, b):
        return 'plain'

    @specs.parameter('c', yaqltypes.Iterable())
    @specs.method
    def where(c, predicate):
        return 'eager'

    ctx = yaql.create_context()
    ctx.register_function(my_len)
    ctx.register_function(my_abs)
    ctx.register_function(to_upper)
    ctx.register_function(plain_max, name='max')
    child = ctx.create_child_context()
    child.register_function(where)
    return ctx, child


RESOLUTION_CASES = [
    ("len('abc')", 0, 'mine'),
    ('len([1, 2])', 0, 2),
    ('abs(-2)', 0, 'abs'),
    ('abs(-2.5)', 0, 2.5),
    ('toUpper(3)', 0, -3),
    ("'a'.toUpper()", 0, 'A'),
    ('max(1, 2)', 0, 'plain'),
    ("toUpper('a')", 0, 'NoMatchingFunctionException'),
    ('[1, 2].where($ > 1)', 1, 'AmbiguousMethodException'),
]


def resolution_run(yaql, specs, yaqltypes, expr, which):
    ctx = resolution_contexts(yaql, specs, yaqltypes)[which]
    engine = yaql.factory.YaqlFactory().create()
    try:
        return engine(expr).evaluate(context=ctx)
    except Exception as e:
        return type(e).__name__


@pytest.mark.parametrize('expr,which,expected', RESOLUTION_CASES)
def test_resolution_against_the_library(expr, which, expected):
    assert resolution_run(my_yaql, my_specs, my_yaqltypes, expr,
                          which) == expected


@pytest.mark.parametrize('expr,which,expected', RESOLUTION_CASES)
def test_resolution_against_the_library_matches_the_reference(
        expr, which, expected):
    ref, specs, yaqltypes = reference()
    assert resolution_run(ref, specs, yaqltypes, expr, which) == expected


INSERTIONS = [
    ('and', True, '&', 'BINARY_LEFT_ASSOCIATIVE', True),
    ('and', True, '&&', 'BINARY_LEFT_ASSOCIATIVE', False),
    ('not', False, '!', 'PREFIX_UNARY', False),
    (None, True, ':', 'BINARY_LEFT_ASSOCIATIVE', True),
    ('->', True, '~>', 'BINARY_RIGHT_ASSOCIATIVE', True),
]


def test_operator_table_edits_match_the_reference():
    ref, _, _ = reference()
    from yaql.language import factory as ref_factory
    from muranopl.yaql import factory as my_factory
    mine, theirs = my_factory.YaqlFactory(), ref_factory.YaqlFactory()
    assert mine.operators == theirs.operators
    from yaql import legacy as ref_legacy
    from muranopl.yaql import legacy as my_legacy
    assert my_legacy.YaqlFactory().operators == \
        ref_legacy.YaqlFactory().operators
    for existing, binary, new, kind, group in INSERTIONS:
        mine.insert_operator(existing, binary, new,
                             getattr(my_factory.OperatorType, kind), group)
        theirs.insert_operator(existing, binary, new,
                               getattr(ref_factory.OperatorType, kind), group)
        assert mine.operators == theirs.operators
    with pytest.raises(ValueError):
        mine.insert_operator('nope', True, '#', 'BINARY_LEFT_ASSOCIATIVE',
                             False)
    # An inserted operator above `.` leaves `$.a[0]` alone.
    engine = mine.create()
    assert engine('$.a[0]').evaluate(data={'a': [1]},
                                     context=my_yaql.create_context()) == 1


# Each inserted operator's function returns its name and operands, so a
# result shows how the expression was grouped.
OPERATOR_CASES = [
    ('1 & 2 and 3 & 4', ['&', ['&', 1, 3], 4]),
    ('1 && 2 and 3', 3),
    ('1 && 2 = 2', ['&&', 1, True]),
    ('!true or ! false', ['!', True]),
    ('x: 2 * 2', ['.:', 'x', 2, '.:', 'x', 2]),
    ('1 ~> 2 ~> 3', ['~>', 1, ['~>', 2, 3]]),
    # `*` repeats the list `2 ** (3 ** 2)` made.
    ('2 ** 3 ** 2 * 2', ['**', 2, ['**', 3, 2], '**', 2, ['**', 3, 2]]),
    ('5 sq + 1', 26),
    ('1 xor 0 or 0', ['xor', 1, 0]),
    ('xor(1)', 'xor function'),
]


def operator_run(yaql_module, factory_module, specs, expr):
    f = factory_module.YaqlFactory()
    t = factory_module.OperatorType
    for existing, binary, new, kind, group in INSERTIONS + [
            ('*', True, '**', 'BINARY_RIGHT_ASSOCIATIVE', False),
            ('-', False, 'sq', 'SUFFIX_UNARY', False),
            ('or', True, 'xor', 'BINARY_LEFT_ASSOCIATIVE', False)]:
        f.insert_operator(existing, binary, new, getattr(t, kind), group)
    ctx = yaql_module.create_context()

    def op(name, show):
        @specs.name(name)
        def impl(*args):
            return [show, *args]
        ctx.register_function(impl)

    for name in ('&', '&&', '~>', '**', 'xor'):
        op('#operator_' + name, name)
    op('#unary_operator_!', '!')

    @specs.name('#operator_:')
    def colon(a, b):
        return ['.:', a, b]

    @specs.name('#unary_operator_sq')
    def sq(a):
        return a * a

    @specs.name('xor')
    def xor(a):
        return 'xor function'

    for fn in (colon, sq, xor):
        ctx.register_function(fn)
    return f.create()(expr).evaluate(data={'a': 5}, context=ctx)


@pytest.mark.parametrize('expr,expected', OPERATOR_CASES)
def test_inserted_operators_parse_at_their_level(expr, expected):
    from muranopl.yaql import factory as my_factory
    assert operator_run(my_yaql, my_factory, my_specs, expr) == expected


@pytest.mark.parametrize('expr,expected', OPERATOR_CASES)
def test_inserted_operators_match_the_reference(expr, expected):
    ref, specs, _ = reference()
    from yaql.language import factory as ref_factory
    assert plain(operator_run(ref, ref_factory, specs, expr)) == expected


def test_invalid_operator_tables_are_refused():
    from muranopl.yaql import factory as my_factory
    f = my_factory.YaqlFactory()
    f.insert_operator('and', True, '+',
                      my_factory.OperatorType.BINARY_LEFT_ASSOCIATIVE, True)
    with pytest.raises(my_exceptions.InvalidOperatorTableException):
        f.create()


def test_meta_returns_context_and_definitions():
    @specs_meta_case
    def f(context, x):
        return x * 2, context

    @specs_meta_case
    def gen(context, n):
        yield context
        yield from range(n)
    ctx = my_yaql.create_context()
    ctx.register_function(f)
    ctx.register_function(gen)
    assert my_yaql.evaluate('f(21)', context=ctx) == 42
    assert my_yaql.evaluate('f(21) + 1', context=ctx) == 43
    assert my_yaql.evaluate('gen(3).sum()', context=ctx) == 3
    fd = my_specs.get_function_definition(f)
    assert fd.meta == {'owner': 'murano'} and fd.returns_context
    # A definition called from Python, as the reference's
    # FunctionDefinition.__call__.
    def g(a, b, *args, **kwargs):
        return a, b, args, kwargs
    call = my_specs.get_function_definition(g)(None, ctx)
    assert call(1, 2, 5, kw=3) == (1, 2, (5,), {'kw': 3})


def specs_meta_case(func):
    return my_specs.meta('owner', 'murano')(my_specs.returns_context(func))


def test_the_references_import_paths():
    from muranopl.yaql.language import (  # noqa: F401
        contexts, conventions, exceptions, factory, specs, utils, yaqltypes)
    from muranopl.yaql import legacy, yaql_interface, yaqlization  # noqa: F401
    assert exceptions.NoMatchingFunctionException is \
        my_exceptions.NoMatchingFunctionException
    assert utils.NO_VALUE is my_yaql.utils.NO_VALUE
    assert contexts.Context is my_yaql.Context
    assert factory.YaqlFactory is my_yaql.factory.YaqlFactory
    assert conventions.CamelCaseConvention().convert_function_name(
        'to_upper_') == 'toUpper'


def test_declared_functions_in_evaluate_many_and_threads():
    import threading

    @my_specs.parameter('x', my_yaqltypes.Integer())
    @my_specs.inject('ctx', my_yaqltypes.Context())
    def scaled(ctx, x):
        return x * ctx['$k']

    ctx = my_yaql.create_context()
    ctx.register_function(scaled)
    ctx['k'] = 3
    expr = my_yaql.compile('$.select(scaled($))')
    items = [[i, i + 1] for i in range(200)]
    assert expr.evaluate_many(items, context=ctx) == [
        [3 * i, 3 * i + 3] for i in range(200)]
    got, errors = [], []

    def run():
        try:
            got.append(expr.evaluate([1, 2], context=ctx))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)
    threads = [threading.Thread(target=run) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and got == [[3, 6]] * 8


def rules_context(yaql, specs, yaqltypes):
    @specs.parameter('rules', yaqltypes.MappingRule())
    @specs.no_kwargs
    def pick(value, *rules):
        for rule in rules:
            if rule.source() == value:
                return rule.destination()
        return None

    @specs.parameter('rule', yaqltypes.MappingRule())
    @specs.no_kwargs
    def sides(rule):
        return [rule.source(), rule.destination()]

    ctx = yaql.create_context()
    ctx.register_function(pick)
    ctx.register_function(sides)
    return ctx


RULE_CASES = [
    ('pick(2, 1 => a, 2 => b)', 'b'),
    ('pick(x, y => 1, x => 2)', 2),
    ('pick(3, 1 => a)', None),
    ('sides(1 + 1 => $ * 3)', [2, 21]),
    ('sides(k => v)', ['k', 'v']),
    ('pick(1 => 2)', None),
    ('sides(1, 2)', 'NoMatchingFunctionException'),
]


def rules_run(yaql, specs, yaqltypes, expr):
    ctx = rules_context(yaql, specs, yaqltypes)
    engine = yaql.factory.YaqlFactory().create()
    try:
        return plain(engine(expr).evaluate(data=7, context=ctx))
    except Exception as e:
        return type(e).__name__


@pytest.mark.parametrize('expr,expected', RULE_CASES)
def test_mapping_rule_parameters(expr, expected):
    assert rules_run(my_yaql, my_specs, my_yaqltypes, expr) == expected


@pytest.mark.parametrize('expr,expected', RULE_CASES)
def test_mapping_rule_parameters_match_the_reference(expr, expected):
    ref, specs, yaqltypes = reference()
    assert rules_run(ref, specs, yaqltypes, expr) == expected


def test_context_changes_after_an_evaluation_are_seen():
    root = my_yaql.create_context()
    child = root.create_child_context()
    expr = my_yaql.compile('$x')
    root['x'] = 1
    assert expr.evaluate(context=child) == 1
    root['x'] = 2
    assert expr.evaluate(context=child) == 2
    child['x'] = 3
    assert expr.evaluate(context=child) == 3
    del child['x']
    assert expr.evaluate(context=child) == 2
    call = my_yaql.compile('f(1)')
    with pytest.raises(my_exceptions.NoFunctionRegisteredException):
        call.evaluate(context=child)
    root.register_function(lambda x: x + 1, name='f')
    assert call.evaluate(context=child) == 2
    # A declared function registered later, nearer: it wins.
    @my_specs.parameter('x', my_yaqltypes.Integer())
    def g(x):
        return -x
    child.register_function(g, name='f')
    assert call.evaluate(context=child) == -1


def dict_param_run(yaql_module, specs, expr, data=None):
    """A `dict`-typed parameter never takes a YAQL dictionary (the
    reference's are frozen); a `Mapping`-typed one does."""
    import collections.abc
    ctx = yaql_module.create_context()

    @specs.parameter('d', dict)
    def pdict(d):
        return 'dict'

    @specs.parameter('d', collections.abc.Mapping)
    def mapping(d):
        return sorted(d.items())

    for fn in (pdict, mapping):
        ctx.register_function(fn)
    engine = yaql_module.language.factory.YaqlFactory().create()
    try:
        return engine(expr).evaluate(data=data, context=ctx)
    except Exception as e:
        return type(e).__name__


DICT_PARAM_CASES = [
    ('pdict({a => 1})', 'NoMatchingFunctionException'),
    ('pdict($)', 'NoMatchingFunctionException'),
    ('pdict(dict(a => 1))', 'NoMatchingFunctionException'),
    ('pdict(null)', 'NoMatchingFunctionException'),
    ('mapping($)', [['a', 1]]),
    ('mapping({b => 2})', [['b', 2]]),
]


@pytest.mark.parametrize('expr,expected', DICT_PARAM_CASES)
def test_dict_typed_parameters_refuse_yaql_dicts(expr, expected):
    import muranopl.yaql.language.factory  # noqa: F401
    got = dict_param_run(my_yaql, my_specs, expr, {'a': 1})
    assert plain(got) == expected


@pytest.mark.parametrize('expr,expected', DICT_PARAM_CASES)
def test_dict_typed_parameters_match_the_reference(expr, expected):
    ref, specs, _ = reference()
    assert plain(dict_param_run(ref, specs, expr, {'a': 1})) == expected


def lambda_context_run(yaql_module, specs, yaqltypes, expr):
    ctx = yaql_module.create_context()

    @specs.parameter('body', yaqltypes.Lambda(with_context=True))
    def withx(context, body):
        child = context.create_child_context()
        child['$x'] = 5
        return body(child)

    @specs.parameter('body', yaqltypes.Lambda(with_context=True))
    def withargs(context, body):
        child = context.create_child_context()
        child['$y'] = 10
        return body(child, 1, 2)

    @specs.parameter('body', yaqltypes.Lambda())
    def plain(body):
        return body(7)

    for fn in (withx, withargs, plain):
        ctx.register_function(fn)
    engine = yaql_module.language.factory.YaqlFactory().create()
    return engine(expr).evaluate(data=3, context=ctx)


LAMBDA_CONTEXT_CASES = [
    ('withx($x + 1)', 6),
    ('withx($x * $)', 15),
    ('withargs($y + $1 + $2)', 13),
    ('plain($ * 2)', 14),
    ('let(x => 1) -> withx($x)', 5),
]


@pytest.mark.parametrize('expr,expected', LAMBDA_CONTEXT_CASES)
def test_lambda_with_context_runs_in_that_context(expr, expected):
    import muranopl.yaql.language.factory  # noqa: F401
    assert lambda_context_run(my_yaql, my_specs, my_yaqltypes,
                              expr) == expected


@pytest.mark.parametrize('expr,expected', LAMBDA_CONTEXT_CASES)
def test_lambda_with_context_matches_the_reference(expr, expected):
    ref, specs, yaqltypes = reference()
    assert lambda_context_run(ref, specs, yaqltypes, expr) == expected


def typed_defaults_run(yaql, expr):
    """Plain functions whose defaults type their parameters."""
    def f(x, opts={}):
        return len(opts)

    def g(x, n=0):
        return x * n

    ctx = yaql.create_context()
    ctx.register_function(f)
    ctx.register_function(g)
    engine = yaql.factory.YaqlFactory().create()
    try:
        return engine(expr).evaluate(context=ctx.create_child_context())
    except Exception as e:  # noqa: BLE001  the error's class is the answer
        return type(e).__name__


TYPED_DEFAULT_CASES = [
    ('f(1)', 0),
    ('f(1, opts => null)', 'TypeError'),
    ('g(,2)', 'NoMatchingFunctionException'),
    ('[g(2, 3), g(2), g(x => 3, n => 2)]', [6, 0, 6]),
    ('f(1, dict(a => 1))', 'NoMatchingFunctionException'),
    ('f(1, {a => 1})', 'NoMatchingFunctionException'),
    ('f(1, null)', 'TypeError'),
    ('g(2, 3)', 6),
    ('g(2, 1.5)', 'NoMatchingFunctionException'),
    ('g(2, true)', 2),
    ('g(2, null)', 'TypeError'),
    ('g(2)', 0),
    ('g(2, "a")', 'NoMatchingFunctionException'),
]


@pytest.mark.parametrize('expr,expected', TYPED_DEFAULT_CASES)
def test_defaults_type_plain_functions(expr, expected):
    assert typed_defaults_run(my_yaql, expr) == expected


@pytest.mark.parametrize('expr,expected', TYPED_DEFAULT_CASES)
def test_defaults_type_plain_functions_as_in_the_reference(expr, expected):
    ref, _, _ = reference()
    assert typed_defaults_run(ref, expr) == expected
