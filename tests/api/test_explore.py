"""/explore, the SQL explorer: its example queries over a built release (Python's DuckDB), its static
files over HTTP, the notice where they are not installed, and the page itself in headless Chromium,
where DuckDB-WASM reads the release's Parquet files from the server's own origin and nothing else.

The browser opens the page at the test server's real port, not at the release's base URL
(http://127.0.0.1:8000): the page must take every address from its own origin. Every request that
would leave that origin is aborted and recorded; one Chromium context and page serve the whole
module, in order, to keep it short.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import html
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import Any
from urllib.parse import parse_qs, urlsplit

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from foundations.settings import PROJECT_ROOT
from release.local_store import current_version
from release.snapshot import Snapshot, load_snapshot
from serve.explore.assets import IMMUTABLE, INSTALL_HINT, ExplorerAssets
from serve.explore.examples import EXAMPLES, Example
from serve.explore.page import CONTENT_SECURITY_POLICY, EXPLORE_PATH, parquet_tables, render_explorer
from tests.api.conftest import BASE_URL
from tests.support.browser import CHROMIUM
from tests.support.harness import Server

ASSETS = ExplorerAssets.installed()  # the build the server serves: it reads the same folder
needs_assets = pytest.mark.skipif(ASSETS is None, reason=INSTALL_HINT)
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="Chromium is not installed: `make setup` installs Debian's chromium (needs root)"
)
MEDIA_TYPES = {".wasm": "application/wasm", ".js": "text/javascript", ".css": "text/css"}

# A join of two tables with aggregates over a decimal, a double and a date; its last line ends in a
# comment, as a query typed by hand may (the downloads wrap the query in COPY (...)).
JOIN = """SELECT p.category_slug, count(*) AS measurements, count(DISTINCT m.product_slug) AS products,
       avg(m.sub_score) AS mean_sub_score, min(p.price_amount) AS cheapest, max(m.tested_on) AS last_tested
FROM bench_measurements AS m JOIN products AS p USING (product_slug)
WHERE m.status = 'measured'
GROUP BY p.category_slug
ORDER BY p.category_slug -- one row a category"""
COUNT_PRODUCTS = "SELECT count(*) AS products FROM products"
# Tens of billions of rows: DuckDB-WASM (one thread) is still counting long after the test cancels it.
LONG = "SELECT count(*) FROM range(20000000000)"
# Every data-state the status line takes, in order, per page (read back as window.statusStates).
RECORD_STATES = """
window.statusStates = [];
new MutationObserver((records) => {
  for (const { target } of records) if (target.id === "status") window.statusStates.push(target.dataset.state);
}).observe(document, { subtree: true, attributes: true, attributeFilter: ["data-state"] });
"""


@pytest.fixture(scope="module")
def snapshot(server: Server) -> Iterator[Snapshot]:
    """The release the server serves, opened as the server opens it."""
    opened = load_snapshot(server.store, current_version(server.store))
    yield opened
    opened.connection.close()


@pytest.fixture(scope="module")
def duck(snapshot: Snapshot) -> Iterator[duckdb.DuckDBPyConnection]:
    """Python's DuckDB over the same Parquet files, with the views the page defines (named as in the
    release's datapackage.json); in UTC, as DuckDB-WASM is."""
    connection = duckdb.connect()
    connection.execute("SET TimeZone = 'UTC'")
    for table in parquet_tables(snapshot):
        path = snapshot.files.folder / table["path"]
        connection.execute(f"CREATE VIEW \"{table['name']}\" AS SELECT * FROM read_parquet('{path}')")
    yield connection
    connection.close()


def answer(duck: duckdb.DuckDBPyConnection, sql: str) -> tuple[list[str], list[tuple]]:
    """Python's DuckDB's column names and rows for ``sql``."""
    cursor = duck.execute(sql)
    return [column[0] for column in cursor.description], cursor.fetchall()


