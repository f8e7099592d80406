"""`python -m sandbox` is the same command line as `bin/sandbox-mcp`."""

from sandbox.cli import main

raise SystemExit(main())
