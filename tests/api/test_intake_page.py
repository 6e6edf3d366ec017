"""The intake's upload page in headless Chromium (Debian's `chromium`, which `make setup` installs),
driven by Playwright against a real `reuse-data intake` on loopback."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from openpyxl import load_workbook
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from inputs.bench_sheets import SHEET_COLUMNS
from intake.store import IntakeStore
from tests.support.browser import CHROMIUM
from tests.support.harness import Server, copy_home, serving
from tests.support.intake_sheets import TESTER, good_row, sheet

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Chromium is not installed: `make setup` installs Debian's chromium (needs root)"
)


@pytest.fixture(scope="module")
def page_home(demo_home: Path, tmp_path_factory) -> Path:
    return copy_home(demo_home, tmp_path_factory.mktemp("intake-page") / "home")


@pytest.fixture(scope="module")
def token(page_home: Path) -> str:
    return IntakeStore(page_home).add_tester(TESTER)


@pytest.fixture(scope="module")
def intake_log(page_home: Path) -> Path:
    return page_home.parent / "intake.log"


@pytest.fixture(scope="module")
def intake(page_home: Path, token: str, intake_log: Path) -> Iterator[Server]:
    with serving(page_home, command="intake", ready="/", log=intake_log) as running:
        yield running


@pytest.fixture
def page_messages() -> list[str]:
    """What the page printed to its console, the errors it raised and the requests it made, from
    its first load on."""
    return []


@pytest.fixture
def page(browser, intake: Server, page_messages: list[str]):
    context = browser.new_context(base_url=f"http://127.0.0.1:{intake.port}")
    page = context.new_page()
    page.on("console", lambda message: page_messages.append(f"console {message.type}: {message.text}"))
    page.on("pageerror", lambda error: page_messages.append(f"page error: {error}"))
    page.on("request", lambda request: page_messages.append(f"request: {request.method} {request.url}"))
    page.on("requestfailed", lambda request: page_messages.append(f"failed: {request.url} ({request.failure})"))
    page.goto("/")
    yield page
    context.close()


@pytest.fixture
def upload_and_wait(page, page_messages: list[str], intake_log: Path) -> Callable[[], str]:
    """Click Upload, wait for the intake's answer and the verdict it leads to; returns its text.

    The wait is on the upload's own response rather than on the page's animation frames, and a
    timeout says what the page and the intake printed."""

    def upload() -> str:
        try:
            with page.expect_response(lambda reply: reply.url.endswith("/api/intake/bench-sheets"), timeout=60_000):
                page.click("#upload")
            page.wait_for_function("document.getElementById('verdict').className !== ''", polling=50)
        except PlaywrightTimeoutError as timeout:
            log = intake_log.read_text(errors="replace")[-3000:]
            raise AssertionError("\n".join([str(timeout), *page_messages, "intake log:", log])) from timeout
        return page.text_content("#verdict")

    return upload


def choose_sheet(page, name: str, content: bytes) -> None:
    page.set_input_files("#file", {"name": name, "mimeType": "text/csv", "buffer": content})


def table_rows(page, selector: str) -> list[list[str]]:
    return page.eval_on_selector_all(
        f"{selector} tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent))"
    )


def test_a_bad_sheet_shows_each_problem_by_row_and_column(page, token, upload_and_wait):
    page.fill("#token", token)
    choose_sheet(page, "bad.csv", sheet(good_row(reading="12.5"), good_row(sample=2, reading="400"), "x,y,1,2,°C,,,"))
    verdict = upload_and_wait()
    assert "nothing was accepted" in verdict and page.get_attribute("#verdict", "class") == "bad"
    assert page.is_visible("#errors") and not page.is_visible("#receipt")
    problems = [(row, column) for row, column, _value, _message in table_rows(page, "#errors")]
    assert ("3", "reading") in problems and ("4", "product") in problems and ("4", "tester") in problems
    assert table_rows(page, "#receipts") == []  # nothing kept


def test_a_good_sheet_gets_a_receipt_listed_with_the_testers_receipts(page, token, intake: Server, upload_and_wait):
    page.fill("#token", token)
    content = sheet(good_row(reading="12.5"), good_row(sample=2, reading="12.75"))
    choose_sheet(page, "monday.csv", content)
    assert upload_and_wait().startswith("Accepted: 2 row(s)")
    details = dict(table_rows(page, "#receipt"))
    receipt = IntakeStore(intake.home).receipt(details["Receipt"])
    assert receipt is not None and receipt.tester == TESTER and receipt.rows_accepted == 2
    assert details["Tester"] == TESTER and details["SHA-256"] == receipt.sha256
    page.wait_for_function("document.querySelectorAll('#receipts tbody tr').length > 0")
    listed = {row[-1]: row for row in table_rows(page, "#receipts")}
    assert listed[receipt.id][1:3] == ["monday.csv", "2"] and listed[receipt.id][5].startswith("not yet: expected by ")
    assert "goes live with the next build, expected by" in details["Goes live"]

    # The same bytes again: the same receipt, nothing twice.
    page.reload()
    assert page.input_value("#token") == token  # remembered in this browser
    page.wait_for_function("document.getElementById('who').textContent !== ''")
    assert page.text_content("#who") == f"Signed in as {TESTER}."
    choose_sheet(page, "monday-again.csv", content)
    assert "uploaded before" in upload_and_wait()
    assert dict(table_rows(page, "#receipt"))["Receipt"] == receipt.id
    assert len(IntakeStore(intake.home).receipts(TESTER)) == 1


def test_a_wrong_token_is_told_and_a_forgotten_one_is_gone(page, token, upload_and_wait):
    page.fill("#token", "not-a-token")
    choose_sheet(page, "sheet.csv", sheet(good_row(reading="13.5")))
    assert "valid tester token is required" in upload_and_wait()
    page.wait_for_function("document.getElementById('who').textContent.includes('valid tester token')")
    page.click("#forget")
    page.reload()
    assert page.input_value("#token") == ""


def test_the_sign_in_line_filling_in_does_not_move_the_upload_button(page, token):
    """Leaving the token field (as a click on Upload does) fills in who is signed in; were the
    button to move then, the click's release would land beside it and the upload never start."""
    before = page.locator("#upload").bounding_box()
    page.fill("#token", token)
    page.press("#token", "Tab")
    page.wait_for_function("document.getElementById('who').textContent !== ''")
    assert page.text_content("#who") == f"Signed in as {TESTER}."
    assert page.locator("#upload").bounding_box() == before


