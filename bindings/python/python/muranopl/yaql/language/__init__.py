"""The reference's ``yaql.language`` package layout, for code that
imports ``from yaql.language import specs, yaqltypes, utils,
exceptions``."""
