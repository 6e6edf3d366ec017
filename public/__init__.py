"""What the public sees of a release, shared by the writer (``publish``) and the server
(``serve``): the OpenAPI contract (``openapi``) with its JSON Schema helpers (``json_schema``)
and record schemas (``record_schemas``), the documents' envelopes and records (``documents``),
the distributions' descriptions (``table_descriptions``) and a text's language and address in a
language (``languages``)."""
