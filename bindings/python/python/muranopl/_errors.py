"""The exception MuranoPL failures raise (re-exported as
``muranopl.MuranoPLError``)."""


class MuranoPLError(Exception):
    """A MuranoPL failure: a contract violation, an unknown class, a
    package that does not load, an exception a class threw, a limit.

    ``kind`` is the reference's exception class name
    (``ContractViolationException``, ``NoClassFound``, ...), ``location``
    the ``file:line:col`` it arose at (or ``None``) and ``trace`` the
    MuranoPL stack, innermost first.

    >>> e = MuranoPLError('NoClassFound', 'Class "x.Y" is not found')
    >>> e.kind, str(e)
    ('NoClassFound', 'NoClassFound: Class "x.Y" is not found')
    """

    def __init__(self, kind, message, location=None, trace=()):
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message
        self.location = location
        self.trace = list(trace)
