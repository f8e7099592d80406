"""A hardened Python sandbox served over the Model Context Protocol.

Untrusted snippets run in a child process that a single-threaded fork server
(the fork server) forks and hardens: namespaces, private mounts, rlimits, dropped
privileges, Landlock and seccomp, then RestrictedPython.
"""

__version__ = "0.1.0"
