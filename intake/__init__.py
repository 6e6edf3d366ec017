"""The tester intake, beside the pipeline: its own app (upload page and API on its own port), its
store of testers and receipts, its check of a sheet against the published reference data, and its
commands. The pipeline's sensor reads its store; nothing of the public API is its."""
