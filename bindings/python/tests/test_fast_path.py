"""The in-place path of ``validate_objects`` and ``validate_many``: records
the class's compiled contracts show valid are read where they are, the
rest is converted and checked. Whatever path a record takes, the answer is
the full checker's: the same violations, messages and positions.

The full checker's answer is had by a dict subclass (read by the plan as
"ask": converted and checked the full way) for ``validate_objects``, and
by ``validate`` (one model, always loaded) for ``validate_many``."""

import collections.abc
import json
import re

import pytest

import muranopl

MANIFEST = """Format: 1.4
Type: Library
FullName: fast.path
Name: fast path
Version: 1.0.0
Classes:
  fast.Port: Port.yaml
  fast.Mixed: Mixed.yaml
  fast.Init: Init.yaml
  fast.Tag: Tag.yaml
"""
PORT = """Namespaces: {=: fast}
Name: Port
Properties:
  port:
    Contract: $.notNull().check(isInteger($) and $ > 0 and $ < 65536)
  scope:
    Contract: $.notNull().check($ in list(public, cloud, host, internal))
  name:
    Contract: $.notNull().check(isString($))
  ratio:
    Contract: $.check($ = null or (isNumber($) and $ >= 0))
  settings:
    Contract:
      timeout: $.notNull().check(isInteger($) and $ >= 0)
      label: $.check($ = null or isString($))
  ports:
    Contract: [$.notNull().check(isInteger($) and $ > 0 and $ < 65536), 1, 8]
  note:
    Contract: $
"""
# A default, a runtime property, a check with a message, a key contract:
# what the plan leaves to the checker.
MIXED = """Namespaces: {=: fast}
Name: Mixed
Properties:
  size:
    Contract: $.int()
    Default: 3
  seen:
    Contract: $.int()
    Usage: Runtime
  tag:
    Contract: $.string().check($ != bad, 'no bad tags')
  free:
    Contract: {$.string(): $.int()}
"""
# A meta-class: no object of it can be loaded.
TAG = """Namespaces: {=: fast}
Name: Tag
Usage: Meta
Properties:
  x:
    Contract: $.notNull().check(isInteger($))
"""
INIT = """Namespaces: {=: fast}
Name: Init
Properties:
  port:
    Contract: $.notNull().check(isInteger($) and $ > 0)
Methods:
  .init:
    Body:
      - $.port: 0
"""


@pytest.fixture(scope='module')
def cat(tmp_path_factory):
    pkg = tmp_path_factory.mktemp('fast')
    (pkg / 'Classes').mkdir()
    (pkg / 'manifest.yaml').write_text(MANIFEST)
    (pkg / 'Classes' / 'Port.yaml').write_text(PORT)
    (pkg / 'Classes' / 'Mixed.yaml').write_text(MIXED)
    (pkg / 'Classes' / 'Init.yaml').write_text(INIT)
    (pkg / 'Classes' / 'Tag.yaml').write_text(TAG)
    return muranopl.Catalog.load([pkg])


class Slow(dict):
    """A dict the plan does not read: converted and checked in full."""


class Int(int):
    pass


class Str(str):
    pass


GOOD = {'port': 80, 'scope': 'public', 'name': 'web', 'ratio': 0.5,
        'settings': {'timeout': 5, 'label': 'x'}, 'ports': [80, 443],
        'note': 'n'}


