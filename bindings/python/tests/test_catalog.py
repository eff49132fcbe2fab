"""muranopl.Catalog: validation, schemas, runs and tests of MuranoPL
packages."""

import json
import re
import threading

import pytest

import muranopl
from conftest import APPS, EXAMPLES, need_shared

SERVER = {'?': {'id': 's1', 'type': 'com.example.Server'}, 'name': 'a',
          'port': 70000, 'tags': [], 'enabled': True,
          'settings': {'timeout': 1, 'label': 'x'}}

HELLO = {'?': {'id': 'app', 'type': 'com.example.Hello'},
         'instance': {'?': {'id': 'vm',
                            'type': 'io.murano.resources.LinuxMuranoInstance'},
                      'name': 'web', 'flavor': 'm1.small', 'image': 'ubuntu'}}


@pytest.fixture(scope='module')
def servers():
    return muranopl.Catalog.load([EXAMPLES / 'validate'])


def test_validate_names_path_property_and_contract(servers):
    [v] = servers.validate(SERVER)
    assert (v.path, v.property) == ('$.Objects', 'port')
    assert '70000' in v.message
    file, line, col = v.position.rsplit(':', 2)
    assert file.endswith('Classes/Server.yaml') and int(line) > 0
    assert servers.validate(json.dumps(SERVER)) == [v]
    assert servers.validate(dict(SERVER, port=80)) == []


def test_validate_objects_agrees_with_validate(servers):
    bare = {k: v for k, v in SERVER.items() if k != '?'}
    objects = [dict(bare, port=p) for p in (80, 0, 443, 99999)]
    objects.append(dict(bare, port=80, tags=[None], settings={'label': 'x'}))
    got = servers.validate_objects('com.example.Server', objects)
    assert [sorted(p for p, _ in found) for found in got] == [
        [], ['port'], [], ['port'], ['settings', 'tags']]
    assert '99999' in got[3][0][1]
    # The same verdicts as loading each as a model.
    models = [dict(o, **{'?': SERVER['?']}) for o in objects]
    assert [sorted(v.property for v in found)
            for found in servers.validate_many(models)] == [
        sorted(p for p, _ in found) for found in got]
    [[(prop, message)]] = servers.validate_objects('com.example.Server', [7])
    assert prop == '' and message == 'an object must be a dict, not int'

    with pytest.raises(muranopl.MuranoPLError):
        servers.validate_objects('com.example.Nothing', [bare])
    # A class whose contracts name other objects needs a model.
    with pytest.raises(ValueError, match='Fleet.servers'):
        servers.validate_objects('com.example.Fleet', [{'servers': []}])


def test_validate_many_in_order(servers):
    models = [dict(SERVER, port=p) for p in (80, 0, 443, 99999)]
    got = servers.validate_many(models)
    assert [len(v) for v in got] == [0, 1, 0, 1]


def test_a_model_that_cannot_load_raises(servers):
    bad = {'?': {'id': 'x', 'type': 'no.such.Class'}}
    with pytest.raises(muranopl.MuranoPLError) as e:
        servers.validate(bad)
    assert e.value.kind == 'NoClassFound'
    got = servers.validate_many([SERVER, bad], return_exceptions=True)
    assert len(got[0]) == 1 and isinstance(got[1], muranopl.MuranoPLError)


def test_schema(servers):
    schemas = servers.schema('com.example.Server', class_version='=1')
    props = schemas['']['properties']
    assert 'port' in props and props['port']['type'] == 'integer'
    with pytest.raises(muranopl.MuranoPLError) as e:
        servers.schema('no.such.Class')
    assert e.value.kind == 'NoClassFound'


def test_run_deploys_to_the_simulated_cloud():
    cat = muranopl.Catalog.load([EXAMPLES / 'hello-app'])
    r = cat.run(HELLO)
    assert r.ok and r.error is None
    assert 'hello from 10.' in json.dumps(r.record)
    assert isinstance(r.record['log'], list)
    assert r.model['Objects']['?']['type'].startswith('io.murano.Environment')
    failed = cat.run(HELLO, method='noSuchMethod')
    assert not failed.ok and failed.error['kind']


def test_catalogs_are_shared_between_threads(servers):
    out = [None] * 4

    def work(i):
        out[i] = [len(servers.validate(dict(SERVER, port=p)))
                  for p in range(i, 70000 * 2, 7000)]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(o is not None and sum(o) > 0 for o in out)


def test_loading_a_missing_package_raises():
    with pytest.raises(ValueError):
        muranopl.Catalog.load([EXAMPLES / 'no-such-package'])


def test_the_fixtures_catalogue_deploys():
    need_shared()
    apps = deployed = 0
    for d in sorted(APPS.iterdir()):
        manifest = d / 'manifest.yaml'
        if not (d / 'UI' / 'ui.yaml').is_file() or not re.search(
                r'^Type: *Application', manifest.read_text(), re.M):
            continue
        apps += 1
        try:
            model = muranopl.ui_model(d, [APPS])
        except ValueError:
            continue
        result = muranopl.Catalog.load([d], search_path=[APPS]).run(model)
        deployed += result.ok
        if result.ok:
            assert muranopl.Catalog.load([d], search_path=[APPS]).validate(
                result.model) == []
    # The CLI's figure (scripts/check-apps): 36 of the 43.
    assert apps == 43 and deployed >= 36


def test_murano_tests_run():
    need_shared()
    results = muranopl.Catalog.test(APPS / 'Tomcat', search_path=[APPS])
    assert results and all(r.ok for r in results), results
    with pytest.raises(ValueError):
        muranopl.Catalog.test(APPS / 'Tomcat', ['NoSuchTest'],
                              search_path=[APPS])
