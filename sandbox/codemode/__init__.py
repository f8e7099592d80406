"""Code mode: the upstream MCP servers a snippet's `tools.<server>.<tool>` reaches, their
transports, argument checks and stubs, and the `tools` object inside the child. May import
wire/ and the settings modules."""
