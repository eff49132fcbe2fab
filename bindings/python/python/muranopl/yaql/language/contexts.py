"""The reference's ``yaql.language.contexts``: :class:`Context`."""

from muranopl.yaql import Context  # noqa: F401