def same(seen: Any, expected: Any) -> bool:
    """Whether ``seen`` (text from the page or the CSV, or a value read from Parquet) is ``expected``,
    Python's DuckDB's value: numbers within a tolerance (the table shows six decimals at most, and
    two engines may sum in another order), dates as ISO dates, a null as the page, CSV or Parquet
    writes it."""
    if expected is None:
        return seen in (None, "", "null")
    if isinstance(expected, int | float | Decimal):
        number = float(seen.replace(",", "")) if isinstance(seen, str) else float(seen)
        return number == pytest.approx(float(expected), rel=1e-9, abs=1e-6)
    if isinstance(expected, date):
        return seen in (expected, expected.isoformat())
    return seen == expected


def assert_rows(seen: list[list[Any]], expected: list[tuple]) -> None:
    assert len(seen) == len(expected)
    differ = [
        (index, got, wanted)
        for index, (got_row, wanted_row) in enumerate(zip(seen, expected, strict=True))
        for got, wanted in zip(got_row, wanted_row, strict=True)
        if not same(got, wanted)
    ]
    assert not differ, differ[:5]


@pytest.mark.parametrize("example", EXAMPLES, ids=[example.title for example in EXAMPLES])
def test_every_example_has_rows_over_the_release(duck: duckdb.DuckDBPyConnection, example: Example):
    """Each example is written for this data: over the demo release every one has rows (none is
    empty by design), so a renamed column or table shows here rather than as an empty page."""
    assert duck.execute(example.sql).fetchall()


# --- HTTP -------------------------------------------------------------------------------------


def test_explore_is_html_under_its_content_security_policy(server: Server):
    reply = server.get(EXPLORE_PATH)
    assert reply.status == 200 and reply.headers["content-type"].startswith("text/html")
    assert reply.headers["content-security-policy"] == CONTENT_SECURITY_POLICY


@needs_assets
def test_the_page_names_the_assets_path_the_server_serves(server: Server):
    """One build, named by its digest: the page must point at the files the server has."""
    body = server.get(EXPLORE_PATH).body.decode()
    assert set(re.findall(r"/assets/explore/[^/\"]+/", body)) == {ASSETS.path}
    assert f'<script type="module" src="{ASSETS.path}explore.js">' in body
    assert server.get(f"{ASSETS.path}explore.js").status == 200


@needs_assets
def test_every_listed_file_is_served_raw_with_its_type_digest_and_a_years_caching(server: Server):
    for name, entry in ASSETS.files.items():
        reply = server.get(ASSETS.path + name, headers={"Accept-Encoding": "identity"})
        assert reply.status == 200, name
        media_type = reply.headers["content-type"].split(";")[0]
        assert media_type == MEDIA_TYPES[name[name.rindex(".") :]], name
        assert reply.headers["cache-control"] == IMMUTABLE, name
        assert "accept-encoding" in reply.headers["vary"].lower(), name
        assert "content-encoding" not in reply.headers, name
        assert hashlib.sha256(reply.body).hexdigest() == entry["sha256"] and len(reply.body) == entry["bytes"], name
        unchanged = server.get(ASSETS.path + name, headers={"If-None-Match": reply.headers["etag"]})
        assert unchanged.status == 304 and not unchanged.body, name
        assert unchanged.headers["cache-control"] == IMMUTABLE, name


@needs_assets
def test_the_wasm_comes_brotli_or_gzip_encoded_as_asked(server: Server):
    """Brotli's copy is the built one (Python has no brotli decoder here; Chromium decodes it in
    the browser test below); gzip's decompresses to the manifest's bytes."""
    name = "duckdb-eh.wasm"
    entry = ASSETS.files[name]
    brotli = server.get(ASSETS.path + name, headers={"Accept-Encoding": "br"})
    assert brotli.headers["content-encoding"] == "br" and brotli.headers["content-type"] == "application/wasm"
    assert brotli.body == (ASSETS.folder / f"{name}.br").read_bytes() and len(brotli.body) == entry["codings"]["br"]
    gzipped = server.get(ASSETS.path + name, headers={"Accept-Encoding": "gzip"})
    assert gzipped.headers["content-encoding"] == "gzip" and "accept-encoding" in gzipped.headers["vary"].lower()
    assert hashlib.sha256(gzip.decompress(gzipped.body)).hexdigest() == entry["sha256"]
    assert brotli.headers["etag"] != gzipped.headers["etag"]  # one validator per representation


