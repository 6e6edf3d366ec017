"""The DuckDB files: the build warehouse, published snapshots, atomic publish, read-only access."""
