"""The MCP server over the published release: the API's answers as read-only tools for assistants."""
