"""The reference's ``yaql.language.factory``: :class:`YaqlFactory`,
:class:`OperatorType` (the same objects as :mod:`muranopl.yaql.factory`)."""

from muranopl.yaql.factory import OperatorType, YaqlEngine, YaqlFactory  # noqa: F401
