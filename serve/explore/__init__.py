"""``/explore``: SQL over a release's Parquet files in the visitor's browser (DuckDB-WASM), with a
chart of any result (Observable Plot). The server sends the page and the static files; the
queries run in the browser, against the release's immutable addresses."""