def test_the_product_filter_shows_each_matching_product_with_its_protocols_and_units(page, intake: Server):
    """Typing part of a product's name leaves exactly the products whose name or slug holds it,
    each with its slug, category and every protocol with its unit, as the intake's list has them."""
    products = intake.get("/api/intake/products").json()["products"]
    page.wait_for_function("document.querySelectorAll('#product-list tbody tr').length > 0")
    assert len(table_rows(page, "#product-list")) == len(products)
    wanted = products[len(products) // 2]
    fragment = wanted["product_name"].split()[0][1:].upper()  # part of a word, in another case
    page.fill("#product-filter", fragment)
    matching = [
        p for p in products if fragment.lower() in p["product_name"].lower() or fragment.lower() in p["product_slug"]
    ]
    assert 0 < len(matching) < len(products)
    page.wait_for_function(f"document.querySelectorAll('#product-list tbody tr').length === {len(matching)}")
    shown = {row[1]: row for row in table_rows(page, "#product-list")}
    assert set(shown) == {p["product_slug"] for p in matching}
    name, _slug, category, protocols = shown[wanted["product_slug"]]
    assert (name, category) == (wanted["product_name"], wanted["category_slug"])
    lines = protocols.split("\n")
    assert [line.split(" ")[0] for line in lines] == [p["protocol_slug"] for p in wanted["protocols"]]
    assert all(f"({p['unit']}" in line for line, p in zip(lines, wanted["protocols"], strict=True))
    assert page.text_content("#product-count") == f"{len(matching)} of {len(products)} products"
    page.fill("#product-filter", "no product is called this")
    page.wait_for_function("document.querySelectorAll('#product-list tbody tr').length === 0")


def downloaded_header(path: Path) -> list[str]:
    if path.suffix == ".csv":
        return path.read_text(encoding="utf-8-sig").splitlines()[0].split(",")
    return list(next(load_workbook(path, read_only=True).active.iter_rows(values_only=True)))


@pytest.mark.parametrize("suffix", ["csv", "xlsx"])
def test_the_template_links_download_the_template(page, suffix: str, tmp_path: Path):
    with page.expect_download() as download:
        page.click(f"#template-{suffix}")
    assert download.value.suggested_filename == f"bench-sheet-template.{suffix}"
    saved = tmp_path / download.value.suggested_filename
    download.value.save_as(saved)
    assert downloaded_header(saved) == SHEET_COLUMNS
