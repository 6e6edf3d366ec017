"""The HTTP contract of every answer, one concern a module: validators and 304s (``conditional``),
content coding (``compression``), CORS (``cors``), replay of fixed answers (``replay``), the
responses built with all of them (``responses``) and the request headers read from the ASGI scope
by the endpoints that answer without a Request (``scope``).

It is decided per response rather than in middleware wrapped around every request: the API is
public and read-only, so its CORS headers are the same on every response and only preflights
need a middleware, and a body built per snapshot (a rendered page) is compressed once per
snapshot, not once per request. The release's own files carry their ETags and compressed
copies from publish (``serve.api.release_responses``).
"""
