"""The MCP face: server assembly, tools, schemas, descriptions, answers, sessions, audit, file
store, stdio and the HTTP gate. The top of the tree: may import every other part."""
