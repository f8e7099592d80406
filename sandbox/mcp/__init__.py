"""The MCP face: server assembly, tool handlers, request checks, answer models, content
blocks, descriptions, sessions, audit, file store, stdio and the HTTP gate. The top of the
tree: may import every other part.

One execution's result passes three stages, each named for what it makes:
restricted/json_value turns the snippet's value into JSON inside the child;
forkserver/child_report turns a child's frames and exit status into a result dict;
mcp/tool_models checks that dict against the declared answer, and mcp/content_blocks
turns it into what the client receives (structured content, the text a model reads,
image and file blocks).
"""