def variants():
    """(what, record): valid, invalid and undecidable records."""
    def w(**kw):
        return dict(GOOD, **kw)

    def without(*keys):
        return {k: v for k, v in GOOD.items() if k not in keys}
    return [
        ('valid', GOOD),
        ('valid, optional keys missing', without('ratio', 'note')),
        ('valid, nulls', w(ratio=None, note=None,
                           settings={'timeout': 0, 'label': None})),
        ('valid, 8 ports', w(ports=list(range(1, 9)))),
        ('valid, int ratio', w(ratio=2)),
        ('valid, negative zero ratio', w(ratio=-0.0)),
        ('string for int', w(port='80')),
        ('True for int', w(port=True)),
        ('False for int', w(port=False)),
        ('True in ports', w(ports=[80, True])),
        ('big int', w(port=2 ** 70)),
        ('big negative int', w(port=-2 ** 64)),
        ('largest i64', w(port=2 ** 63 - 1)),
        ('float for int', w(port=80.0)),
        ('nan ratio', w(ratio=float('nan'))),
        ('negative ratio', w(ratio=-1.5)),
        ('zero port', w(port=0)),
        ('missing required key', without('name')),
        ('missing dict', without('settings')),
        ('extra key', w(extra=1)),
        ('extra key, unconvertible value', w(extra={1, 2})),
        ('unknown scope', w(scope='nowhere')),
        ('non-ASCII name', w(name='wébsérvér ☃')),
        ('non-ASCII scope', w(scope='públic')),
        ('lone surrogate name', w(name='\ud800')),
        ('int subclass', w(port=Int(80))),
        ('str subclass', w(name=Str('web'))),
        ('dict subclass settings', w(settings=Slow(timeout=5))),
        ('nested: timeout negative', w(settings={'timeout': -1})),
        ('nested: timeout missing', w(settings={'label': 'x'})),
        ('nested: label an int', w(settings={'timeout': 1, 'label': 2})),
        ('nested: extra key', w(settings={'timeout': 1, 'more': 2})),
        ('nested: settings not a dict', w(settings='none')),
        ('nested: settings a list', w(settings=[1])),
        ('nested: settings null', w(settings=None)),
        ('nested: object header', w(settings={'timeout': 1,
                                              '?': {'id': 'x', 'type': 'fast.Port'}})),
        ('list: empty', w(ports=[])),
        ('list: too long', w(ports=list(range(1, 10)))),
        ('list: a string item', w(ports=[80, '443'])),
        ('list: a null item', w(ports=[80, None])),
        ('list: a dict item', w(ports=[80, {'a': 1}])),
        ('list: a scalar', w(ports=80)),
        ('list: a tuple', w(ports=(80, 443))),
        ('list: null', w(ports=None)),
        ('list: 40 items', w(ports=[1] * 40)),
        ('any: a list', w(note=[1, 2])),
        ('any: a dict', w(note={'a': 1})),
        ('any: a set', w(note={1})),
        ('several violations', w(port='x', name=None, ports=[])),
    ]


IDS = [what for what, _ in variants()]


MUST_FAIL = {
    'string for int', 'True for int', 'False for int', 'True in ports',
    'big int', 'big negative int', 'float for int', 'negative ratio',
    'zero port', 'missing required key', 'missing dict', 'unknown scope',
    'nested: timeout negative', 'nested: timeout missing',
    'nested: label an int', 'nested: settings not a dict',
    'nested: settings null', 'list: empty', 'list: too long',
    'list: a string item', 'list: a null item', 'list: a dict item',
    'several violations'}


@pytest.mark.parametrize('what', IDS)
def test_objects_answer_as_the_full_checker(cat, what):
    record = dict(variants())[what]
    try:
        want = cat.validate_objects('fast.Port', [Slow(record)])
    except Exception as e:
        with pytest.raises(type(e)):
            cat.validate_objects('fast.Port', [record] * 70)
        return
    # One object (the chains as the JIT mode has them) and a batch
    # (compiled now).
    assert cat.validate_objects('fast.Port', [record]) == want
    assert cat.validate_objects('fast.Port', [record] * 70) == want * 70
    if what.startswith('valid'):
        assert want == [[]]
    if what in MUST_FAIL:
        assert want != [[]]


def test_objects_in_one_batch_answer_as_one_by_one(cat):
    records = [r for w, r in variants() if w != 'lone surrogate name'] * 30
    got = cat.validate_objects('fast.Port', records)
    assert got == cat.validate_objects('fast.Port', [Slow(r) for r in records])
    n = len(IDS) - 1
    assert got[:n] == [cat.validate_objects('fast.Port', [r])[0]
                       for r in records[:n]]
    # Results are fresh lists, not shared.
    got[0].append('x')
    assert got[n] == []