@needs_assets
@pytest.mark.parametrize(
    "path",
    [
        "/assets/explore/0000000000000000/explore.js",  # a digest of no build served here
        "{assets}manifest.json",  # in the folder, but not a file the manifest lists
        "{assets}nothing.js",
    ],
)
def test_a_wrong_digest_or_an_unlisted_name_is_a_404_problem(server: Server, path: str):
    reply = server.get(path.format(assets=ASSETS.path))
    assert reply.status == 404 and reply.headers["content-type"] == "application/problem+json"
    assert reply.json()["status"] == 404


def test_the_api_guide_links_to_explore(server: Server):
    template = (PROJECT_ROOT / "serve/html/templates/api_guide.html").read_text(encoding="utf-8")
    if "explore" not in template:
        pytest.skip("serve/html/templates/api_guide.html does not link /explore yet")
    assert f'href="{BASE_URL}{EXPLORE_PATH}"' in server.get("/").body.decode()


def test_without_its_scripts_the_page_says_how_to_install_them(snapshot: Snapshot, tmp_path):
    """Where npm never ran (or its build was cut short) the page is a notice, with no script to 404."""
    assert ExplorerAssets.installed(tmp_path) is None
    (tmp_path / "manifest.json").write_text('{"files": {"explore.js": {}}, "packages": {}}', encoding="utf-8")
    assert ExplorerAssets.installed(tmp_path) is None
    page = render_explorer(snapshot, None).decode()
    assert INSTALL_HINT in html.unescape(page) and '<script type="module"' not in page


# --- Chromium ---------------------------------------------------------------------------------


@dataclass
class Explorer:
    """A Chromium context on the server's own origin, its page on /explore, and what it saw."""

    context: Any
    origin: str
    page: Any = None
    refused: list[str] = field(default_factory=list)  # requests that would have left the origin
    violations: list[str] = field(default_factory=list)  # Content Security Policy reports on the console
    errors: list[str] = field(default_factory=list)  # exceptions no script caught

    def open(self, fragment: str = "") -> Any:
        page = self.context.new_page()
        page.goto(f"{self.origin}{EXPLORE_PATH}{fragment}")
        return page


@pytest.fixture(scope="module")
def explorer(browser, server: Server) -> Iterator[Explorer]:
    context = browser.new_context(accept_downloads=True)
    seen = Explorer(context, f"http://127.0.0.1:{server.port}")

    def gate(route) -> None:
        if route.request.url.startswith(f"{seen.origin}/"):
            route.continue_()
        else:
            seen.refused.append(route.request.url)
            route.abort()

    def heard(message) -> None:
        if "Content Security Policy" in message.text:
            seen.violations.append(message.text)

    context.route("**/*", gate)
    context.on("console", heard)
    context.on("weberror", lambda error: seen.errors.append(str(error.error)))
    context.add_init_script(RECORD_STATES)
    seen.page = seen.open()
    seen.page.wait_for_selector("#status[data-state=ready]", timeout=60_000)
    yield seen
    context.close()


def finished(page, timeout: float = 30_000) -> str:
    """The state the running query ends in: done or error."""
    line = page.wait_for_selector("#status:is([data-state=done], [data-state=error])", timeout=timeout)
    return line.get_attribute("data-state")


def run(page, sql: str) -> str:
    """Run ``sql`` from the editor; the state it ends in."""
    page.fill("#sql", sql)
    page.click("#run")
    return finished(page)


def shown_rows(page) -> list[list[str]]:
    return page.eval_on_selector_all(
        "#result-table tbody tr", "rows => rows.map((row) => [...row.cells].map((cell) => cell.textContent))"
    )


