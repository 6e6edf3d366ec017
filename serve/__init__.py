"""The Starlette app of the public API (arrives with the API issue)."""
