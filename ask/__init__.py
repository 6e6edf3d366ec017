"""The ask engine: built by the pipeline, loaded by the server from a snapshot (``engine``); see
docs/architecture.md's table for each of its modules."""
