"""Names both sides of the RestrictedPython layer use: the snippet's module name
and file name, the caps of what a run reports, and the exceptions a refusal raises."""

from __future__ import annotations


SNIPPET_FILENAME = "<snippet>"
SNIPPET_MODULE = "__sandbox__"  # the snippet's __name__; never a key of sys.modules
MAX_MESSAGE = 2000
MAX_EVENTS = 50
MAX_VARIABLES = 100
MAX_EVENT_DETAIL = 300
LAST_VALUE = "_sandbox_last_value_"  # underscore names cannot be written in a snippet
# Every call of a snippet function takes two frames under the guards (_call_ and the
# function): twice CPython's default limit keeps recursion as deep as in plain Python.
RESTRICTED_RECURSION_LIMIT = 2 * 1000 + 100


class SandboxImportError(ImportError):
    """An import the sandbox refused (not a missing module)."""


class SandboxAttributeError(AttributeError):
    """An attribute the sandbox refused (not a missing attribute)."""


class SandboxRefused(PermissionError):
    """A call the sandbox refused (a library door: pickle, string parsing)."""
