"""The pinned-release examples of docs/api.md ("Reading a pinned release") run as written, each in a
fresh Python against a real server of a built release, with only the address and the version
replaced: the version lookup prints the version served, and polars, pandas, DuckDB and Hugging
Face datasets each give the same rows, the release's own.

Each runs in a process of its own, as a researcher pastes it: the DuckDB example registers a file
system for the whole process, and datasets reads its switches once, on import."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from foundations.settings import PROJECT_ROOT
from release.local_store import SNAPSHOT_FILE, current_version, read_tables, release_path
from tests.api.conftest import BASE_URL
from tests.support.harness import Server

DOC = PROJECT_ROOT / "docs" / "api.md"
SECTION = "## Reading a pinned release\n"
PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
PINNED_VERSION = re.compile(r"/releases/(\d{8}T\d{9}Z)/")
# How each tool's `best` becomes rows, {column: value} each, in its order.
ROWS_OF_BEST = {
    "polars": "best.to_dicts()",
    "pandas": "best.to_dict('records')",
    "duckdb": "[dict(zip(best.columns, row)) for row in best.fetchall()]",
    "datasets": "best.to_list()",
}
# What the docs say every example keeps, asked of the release's own snapshot file.
BEST_PRODUCTS = """
    SELECT product_slug, brand, category_slug, overall_rating FROM products
    WHERE overall_rating >= 80 ORDER BY overall_rating DESC, product_slug
"""
# What DuckDB says of fsspec's HTTP file system registered as it is, as the docs quote it.
UNREGISTRABLE = "http: modified() is not implemented"


def section_text() -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index(SECTION)
    end = text.find("\n## ", start)
    return text[start : end if end != -1 else len(text)]


def tool_of(block: str) -> str | None:
    """Which of the four tools a block reads with (by what it imports), None for the version lookup."""
    tools = set(re.findall(r"^(?:from|import) (\w+)", block, re.M)) & ROWS_OF_BEST.keys()
    assert len(tools) <= 1, f"a block reads with {tools}:\n{block}"
    return next(iter(tools), None)


def blocks_by_tool() -> dict[str | None, str]:
    blocks = PYTHON_BLOCK.findall(section_text())
    by_tool = {tool_of(block): block for block in blocks}
    assert len(by_tool) == len(blocks), "two blocks of the section read with the same tool"
    return by_tool


def documented_version() -> str:
    """The one release every tool's example pins."""
    pinned = {version for tool, block in blocks_by_tool().items() if tool for version in PINNED_VERSION.findall(block)}
    assert len(pinned) == 1, f"the examples pin {pinned or 'no release'}"
    return pinned.pop()


def served_version(server: Server) -> str:
    version = current_version(server.store)
    assert version is not None
    return version


def on_this_server(block: str, server: Server) -> str:
    """The block as it would read this test's server and the release it serves: the only change."""
    address = f"http://{server.host}:{server.port}"
    return block.replace(BASE_URL, address).replace(documented_version(), served_version(server))


def run_python(program: str, tmp_path: Path) -> subprocess.CompletedProcess:
    """``program`` in a fresh Python, with Hugging Face's caches under the test's directory (never ~)
    and the Hub kept off. datasets reads HF_DATASETS_OFFLINE before HF_HUB_OFFLINE, and with either
    on it refuses every address, the server's included; huggingface_hub still reads HF_HUB_OFFLINE."""
    hugging_face = tmp_path / "huggingface"
    environment = {
        **os.environ,
        "HF_HOME": str(hugging_face),
        "HF_DATASETS_CACHE": str(hugging_face / "datasets"),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "0",
    }
    return subprocess.run(
        [sys.executable, "-c", program],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=180,
    )


@pytest.fixture(scope="module")
def release_best(server: Server) -> list[dict]:
    """The products the examples keep, from the snapshot file of the release the server serves."""
    snapshot = release_path(server.store, served_version(server)) / SNAPSHOT_FILE
    found = read_tables(snapshot, {"best": BEST_PRODUCTS, "all": "SELECT count(*) AS products FROM products"})
    # Some products kept and some left out, or rows that match would prove nothing of the filter.
    assert 1 < len(found["best"]) < found["all"][0]["products"]
    return found["best"]


def test_the_section_has_a_version_lookup_and_an_example_per_tool_that_pins_the_release():
    by_tool = blocks_by_tool()
    assert set(by_tool) == {None, *ROWS_OF_BEST}
    pinned = f"{BASE_URL}/releases/{documented_version()}/api/public/downloads"
    for tool in ROWS_OF_BEST:
        assert pinned in by_tool[tool], tool
        assert f"{BASE_URL}/api/public/downloads" not in by_tool[tool], f"{tool} reads the current release"


def test_the_version_lookup_prints_the_version_the_server_serves(server: Server, tmp_path: Path):
    """What a reader writes into the examples is the release the server serves."""
    ran = run_python(on_this_server(blocks_by_tool()[None], server), tmp_path)
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert ran.stdout.split() == [served_version(server)]


@pytest.mark.parametrize("tool", ROWS_OF_BEST)
def test_an_example_reads_the_release_s_own_rows(tool: str, server: Server, release_best: list[dict], tmp_path: Path):
    """The example as written, then its ``best`` saved as rows: the only code the test adds, after it."""
    rows = tmp_path / "rows.json"
    save_best = f"\n\nimport json\n\nwith open({str(rows)!r}, 'w') as out:\n    json.dump({ROWS_OF_BEST[tool]}, out)\n"
    ran = run_python(on_this_server(blocks_by_tool()[tool], server) + save_best, tmp_path)
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert json.loads(rows.read_text()) == release_best


def test_duckdb_cannot_read_through_fsspec_s_http_file_system_as_it_is(server: Server, tmp_path: Path):
    """Why the DuckDB example subclasses it, as the docs say. When a DuckDB reads through it, this
    fails, and the example can register ``fsspec.filesystem("http")`` itself."""
    assert UNREGISTRABLE in " ".join(section_text().split())
    address = f"http://{server.host}:{server.port}/releases/{served_version(server)}/api/public/downloads"
    plain = (
        "import duckdb, fsspec\n"
        "duckdb.register_filesystem(fsspec.filesystem('http'))\n"
        f"duckdb.sql(\"SELECT count(*) FROM read_parquet('{address}/products.parquet')\").fetchall()\n"
    )
    ran = run_python(plain, tmp_path)
    assert ran.returncode != 0 and UNREGISTRABLE in ran.stderr, ran.stderr[-3000:]
