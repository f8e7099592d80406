"""Write server.json, the MCP registry's description of this package, from the one list
of settings (sandbox.config.VARIABLES): `python tools/server_json.py > server.json`.
tests/packaging/test_install.py fails when the committed file differs from what this prints."""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from sandbox import __version__  # noqa: E402
from sandbox.config import VARIABLES  # noqa: E402

# The registry name's namespace must be the publisher's (io.github.<account>/...);
# the README carries the matching "mcp-name:" line that PyPI ownership is checked with.
NAME = "io.github.mcp-server-python-sandbox/mcp-server-python-sandbox"


def describe() -> dict:
    variables = [
        {"name": v.name, "description": v.doc, "isRequired": False,
         **({"isSecret": True} if v.secret else {}),
         **({"default": v.documented_default} if v.documented_default and not v.shown_default else {})}
        for v in VARIABLES.values()
    ]
    return {
        "$schema": "https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json",
        "name": NAME,
        "description": "Runs untrusted Python in a hardened child process (namespaces, seccomp, Landlock, "
                       "rlimits, RestrictedPython) on an ordinary Linux host, with no container runtime.",
        "version": __version__,
        "packages": [{
            "registryType": "pypi",
            "identifier": "mcp-server-python-sandbox",
            "version": __version__,
            "runtimeHint": "uvx",
            "transport": {"type": "stdio"},
            "environmentVariables": variables,
        }],
    }


if __name__ == "__main__":
    print(json.dumps(describe(), indent=2))