def test_non_dict_objects_are_reported(cat):
    got = cat.validate_objects('fast.Port', [GOOD, 7, None, [GOOD], 'x'])
    assert got[0] == []
    assert [m for [(_, m)] in got[1:]] == [
        'an object must be a dict, not int',
        'an object must be a dict, not NoneType',
        'an object must be a dict, not tuple',  # as the engine names a list
        'an object must be a dict, not str']


def test_objects_from_a_generator(cat):
    records = [r for w, r in variants() if w != 'lone surrogate name']
    assert (cat.validate_objects('fast.Port', (r for r in records))
            == cat.validate_objects('fast.Port', records))


def test_an_unconvertible_value_raises_as_before(cat):
    class Odd:
        pass
    bad = dict(GOOD, extra=Odd())
    with pytest.raises(TypeError):
        cat.validate_objects('fast.Port', [GOOD] * 100 + [bad])
    with pytest.raises(TypeError):
        cat.validate_objects('fast.Port', [GOOD, dict(GOOD, port=Odd())])


@pytest.mark.parametrize('record', [
    {'size': 1, 'tag': 'ab', 'free': {'a': 1}},
    {'tag': 'ab'},
    {'size': 1, 'seen': 2},
    {'size': '4', 'tag': 'bad', 'free': {'a': 'x'}},
    {'free': {1: 2}},
])
def test_what_the_plan_leaves_to_the_checker(cat, record):
    got = cat.validate_objects('fast.Mixed', [record] * 70)
    assert got == cat.validate_objects('fast.Mixed', [Slow(record)] * 70)


def model(record, i=0, type_='fast.Port'):
    return dict(record, **{'?': {'id': 'o%d' % i, 'type': type_}})


def as_tuples(found):
    return [(v.path, v.property, v.message, v.position) for v in found]


@pytest.mark.parametrize('what', IDS)
def test_models_answer_as_validate(cat, what):
    record = dict(variants())[what]
    m = model(record)
    try:
        want = cat.validate(m)
    except Exception as e:
        with pytest.raises(type(e)):
            cat.validate_many([m] * 70)
        return
    [got] = cat.validate_many([m])
    assert got == want, what
    assert cat.validate_many([m] * 70) == [want] * 70
    assert all(isinstance(v, muranopl.Violation) for v in got)
    if what.startswith('valid'):
        assert got == []


def test_models_in_one_batch_answer_as_validate(cat):
    ms = [model(r, i) for i, (w, r) in enumerate(variants())
          if w != 'lone surrogate name']
    ms = ms * 20
    # Ids repeat across models: each model is validated on its own.
    got = cat.validate_many(ms, return_exceptions=True)
    for m, g in zip(ms, got):
        try:
            want = cat.validate(m)
        except muranopl.MuranoPLError as e:
            assert isinstance(g, muranopl.MuranoPLError) and str(g) == str(e)
            continue
        assert g == want
    assert [as_tuples(g) for g in got] == [
        list(t) for t in cat._native.validate_many(ms, True)]


@pytest.mark.parametrize('m', [
    # Other header keys, a wrapper, JSON text, a version in the type, a
    # class that runs code when loaded, an unknown class, no id.
    dict(model(GOOD), **{'?': {'id': 'a', 'type': 'fast.Port', 'name': 'n'}}),
    {'Objects': model(GOOD)},
    # A header, valid or wrong properties, and `Objects` beside them.
    dict(model(GOOD), Objects=model(GOOD, 1)),
    dict(model(dict(GOOD, port=0)), Objects=model(GOOD, 1)),
    dict(model(GOOD), Objects=None),
    json.dumps(model(GOOD)),
    json.dumps(model(dict(GOOD, port=0))),
    model(GOOD, type_='fast.Port/1.0.0@fast.path'),
    {'?': {'id': 'i', 'type': 'fast.Init'}, 'port': 80},
    {'?': {'id': 'i', 'type': 'fast.Init'}, 'port': 0},
    {'?': {'type': 'fast.Port'}, **GOOD},
    {'?': {'id': 1, 'type': 'fast.Port'}, **GOOD},
    model({'size': '4', 'tag': 'bad'}, type_='fast.Mixed'),
    model({'x': 1}, type_='fast.Tag'),
    model({'x': 'y'}, type_='fast.Tag'),
])
def test_models_the_quick_way_does_not_take(cat, m):
    try:
        want = cat.validate(m)
    except Exception as e:
        with pytest.raises(type(e), match=re.escape(str(e))):
            cat.validate_many([m] * 70)
        return
    assert cat.validate_many([m] * 70) == [want] * 70


