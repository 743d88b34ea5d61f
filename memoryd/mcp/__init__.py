"""memoryd over the Model Context Protocol: one server (tools, resources, a prompt), served over
stdio by `memoryd mcp` (`server`) and over streamable HTTP at /mcp on the daemon (`http`).
Nothing is imported here: the CLI must not load the MCP SDK for its other commands."""
