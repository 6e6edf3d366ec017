"""Datasette serving the same tables from SQLite: what most publishers would run instead.

Datasette lives in a virtualenv of its own (``benchmarks/datasette.lock``), outside the
project's pins. The snapshot's tables are copied into one SQLite file (nested values as JSON
text, as Datasette shows them); the operations that have a Datasette equivalent map to its
table URLs below.
"""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import duckdb

LOCK = Path(__file__).with_name("datasette.lock")
DATABASE = "snapshot"  # the SQLite file's stem: Datasette's database name in its URLs

# Our operation -> the Datasette URL that returns the same rows (None: Datasette has no equivalent).
EQUIVALENTS: dict[str, str | None] = {
    "ask": None,  # a ranked, cited answer: no Datasette equivalent (full-text search returns rows)
    "recommendations": f"/{DATABASE}/recommendations.json?_shape=array&_size=max",
    "products": f"/{DATABASE}/products.json?_shape=array&_size=max",
    "answers": f"/{DATABASE}/answers.json?_shape=array&_size=max",
    "page": f"/{DATABASE}/pages.json?_shape=array&path=/guides/start-here",
    "capabilities": None,
    "content": f"/{DATABASE}/content.json?_shape=array&_size=max",
    "benchJsonl": f"/{DATABASE}/bench_measurements.json?_shape=array&_nl=on&_size=max",
    "benchCsv": f"/{DATABASE}/bench_measurements.csv?_stream=on&_size=max",
    "dataset": None,
    "pressKit": None,
    "changes": f"/{DATABASE}/changes.json?_shape=array&_size=max&changed_at__gte=2026-10-01",
    "claims": f"/{DATABASE}/claims.json?_shape=array&_nl=on&_size=max",
    "fullText": None,
    "openapi": None,
}


def tables() -> list[str]:
    """The tables the Datasette equivalents read."""
    found = (re.match(rf"/{DATABASE}/(\w+)\.", url) for url in EQUIVALENTS.values() if url)
    return sorted({match.group(1) for match in found if match})


def export_to_sqlite(snapshot: Path, target: Path, tables: list[str]) -> None:
    """Copy ``tables`` of a DuckDB snapshot into a new SQLite file; nested values become JSON text."""
    target.unlink(missing_ok=True)
    source = duckdb.connect(str(snapshot), read_only=True)
    sink = sqlite3.connect(target)
    try:
        for table in tables:
            relation = source.table(table)
            columns = relation.columns
            quoted = ", ".join(f'"{column}"' for column in columns)
            sink.execute(f'CREATE TABLE "{table}" ({quoted})')
            placeholders = ", ".join("?" for _ in columns)
            rows = (
                tuple(json.dumps(v, default=str) if isinstance(v, list | dict) else _scalar(v) for v in row)
                for row in relation.fetchall()
            )
            sink.executemany(f'INSERT INTO "{table}" VALUES ({placeholders})', rows)
        sink.commit()
    finally:
        sink.close()
        source.close()


def _scalar(value: object) -> object:
    """A value SQLite stores as such: decimals as numbers, dates and times as ISO text."""
    if value is None or isinstance(value, int | float | str | bytes):
        return value
    return float(value) if isinstance(value, Decimal) else str(value)


def ensure_datasette(venv: Path, report=print) -> Path:
    """The datasette command of a virtualenv with ``datasette.lock`` installed (made on first use)."""
    command = venv / "bin" / "datasette"
    stamp = venv / ".installed"
    if command.exists() and stamp.exists() and stamp.read_text() == LOCK.read_text():
        return command
    report(f"installing Datasette into {venv} (pinned by {LOCK.name})")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*pip, "-r", str(LOCK)], check=True)
    stamp.write_text(LOCK.read_text())
    return command


def datasette_command(command: Path, database: Path, port: int, max_rows: int) -> list[str]:
    """Datasette serving ``database`` immutably (its fastest mode) on one process, rows up to ``max_rows``."""
    return [
        str(command),
        "serve",
        "--immutable",
        str(database),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--setting",
        "max_returned_rows",
        str(max_rows),
        "--setting",
        "sql_time_limit_ms",
        "30000",
    ]
