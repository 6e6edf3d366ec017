"""The DuckDB build warehouse and its dbt project as Python sees them: what a release publishes
(``contract``), the seeds' reference lists (``reference_data``), and the raw tables loaded
incrementally (``raw_bench``, ``asked_questions``)."""
