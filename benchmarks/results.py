"""Recording benchmark results: a dated section of ``RESULTS.md`` naming the machine it ran on."""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import sys
from collections.abc import Sequence
from pathlib import Path

RESULTS = Path(__file__).with_name("RESULTS.md")


def machine() -> str:
    """This machine, as a results section names it: architecture, cores, memory, Python."""
    memory_gb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{platform.machine()}, {os.cpu_count()} cores, {memory_gb:.0f} GiB, Python {platform.python_version()}"


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[object]], text_columns: int = 1) -> str:
    """A Markdown table; the first ``text_columns`` columns align left, the rest (figures) right."""
    rule = ["---" if i < text_columns else "---:" for i in range(len(header))]
    lines = [header, rule, *rows]
    return "\n".join("| " + " | ".join(str(cell) for cell in line) + " |" for line in lines)


def add_record_option(parser: argparse.ArgumentParser) -> None:
    """``--record``, every benchmark's switch for keeping its results (``report``)."""
    parser.add_argument("--record", action="store_true", help="append the results to benchmarks/RESULTS.md")


def record(title: str, body: str) -> Path:
    """Append ``body`` to RESULTS.md under a heading of ``title`` and the time (UTC); returns the file."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    with RESULTS.open("a", encoding="utf-8") as results:
        results.write(f"\n### {title}, {stamp}\n\n{body.strip()}\n")
    return RESULTS


def report(title: str, body: str, keep: bool) -> None:
    """Print ``body``; with ``keep``, also append it to RESULTS.md under ``title`` (and say so)."""
    print(body)
    if keep:
        print(f"appended to {record(title, body)}", file=sys.stderr)


def percentile(values: Sequence[float], share: float) -> float:
    """The value at ``share`` of the way through ``values`` sorted (nearest rank); NaN for none."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))] if ordered else float("nan")