def test_an_unknown_class_raises_in_order(cat):
    bad = model(GOOD, type_='fast.Nothing')
    with pytest.raises(muranopl.MuranoPLError):
        cat.validate_many([model(GOOD)] * 100 + [bad])
    got = cat.validate_many([model(GOOD), bad, model(dict(GOOD, port=0))],
                            return_exceptions=True)
    assert got[0] == [] and isinstance(got[1], muranopl.MuranoPLError)
    assert [v.property for v in got[2]] == ['port']


def repeats():
    """Records that differ only where the plan passes them, or only in
    the type of a wrong value (which the answer must keep apart)."""
    out = []
    for i in range(40):
        out.append(dict(GOOD, port='80', name='n%d' % i))   # same wrong port
        out.append(dict(GOOD, port=80.0, ports=[i % 7 + 1]))
        out.append(dict(GOOD, port=True))
        out.append(dict(GOOD, port=1 if i % 2 else 0))
        out.append(dict(GOOD, settings={'timeout': -1, 'label': 'l%d' % (i % 3)}))
        out.append(dict(GOOD, ports=[i % 5 + 1, 0]))
        out.append(dict(GOOD, note=[i % 2], port=0))
        # Not given, and given as null: apart.
        out.append({k: v for k, v in GOOD.items() if k != 'name'})
        out.append(dict(GOOD, name=None))
        out.append(dict(GOOD, scope='x%d' % (i % 2)))
    return out


def test_repeated_wrong_values_answer_each_as_alone(cat):
    records = repeats()
    got = cat.validate_objects('fast.Port', records)
    alone = [cat.validate_objects('fast.Port', [r])[0] for r in records]
    assert got == alone
    assert got[0] != got[1] != got[2]
    # Each answer is a list of its own.
    got[0].append('x')
    assert got[7] == alone[7]


def test_repeated_wrong_models_answer_each_as_validate(cat):
    ms = [model(r, i) for i, r in enumerate(repeats())]
    got = cat.validate_many(ms)
    assert got == [cat.validate(m) for m in ms]
    got[0].append('x')
    assert got[7] == cat.validate(ms[7])
    # Models of a class whose quick check is not taken, repeated.
    mixed = [model({'size': '4', 'tag': 'bad'}, i, 'fast.Mixed')
             for i in range(70)]
    assert cat.validate_many(mixed) == [cat.validate(m) for m in mixed]


def test_the_collector_is_paused_only_while_results_are_built(cat):
    """The cyclic collector is paused while the result lists are built
    and runs again after (a paused one stays paused); results are the
    same either way, and equal violations of one batch are one object."""
    import gc
    records = repeats()
    ms = [model(r, i) for i, r in enumerate(records)]
    assert gc.isenabled()
    objects = cat.validate_objects('fast.Port', records)
    many = cat.validate_many(ms)
    assert gc.isenabled()
    gc.disable()
    try:
        assert cat.validate_objects('fast.Port', records) == objects
        assert cat.validate_many(ms) == many
        assert not gc.isenabled()
    finally:
        gc.enable()
    same = [v for found in many for v in found if v == many[0][0]]
    assert len(same) > 1 and all(v is same[0] for v in same)


def test_headers_with_keys_that_are_not_the_interned_strings(cat):
    """A header's keys equal to `id` and `type` but other objects (built
    at run time) are read as well as the interned ones."""
    key = ''.join
    ms = [{'?': {key(['i', 'd']): 'o%d' % i, key(['ty', 'pe']): 'fast.Port'},
           **dict(GOOD, port=80 if i % 2 else 0)} for i in range(70)]
    assert cat.validate_many(ms) == [cat.validate(m) for m in ms]
    assert cat.validate_many(ms)[0] != [] and cat.validate_many(ms)[1] == []


