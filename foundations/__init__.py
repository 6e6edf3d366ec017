"""Foundations every part may import: settings, durable files, input problems, problem details,
media types, HTTP limits, ask's limits and file digests. This package imports nothing else of the project's."""
