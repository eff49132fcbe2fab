"""The reference's ``yaql.language.exceptions`` (the same classes as
:mod:`muranopl.yaql.exceptions`)."""

from muranopl.yaql.exceptions import *  # noqa: F401,F403