def test_failures_answer_in_their_turn(cat):
    """A model that cannot be validated (an unknown class) among ones the
    quick way answers: with return_exceptions each failure takes its
    model's place, and without, the first in order raises."""
    bad = model(GOOD, type_='fast.Nothing')
    with pytest.raises(muranopl.MuranoPLError) as alone:
        cat.validate(bad)
    ms = [model(GOOD), bad, model(dict(GOOD, port=0)), bad,
          model({'x': 'y'}, type_='fast.Tag')]
    got = cat.validate_many(ms * 20, return_exceptions=True)
    for i, g in enumerate(got):
        if ms[i % 5] is bad:
            assert isinstance(g, muranopl.MuranoPLError)
            assert str(g) == str(alone.value)
        else:
            assert g == cat.validate(ms[i % 5])
    with pytest.raises(muranopl.MuranoPLError, match=re.escape(str(alone.value))):
        cat.validate_many(ms * 20)


def container_repeats():
    """Records failing on one property whose value is a list or a dict,
    repeated, and values strictly different but equal to Python (``True``
    and ``1``, ``1`` and ``1.0``), or the same entries in another order,
    or nested differently: each answers as it would alone."""
    out = []
    for i in range(30):
        out.append(dict(GOOD, ports=[80, -5], name='n%d' % i))
        out.append(dict(GOOD, ports=[80, 0]))
        out.append(dict(GOOD, ports=[80, 0.0]))
        out.append(dict(GOOD, ports=[80, False]))
        out.append(dict(GOOD, ports=[80, 'x']))
        out.append(dict(GOOD, ports=[80] * 9))
        out.append(dict(GOOD, ports=[80] * 9 + [i % 2]))
        out.append(dict(GOOD, ports=[]))
        out.append(dict(GOOD, ports=[80, [1]]))
        out.append(dict(GOOD, ports=[80, (1,)]))
        out.append(dict(GOOD, settings={'timeout': -1, 'label': 'a'}))
        out.append(dict(GOOD, settings={'label': 'a', 'timeout': -1}))
        out.append(dict(GOOD, settings={'timeout': -1.0, 'label': 'a'}))
        out.append(dict(GOOD, settings={'timeout': -1, 'label': 'a%d' % (i % 3)}))
        out.append(dict(GOOD, settings={'timeout': -1, 'label': {'x': [1, {'y': None}]}}))
        out.append(dict(GOOD, settings={'timeout': -1, 'label': {'x': [1, {'y': False}]}}))
        out.append(dict(GOOD, settings={'label': 'a'}))
        out.append(dict(GOOD, settings={'timeout': 1, 1: 2}))
        out.append(dict(GOOD, settings={'timeout': 1, 'label': 'é' * (i % 2 + 1), 'x': 1}))
        out.append(dict(GOOD, settings=list(range(i % 3 + 70))))
    return out


def test_repeated_wrong_containers_answer_each_as_alone(cat):
    records = container_repeats()
    got = cat.validate_objects('fast.Port', records)
    assert got == [cat.validate_objects('fast.Port', [r])[0] for r in records]
    assert got == cat.validate_objects('fast.Port', [Slow(r) for r in records])
    # Strictly different values get their own answers.
    assert got[1] != got[4] and got[10] != got[12]
    got[0].append('x')
    assert got[20] == cat.validate_objects('fast.Port', [records[20]])[0]


def test_repeated_wrong_container_models_answer_each_as_validate(cat):
    ms = [model(r, i) for i, r in enumerate(container_repeats())]
    got = cat.validate_many(ms)
    assert got == [cat.validate(m) for m in ms]
    got[0].append('x')
    assert got[20] == cat.validate(ms[20])


def keys_of_their_own(record):
    """`record` with key objects of its own (equal strings, not the
    interned ones), as a JSON document loaded alone has them."""
    return json.loads(json.dumps(record))


