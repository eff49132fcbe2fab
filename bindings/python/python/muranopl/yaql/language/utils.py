"""The reference's ``yaql.language.utils`` (the same objects as
:mod:`muranopl.yaql.utils`)."""

from muranopl.yaql.utils import *  # noqa: F401,F403
