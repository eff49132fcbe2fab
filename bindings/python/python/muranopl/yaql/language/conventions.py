"""Naming conventions of registered functions (the reference's
``yaql.language.conventions``): how a Python name becomes a YAQL one.

>>> CamelCaseConvention().convert_function_name('get_value')
'getValue'
>>> PythonConvention().convert_function_name('get_value_')
'get_value'
"""

from muranopl.yaql import utils


class Convention:
    def convert_function_name(self, name):
        return name

    def convert_parameter_name(self, name):
        return name


class PythonConvention(Convention):
    """Python names, without trailing underscores."""

    def convert_function_name(self, name):
        return name.rstrip('_')

    def convert_parameter_name(self, name):
        return name.rstrip('_')


class CamelCaseConvention(Convention):
    """``get_value`` is ``getValue``."""

    def convert_function_name(self, name):
        return utils.convert_function_name(name)

    def convert_parameter_name(self, name):
        return utils.convert_function_name(name)
