"""muranopl: a fast engine for YAQL and MuranoPL, OpenStack Murano's
application language.

- :mod:`muranopl.yaql` compiles and evaluates YAQL, and stands in for the
  reference ``yaql`` package (``import muranopl.yaql as yaql``).
- :class:`Catalog` loads MuranoPL packages once, then validates object
  models against their classes' contracts, generates form schemas, runs
  models in a deterministic simulated cloud and runs the packages' tests.

>>> cat = Catalog.load([EXAMPLES / 'validate'])  # the repository's examples/
>>> model = {'?': {'id': 's1', 'type': 'com.example.Server'}, 'name': 'a',
...          'port': 70000, 'tags': [], 'enabled': True,
...          'settings': {'timeout': 1, 'label': 'x'}}
>>> [(v.path, v.property) for v in cat.validate(model)]
[('$.Objects', 'port')]

Every object here may be shared between threads; the GIL is released
while the engine works, and the ``*_many`` methods use every core.
"""

import dataclasses
import os
import pathlib
import typing

from muranopl import _native
from muranopl import yaql
from muranopl._errors import MuranoPLError

__version__ = _native.VERSION
__all__ = ['Catalog', 'MuranoPLError', 'RunResult', 'TestResult',
           'Violation', 'ui_model', 'yaql']

@dataclasses.dataclass(frozen=True)
class Violation:
    """A contract violation: the JSON path of the object in the model
    (``$.Objects.servers[9]``), the property, what is wrong, and the
    contract's ``file:line:col``."""

    path: str
    property: str
    message: str
    position: typing.Optional[str] = None

    def __str__(self):
        return f'{self.path}.{self.property}: {self.message}'


@dataclasses.dataclass(frozen=True)
class RunResult:
    """What a run did: ``ok``, the method's ``value`` or the ``error``
    (``kind``, ``message``, ``trace``), the object ``model`` after the run
    and the simulated cloud's ``record`` (stacks, template pushes, agent
    plans, reports and the ``log``)."""

    ok: bool
    value: typing.Any
    error: typing.Optional[dict]
    model: typing.Optional[dict]
    record: dict


@dataclasses.dataclass(frozen=True)
class TestResult:
    """One MuranoPL test: ``Class.test``, and its failure (``None`` when
    it passed)."""

    name: str
    error: typing.Optional[str] = None

    @property
    def ok(self):
        return self.error is None


def _paths(paths):
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    return [os.fspath(p) for p in paths]


class Catalog:
    """MuranoPL packages and their compiled classes.

    Models are dicts (as ``json.load`` gives them) or JSON text, either
    ``{"Objects": ...}`` or a bare object.
    """

    def __init__(self, native):
        self._native = native

    @classmethod
    def load(cls, paths, search_path=()):
        """Loads the packages ``paths`` (directories or .zip files) and
        what they require from the directories ``search_path``; with no
        paths, every package on the search path. A package that cannot
        be loaded raises ``ValueError``."""
        return cls(_native.Catalog.load(_paths(paths), _paths(search_path)))

    @property
    def packages(self):
        """``name/version`` of every package loaded."""
        return self._native.packages()

    def validate(self, model):
        """The contract violations of ``model`` (sorted by path), ``[]``
        when it is valid. A model that cannot be loaded at all (an
        unknown class, a malformed header) raises ``MuranoPLError``."""
        return [Violation(*v) for v in self._native.validate(model)]

    def validate_many(self, models, return_exceptions=False):
        """``validate`` of each model, on every core, in order."""
        return self._native.validate_many(models, return_exceptions, Violation)

    def validate_objects(self, class_name, objects):
        """The contract violations of each of ``objects`` (dicts of
        property values, without ``?``) as an instance of ``class_name``,
        on every core, in order: a list of ``(property, message)`` per
        object, ``[]`` when it is valid. The objects are checked in
        place, not loaded into a model: for classes whose property
        contracts need only the values (no ``$this``, no other object;
        another class raises ``ValueError``).

        >>> cat = Catalog.load([EXAMPLES / 'validate'])
        >>> good = {'name': 'a', 'port': 80, 'tags': [], 'enabled': True,
        ...         'settings': {'timeout': 1, 'label': 'x'}}
        >>> found = cat.validate_objects('com.example.Server',
        ...                              [good, dict(good, port=70000)])
        >>> found[0], [p for p, _ in found[1]]
        ([], ['port'])
        """
        return self._native.validate_objects(class_name, objects)

    def schema(self, class_name, methods=None, class_version=None,
               package=None):
        """The JSON Schemas of ``class_name`` (and its model builders), or
        of the named ``methods``, as ``{"": class schema, method: ...}``,
        as Murano's class-schema API answers. ``class_version`` is a
        version spec (Murano's default ``=0`` picks a 0.x package).

        >>> cat = Catalog.load([EXAMPLES / 'validate'])
        >>> schema = cat.schema('com.example.Server', class_version='=1')
        >>> schema['']['properties']['port']['type']
        'integer'
        """
        return self._native.schema(class_name, methods, class_version, package)

    def run(self, model, method='deploy', cloud=None):
        """Runs ``method`` on the model's root in a fresh simulated cloud;
        ``cloud`` is its configuration (JSON or YAML text, or a path to
        one). Returns a :class:`RunResult`; a model that cannot be read
        raises.

        >>> cat = Catalog.load([EXAMPLES / 'hello-app'])
        >>> vm = {'?': {'id': 'vm', 'type': 'io.murano.resources.LinuxMuranoInstance'},
        ...       'name': 'web', 'flavor': 'm1.small', 'image': 'ubuntu'}
        >>> r = cat.run({'?': {'id': 'app', 'type': 'com.example.Hello'}, 'instance': vm})
        >>> r.ok, len(r.record['stacks']) > 0
        (True, True)
        """
        if isinstance(cloud, os.PathLike) or (
                isinstance(cloud, str) and os.path.exists(cloud)):
            cloud = pathlib.Path(cloud).read_text()
        return RunResult(**self._native.run(model, method, cloud))

    @staticmethod
    def test(package, selectors=(), search_path=()):
        """Runs the MuranoPL tests of ``package`` (murano-test-runner):
        every test of the classes extending ``io.murano.test.TestFixture``,
        or those ``selectors`` pick (``Class`` or ``Class.test``). Each
        runs on a fresh executor."""
        suite = _native.TestSuite(os.fspath(package), _paths(search_path))
        return [TestResult(f'{c}.{t}', suite.run(c, t))
                for c, t in suite.plan(list(selectors))]


def ui_model(package, search_path=(), answers=None):
    """The object model (a dict) that the Dynamic UI of ``package``
    produces, as Murano's dashboard would: from ``answers``
    (``{form: {field: value}}``), else the fields' initial values, else
    samples. ``search_path`` holds the packages of application-typed
    fields."""
    model, _data, _notes = _native.ui_model(os.fspath(package),
                                            _paths(search_path), answers)
    return model
