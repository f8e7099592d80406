"""The RestrictedPython wall: compile, validate and run one snippet with its guards, imports,
names and results. May import wire/ and the settings modules, never the kernel side, the
fork server or the MCP face."""