def test_records_whose_keys_are_other_objects_or_in_another_order(cat):
    """The walk reads a dict's entries in order while their keys are the
    plan's own key objects (those of the first record), else looks keys
    up: records loaded one by one, keys in another order, keys missing,
    extra keys, keys that are not strings: each answers as alone."""
    loaded = json.loads(json.dumps([GOOD] * 3))
    records = loaded + [
        keys_of_their_own(GOOD),
        keys_of_their_own(dict(GOOD, port=0)),
        dict(reversed(list(GOOD.items()))),
        dict(reversed(list(dict(GOOD, port=0).items()))),
        {k: v for k, v in GOOD.items() if k != 'scope'},
        dict(GOOD, settings=dict(reversed(list(GOOD['settings'].items())))),
        dict(GOOD, settings={'label': 'x', 'timeout': 5}),
        dict(GOOD, settings={'timeout': 5, 'label': 'x', 7: 'y'}),
        dict(GOOD, **{'sco' + 'pe': 'public'}),
        {**GOOD, 1: 'one'},
        {**GOOD, None: 'none'},
    ]
    records = records * 30
    got = cat.validate_objects('fast.Port', records)
    assert got == cat.validate_objects('fast.Port', [Slow(r) for r in records])
    assert got[:3] == [[]] * 3 and got[3] == [] and got[4] != []
    ms = [model(r, i) for i, r in enumerate(records)]
    assert cat.validate_many(ms) == [cat.validate(m) for m in ms]
    # Models loaded one by one: their header keys are their own objects.
    ms = [keys_of_their_own(model(dict(GOOD, port=i % 3), i)) for i in range(70)]
    assert cat.validate_many(ms) == [cat.validate(m) for m in ms]


class Sneaky:
    """A key equal to 'timeout' (same hash) whose comparison empties the
    dict holding it, frees what it held, and reports no match."""

    def __init__(self, victim):
        self.victim = victim

    def __hash__(self):
        return hash('timeout')

    def __eq__(self, other):
        self.victim.clear()
        return False


def test_a_key_whose_comparison_changes_the_record(cat):
    """No Python code runs during a walk: a dict with a key that is not
    a string is left to the checker, which is then the one to compare
    (and to find what the comparison left)."""
    settings = {}
    settings[Sneaky(settings)] = 1
    settings['label'] = 'x'
    record = dict(GOOD, settings=settings)
    try:
        want = cat.validate_objects('fast.Port', [Slow(dict(record))])
    except Exception as e:  # noqa: F841
        want = None
    settings2 = {}
    settings2[Sneaky(settings2)] = 1
    settings2['label'] = 'x'
    try:
        got = cat.validate_objects('fast.Port', [dict(GOOD, settings=settings2)] * 70)
    except Exception:
        got = None
    assert (want is None) == (got is None)


def test_many_distinct_failures_answer_each_as_alone(cat):
    """More failures than one batch of checks holds (each its own: no
    answer shared), checked on the pool and on the calling thread."""
    records = [dict(GOOD, port=-i, name='n%d' % i) if i % 3 else
               dict(GOOD, settings={'timeout': -i, 'label': 'l%d' % i})
               for i in range(1, 700)]
    got = cat.validate_objects('fast.Port', records)
    assert got == cat.validate_objects('fast.Port', [Slow(r) for r in records])
    assert all(got)
    ms = [model(r, i) for i, r in enumerate(records)]
    assert cat.validate_many(ms) == [cat.validate(m) for m in ms]


def strings_read_on_other_threads():
    """Records whose strings the threads that share out a batch read in
    every way they can: ASCII in place, other text copied (short, or
    longer than the stack buffer), text too long to copy (left to the
    thread holding the GIL), a key that is not the plan's key object."""
    long_text = 'wébsérvér ☃ ' * 30
    return [
        dict(GOOD, name='web'),
        dict(GOOD, name='wébsérvér ☃'),
        dict(GOOD, name=long_text),
        dict(GOOD, name='x' * (2 << 20)),
        dict(GOOD, name='é' * (1 << 19)),
        dict(GOOD, name='é' * ((1 << 20) + 1)),
        dict(GOOD, scope='públic'),
        dict(GOOD, scope='public ' * 40),
        dict(GOOD, settings={'timeout': 1, 'label': long_text}),
        keys_of_their_own(dict(GOOD, name='wébsérvér')),
        keys_of_their_own(dict(GOOD, port=0)),
    ]


