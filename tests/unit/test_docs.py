"""The docs state the limits the code declares: each value is declared once (``public/openapi.py``,
``foundations/http_limits.py``), read by the validation and the OpenAPI document, and checked
here against what the README and ``docs/api.md`` tell a reader."""

from __future__ import annotations

from foundations.http_limits import MAX_HEAD_BYTES
from foundations.settings import PROJECT_ROOT
from public.openapi import (
    ASK_DEFAULT_LIMIT,
    ASK_MAX_LIMIT,
    BENCH_DEFAULT_LIMIT,
    BENCH_MAX_LIMIT,
    MAX_FILTER_LENGTH,
    MAX_PATH_LENGTH,
    MAX_Q_LENGTH,
)


def test_the_api_docs_state_the_declared_limits():
    api = (PROJECT_ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    rows = [
        f"| `ASK_DEFAULT_LIMIT`, `ASK_MAX_LIMIT` | {ASK_DEFAULT_LIMIT}, {ASK_MAX_LIMIT} |",
        f"| `BENCH_DEFAULT_LIMIT`, `BENCH_MAX_LIMIT` | {BENCH_DEFAULT_LIMIT}, {BENCH_MAX_LIMIT} |",
        f"| `MAX_Q_LENGTH` | {MAX_Q_LENGTH} characters |",
        f"| `MAX_PATH_LENGTH` | {MAX_PATH_LENGTH} characters |",
        f"| `MAX_FILTER_LENGTH` | {MAX_FILTER_LENGTH} characters |",
        f"| `MAX_HEAD_BYTES` (`foundations/http_limits.py`) | {MAX_HEAD_BYTES // 1024} KiB |",
    ]
    assert [row for row in rows if row not in api] == []


def test_the_readme_states_the_declared_bench_limits():
    readme = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    assert f"`limit` (default {BENCH_DEFAULT_LIMIT}, max {BENCH_MAX_LIMIT})" in readme
