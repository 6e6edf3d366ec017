"""The running server of the public API and site, in rooms: the API's routes (``api``), the HTML
site (``html``), the HTTP mechanics every answer shares (``http``), what operators read
(``operations``), the assistants' MCP server (``mcp_server``), the fixed-path lookup
(``routing``) and the app assembled from them (``app``). It reads releases (``release``) and
never writes one (``publish`` does)."""