def shown_columns(page) -> list[str]:
    return page.eval_on_selector_all("#result-table thead th", "cells => cells.map((cell) => cell.textContent)")


@needs_assets
@needs_chromium
class TestInChromium:
    """In the order written, on one page: each test runs its own query first."""

    @pytest.mark.parametrize("example", EXAMPLES, ids=[example.title for example in EXAMPLES])
    def test_every_example_runs_in_the_browser(
        self, explorer: Explorer, duck: duckdb.DuckDBPyConnection, example: Example
    ):
        """DuckDB-WASM is an older engine than Python's: an example must run in it too, to as many rows."""
        page = explorer.page
        page.get_by_role("button", name=example.title, exact=True).click()
        assert page.input_value("#sql") == example.sql
        assert finished(page) == "done", page.text_content("#error")
        rows = re.match(r"([\d,]+) rows in ", page.text_content("#status"))
        assert rows and int(rows[1].replace(",", "")) == len(duck.execute(example.sql).fetchall())

    def test_a_join_shows_python_duckdbs_answer_and_charts_it(
        self, explorer: Explorer, duck: duckdb.DuckDBPyConnection
    ):
        page = explorer.page
        columns, rows = answer(duck, JOIN)
        assert run(page, JOIN) == "done", page.text_content("#error")
        assert shown_columns(page) == columns
        assert_rows(shown_rows(page), rows)
        # x is the date column, y the first number: a line by default; one dot a row once asked
        assert page.locator("#chart svg").count() >= 1
        assert page.text_content("#chart figcaption").startswith("line of measurements by last_tested")
        page.select_option("#chart-mark", "dot")
        assert page.text_content("#chart figcaption").startswith("dot of ")
        assert page.locator("#chart svg circle").count() == len(rows)

    def test_the_result_downloads_as_csv_and_as_parquet(
        self, explorer: Explorer, duck: duckdb.DuckDBPyConnection, snapshot: Snapshot
    ):
        page = explorer.page
        columns, rows = answer(duck, JOIN)
        assert run(page, JOIN) == "done"
        with page.expect_download() as csv_download:
            page.click("#download-csv")
        assert csv_download.value.suggested_filename == f"reuse-data-{snapshot.version}.csv"
        with open(csv_download.value.path(), newline="", encoding="utf-8") as handle:
            header, *body = csv.reader(handle)
        assert header == columns
        assert_rows(body, rows)
        with page.expect_download() as parquet_download:
            page.click("#download-parquet")
        assert parquet_download.value.suggested_filename == f"reuse-data-{snapshot.version}.parquet"
        table = pq.read_table(parquet_download.value.path())
        assert table.column_names == columns
        assert table.schema.field("cheapest").type == pa.decimal128(10, 2)  # a price stays exact
        assert_rows([list(row.values()) for row in table.to_pylist()], rows)
        assert page.is_hidden("#error")

    def test_a_sql_error_shows_duckdbs_message_and_the_next_query_runs(
        self, explorer: Explorer, duck: duckdb.DuckDBPyConnection
    ):
        page = explorer.page
        assert run(page, "SELECT categroy_slug FROM products") == "error"
        message = page.text_content("#error")
        assert page.is_visible("#error") and "Binder Error" in message and "categroy_slug" in message
        assert run(page, COUNT_PRODUCTS) == "done" and page.is_hidden("#error")
        assert_rows(shown_rows(page), answer(duck, COUNT_PRODUCTS)[1])

    def test_a_permalink_reopens_the_query_and_its_result(
        self, explorer: Explorer, duck: duckdb.DuckDBPyConnection, snapshot: Snapshot
    ):
        page = explorer.page
        assert run(page, JOIN) == "done"
        page.click("#make-permalink")
        link = page.evaluate("location.href")
        assert parse_qs(urlsplit(link).fragment) == {"version": [snapshot.version], "sql": [JOIN]}
        assert page.get_attribute("#permalink", "href") == link
        opened = explorer.context.new_page()
        try:
            opened.goto(link)
            assert finished(opened, 60_000) == "done", opened.text_content("#error")
            assert opened.input_value("#sql") == JOIN and opened.is_hidden("#release-banner")
            assert_rows(shown_rows(opened), answer(duck, JOIN)[1])
            # "running" until the answer: never "ready" while the link's query waits for the engine
            assert opened.evaluate("window.statusStates") == ["running", "done"]
        finally:
            opened.close()

    def test_a_permalink_to_a_release_not_served_says_so(self, explorer: Explorer, snapshot: Snapshot):
        missing = "20000101T000000000Z"
        opened = explorer.open(f"#version={missing}&sql=SELECT+1")
        try:
            opened.wait_for_selector("#status[data-state=error]", timeout=30_000)
            message = opened.text_content("#error")
            assert f"release {missing} is not served here" in message and snapshot.version in message
            assert missing in opened.text_content("#release-banner") and opened.is_visible("#release-banner")
        finally:
            opened.close()

    def test_the_table_pages_a_long_result_and_puts_units_beside_values(
        self, explorer: Explorer, duck: duckdb.DuckDBPyConnection
    ):
        page = explorer.page
        assert run(page, "SELECT i FROM range(250) AS t(i) ORDER BY i") == "done"
        assert page.text_content("#page-label") == "rows 1–100 of 250" and page.is_disabled("#previous")
        page.click("#next")
        page.click("#next")
        assert page.text_content("#page-label") == "rows 201–250 of 250" and page.is_disabled("#next")
        assert shown_rows(page)[0] == ["200"] and len(shown_rows(page)) == 50
        sql = "SELECT value, unit FROM bench_measurements WHERE status = 'measured' ORDER BY measurement_id LIMIT 5"
        assert run(page, sql) == "done"
        for (shown, _), (value, unit) in zip(shown_rows(page), answer(duck, sql)[1], strict=True):
            assert shown.endswith(f" {unit}") and same(shown.removesuffix(f" {unit}"), value)

    def test_cancel_stops_a_long_query_and_the_engine_comes_back(
        self, explorer: Explorer, duck: duckdb.DuckDBPyConnection
    ):
        page = explorer.page
        page.fill("#sql", LONG)
        page.click("#run")
        page.wait_for_timeout(3_000)
        assert page.get_attribute("#status", "data-state") == "running" and page.is_visible("#cancel")
        page.click("#cancel")
        assert page.get_attribute("#status", "data-state") == "cancelled"
        page.wait_for_selector("#status[data-state=ready]", timeout=60_000)
        assert page.input_value("#sql") == LONG and page.is_enabled("#run") and page.is_hidden("#cancel")
        assert run(page, COUNT_PRODUCTS) == "done"
        assert_rows(shown_rows(page), answer(duck, COUNT_PRODUCTS)[1])

    def test_chromium_decodes_the_brotli_wasm_to_the_built_bytes(self, explorer: Explorer):
        name = "duckdb-eh.wasm"
        fetched = explorer.page.evaluate(
            """async (url) => {
                const response = await fetch(url);
                const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", await response.arrayBuffer()));
                return {
                    encoding: response.headers.get("content-encoding"),
                    sha256: [...digest].map((byte) => byte.toString(16).padStart(2, "0")).join(""),
                };
            }""",
            ASSETS.path + name,
        )
        assert fetched == {"encoding": "br", "sha256": ASSETS.files[name]["sha256"]}

    def test_nothing_left_the_origin_and_no_policy_was_violated(self, explorer: Explorer):
        """Last: what the whole module's pages asked for and logged. Then a fetch elsewhere, to show
        that the policy holds and that its reports would have been heard."""
        assert explorer.refused == [] and explorer.violations == [] and explorer.errors == []
        page = explorer.page
        with page.expect_console_message(lambda message: "Content Security Policy" in message.text):
            outcome = page.evaluate("fetch('http://example.org/').then(() => 'fetched', () => 'refused')")
        assert outcome == "refused" and explorer.violations and explorer.refused == []  # stopped before leaving
