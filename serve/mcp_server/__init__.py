"""The MCP server over the published release: the API's answers as read-only tools for assistants."""

MCP_PATH = "/mcp"  # beside the API on the same server and port (docs/decisions.md)
# The SDK's own headers, which a page in a browser must be allowed to read.
MCP_HEADERS = ("Mcp-Session-Id", "Mcp-Protocol-Version")
