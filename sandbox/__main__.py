"""`python -m sandbox` is the same command line as `bin/mcp-server-python-sandbox`."""

from sandbox.cli import main

raise SystemExit(main())