def test_models_read_on_every_core_answer_as_validate(cat):
    """Blocks large enough to be shared out between threads: models of
    the first model's class are read there, the rest (other classes,
    headers of other shapes, JSON text) by the thread holding the GIL;
    every answer is validate's, in order."""
    others = [
        model({'size': '4', 'tag': 'bad'}, 0, 'fast.Mixed'),
        model({'x': 1}, 0, 'fast.Tag'),
        dict(model(GOOD), **{'?': {'id': 'a', 'type': 'fast.Port', 'name': 'n'}}),
        {'?': {'id': 1, 'type': 'fast.Port'}, **GOOD},
        json.dumps(model(dict(GOOD, port=0))),
        {**model(GOOD), 1: 'one'},
    ]
    records = [r for w, r in variants() if w != 'lone surrogate name']
    records += strings_read_on_other_threads()
    ms = [model(r, i) for i, r in enumerate(records)] + others
    ms = [ms[(i * 7) % len(ms)] for i in range(2000)]
    got = cat.validate_many(ms, return_exceptions=True)
    want = {}
    for m, g in zip(ms, got):
        key = id(m)
        if key not in want:
            try:
                want[key] = cat.validate(m)
            except Exception as e:
                want[key] = (type(e), str(e))
        if isinstance(want[key], tuple):
            assert type(g) is want[key][0] and str(g) == want[key][1]
        else:
            assert g == want[key], m
    assert got[0] == [] and any(g for g in got if isinstance(g, list))


def test_a_lone_surrogate_read_on_another_thread_raises_in_turn(cat):
    """Text with a lone surrogate has no UTF-8: left by the threads that
    share out a batch to the thread holding the GIL, whose conversion
    raises, in the model's turn."""
    for bad in (dict(GOOD, name='\ud800'),
                dict(GOOD, settings={'timeout': 1, 'label': '\udfff'})):
        with pytest.raises(UnicodeEncodeError):
            cat.validate(model(bad))
        ms = [model(GOOD, i) for i in range(1500)]
        ms[1000] = model(bad, 1000)
        ms[1200] = json.dumps(model(GOOD, type_='fast.Nothing'))
        with pytest.raises(UnicodeEncodeError):
            cat.validate_many(ms)
        ms[1000] = model(GOOD)
        with pytest.raises(muranopl.MuranoPLError):
            cat.validate_many(ms)


def test_records_read_on_every_core_answer_as_alone(cat):
    records = [r for w, r in variants() if w != 'lone surrogate name']
    records += strings_read_on_other_threads()
    records = [records[(i * 5) % len(records)] for i in range(2000)]
    got = cat.validate_objects('fast.Port', records)
    assert got == cat.validate_objects('fast.Port', [Slow(r) for r in records])


class Emptying(collections.abc.Mapping):
    """A mapping whose conversion (which runs Python code) empties the
    list of models being validated and the dicts of the models in it."""

    def __init__(self, models):
        self.models = models

    def __getitem__(self, key):
        return {'timeout': 1}[key]

    def __iter__(self):
        for m in self.models:
            if isinstance(m, dict):
                m.clear()
        self.models.clear()
        return iter(['timeout'])

    def __len__(self):
        return 1


def test_a_conversion_that_empties_the_models(cat):
    """Code a conversion runs may change the models while they are
    judged: each model is judged as it was when read (or as it is when
    converted), never read after it is freed."""
    ms = [model(dict(GOOD, port=i % 2 + 1, name='n%d' % i), i) for i in range(2000)]
    ms[700] = model(dict(GOOD, settings=Emptying(ms)), 700)
    ms[701] = model(dict(GOOD, port=0), 701)
    intact = [dict(m) for m in ms[:700]]
    held = list(ms)
    got = cat.validate_many(ms)
    assert ms == [] and all(m == {} for m in held[702:])
    assert len(got) == 2000 and all(isinstance(g, list) for g in got)
    # Those before it were judged before it ran, and those after it read
    # valid stay so; the one after it read wrong is judged on what is
    # left of it (its properties read valid are not read again).
    assert got[:700] == [cat.validate(m) for m in intact]
    assert got[702:] == [[]] * 1298
    assert [v.property for v in got[701]] == ['port']
