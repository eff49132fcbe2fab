"""What a function injected with ``yaqltypes.YaqlInterface()`` (or
taking a parameter named ``yaql_interface``) receives: evaluate YAQL and
call YAQL functions from Python, in the calling context (the reference's
``yaql.yaql_interface``).

>>> from muranopl import yaql
>>> def f(yaql_interface):
...     return yaql_interface('$a * $', 2, a=3), yaql_interface.len([1, 2])
>>> ctx = yaql.create_context()
>>> ctx.register_function(f)
>>> yaql.evaluate('f()', context=ctx)
[6, 2]
"""

from muranopl.yaql import utils


class YaqlInterface:
    def __init__(self, context, engine, receiver=utils.NO_VALUE):
        self.__context = context
        self.__engine = engine
        self.__sender = receiver

    @property
    def context(self):
        return self.__context

    @property
    def engine(self):
        return self.__engine

    @property
    def sender(self):
        return self.__sender

    def on(self, receiver):
        """This interface with ``receiver``: functions become its
        methods."""
        return YaqlInterface(self.context, self.engine, receiver)

    def __getattr__(self, name):
        if name.startswith('_'):
            raise AttributeError(name)
        return self.context(name, self.engine, self.sender)

    def __call__(self, __expression, *args, **kwargs):
        """Evaluates ``__expression`` with ``$`` (``$1``) bound to the
        first argument and the keyword arguments as variables."""
        return self.context._caller.eval(
            __expression, args[0] if args else None, kwargs)

    def __getitem__(self, name):
        return self.context[name]

    def __setitem__(self, name, value):
        self.context[name] = value
