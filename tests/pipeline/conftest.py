"""Fixtures of the pipeline tests: a real PostgreSQL server (``tests.support.postgres``)."""

from tests.support.postgres import postgres_url  # noqa: F401  (a fixture: importing it here registers it)
