"""What the intake tells a tester before and after an upload, against a real `reuse-data intake`:
the sheet template (CSV and XLSX) that is accepted as downloaded, the product list that says
exactly what the checks accept, and when a receipt's readings are expected live."""

from __future__ import annotations

import csv
import datetime as dt
import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from openpyxl import load_workbook

from foundations.media_types import XLSX
from inputs.bench_sheets import SHEET_COLUMNS
from intake.going_live import BENCH_BUILD, SENSOR_TICK
from intake.sheet_validation import read_conversions
from intake.store import IntakeStore
from release.local_store import current_version
from release.snapshot import load_snapshot
from tests.conftest import run_cli
from tests.support.harness import Server, copy_home, serving
from tests.support.intake_sheets import TESTER, good_row, sheet, upload


@pytest.fixture(scope="module")
def guide_home(demo_home: Path, tmp_path_factory) -> Path:
    return copy_home(demo_home, tmp_path_factory.mktemp("intake-guide") / "home")


@pytest.fixture(scope="module")
def token(guide_home: Path) -> str:
    return IntakeStore(guide_home).add_tester(TESTER)


@pytest.fixture(scope="module")
def intake(guide_home: Path, token: str) -> Iterator[Server]:
    with serving(guide_home, command="intake", ready="/", log=guide_home.parent / "intake.log") as running:
        yield running


@pytest.fixture(scope="module")
def products(intake: Server) -> list[dict]:
    reply = intake.get("/api/intake/products")
    assert reply.status == 200 and reply.headers["content-type"] == "application/json"
    assert reply.json()["release"] == current_version(intake.store)
    return reply.json()["products"]


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def when(iso: str) -> dt.datetime:
    return dt.datetime.fromisoformat(iso)


# The template


def test_the_csv_template_uploaded_unchanged_is_accepted_with_its_rows(intake: Server, token: str):
    template = intake.get("/api/intake/template.csv")
    assert template.status == 200
    assert template.headers["content-type"] == "text/csv; charset=utf-8"
    assert template.headers["content-disposition"] == 'attachment; filename="bench-sheet-template.csv"'
    rows = list(csv.DictReader(io.StringIO(template.body.decode("utf-8-sig"))))
    assert list(rows[0]) == SHEET_COLUMNS and len(rows) >= 1
    accepted = upload(intake, template.body, token, name="bench-sheet-template.csv")
    assert accepted.status == 201, accepted.body
    assert accepted.json()["rows_accepted"] == len(rows)
    assert accepted.json()["slots"] == sorted({f"{row['product']}:{row['protocol']}" for row in rows})


def test_the_xlsx_template_uploaded_unchanged_is_accepted_with_its_rows(intake: Server, token: str):
    template = intake.get("/api/intake/template.xlsx")
    assert template.status == 200
    assert template.headers["content-type"] == XLSX
    assert template.headers["content-disposition"] == 'attachment; filename="bench-sheet-template.xlsx"'
    header, *rows = load_workbook(io.BytesIO(template.body), read_only=True).active.iter_rows(values_only=True)
    assert list(header) == SHEET_COLUMNS and len(rows) >= 1
    assert all(isinstance(cell, str) for row in rows for cell in row)  # text, as a tester's edits stay
    accepted = upload(intake, template.body, token, name="bench-sheet-template.xlsx")
    assert accepted.status == 201, accepted.body
    assert accepted.json()["rows_accepted"] == len(rows)
    by_column = [dict(zip(header, row, strict=True)) for row in rows]
    assert accepted.json()["slots"] == sorted({f"{row['product']}:{row['protocol']}" for row in by_column})


def test_the_template_is_offered_as_csv_and_xlsx_only(intake: Server):
    other = intake.get("/api/intake/template.ods")
    assert other.status == 404 and "template.csv and template.xlsx" in other.json()["detail"]


# The product list


def test_the_product_list_holds_every_published_product(intake: Server, products: list[dict]):
    snapshot = load_snapshot(intake.store, current_version(intake.store))
    try:
        published = dict(snapshot.connection.execute("SELECT product_slug, category_slug FROM products").fetchall())
    finally:
        snapshot.connection.close()
    assert {p["product_slug"]: p["category_slug"] for p in products} == published
    assert all(p["protocols"] and p["product_name"] for p in products)


def plausible_reading(protocol: dict, unit: str) -> str:
    """A reading in ``unit`` that lands mid-range once converted as the checks convert it (the seed's rule)."""
    conversion = read_conversions()[unit.lower()]
    low, high = protocol["plausible_min"], protocol["plausible_max"]
    middle = (low + high) / 2 if low is not None and high is not None else low if low is not None else high or 1.0
    return repr((middle - conversion.offset) / conversion.scale)


def test_every_protocol_and_unit_listed_for_a_product_is_accepted(intake: Server, token: str, products: list[dict]):
    rows = [
        f"{product['product_slug']},{protocol['protocol_slug']},{sample},"
        f"{plausible_reading(protocol, unit)},{unit},{TESTER},2026-11-20,listed"
        for product in products
        for protocol in product["protocols"]
        for sample, unit in enumerate(protocol["units"], start=1)
    ]
    assert len(rows) > len(products)  # several protocols and units each
    accepted = upload(intake, sheet(*rows), token, name="every-listed-unit.csv")
    assert accepted.status == 201, accepted.body[:2000]
    assert accepted.json()["rows_accepted"] == len(rows)


def test_every_protocol_not_listed_for_a_product_is_refused(intake: Server, token: str, products: list[dict]):
    every_protocol = {p["protocol_slug"]: p for product in products for p in product["protocols"]}
    listed = {product["product_slug"]: [p["protocol_slug"] for p in product["protocols"]] for product in products}
    unlisted = [
        (product["product_slug"], every_protocol[slug])
        for product in products
        for slug in sorted(set(every_protocol) - {p["protocol_slug"] for p in product["protocols"]})
    ]
    assert unlisted
    rows = [
        f"{product},{protocol['protocol_slug']},1,{plausible_reading(protocol, protocol['unit'])},"
        f"{protocol['unit']},{TESTER},2026-11-20,"
        for product, protocol in unlisted
    ]
    refused = upload(intake, sheet(*rows), token, name="unlisted.csv")
    assert refused.status == 422
    problems = [(e["row"], e["column"]) for e in refused.json()["errors"]]
    assert problems == [(row, "protocol") for row in range(2, len(rows) + 2)]
    # Each problem names the protocols the list gives for that product.
    messages = [e["message"] for e in refused.json()["errors"]]
    assert all(
        message.endswith(f"this product's protocols: {', '.join(listed[product])}")
        for message, (product, _) in zip(messages, unlisted, strict=True)
    )


def test_a_unit_not_listed_for_a_protocol_is_refused(intake: Server, token: str, products: list[dict]):
    protocols = {p["protocol_slug"]: p for product in products for p in product["protocols"]}
    every_unit = {unit for p in protocols.values() for unit in p["units"]}
    product = products[0]
    protocol = product["protocols"][0]
    unlisted = sorted(every_unit - {unit.lower() for unit in protocol["units"]} - set(protocol["units"]))
    assert unlisted
    rows = [
        f"{product['product_slug']},{protocol['protocol_slug']},{sample},1,{unit},{TESTER},2026-11-20,"
        for sample, unit in enumerate(unlisted, start=1)
    ]
    refused = upload(intake, sheet(*rows), token, name="unlisted-units.csv")
    assert refused.status == 422
    assert {e["column"] for e in refused.json()["errors"]} == {"unit"}
    assert len(refused.json()["errors"]) == len(rows)
    assert refused.json()["errors"][0]["message"].endswith(f"record it in one of {', '.join(protocol['units'])}")


# When a receipt goes live


def test_each_receipt_says_when_its_readings_are_expected_live(intake: Server, token: str):
    accepted = upload(intake, sheet(good_row(reading="17.5")), token)
    assert accepted.status == 201
    receipt = accepted.json()
    going_live = receipt["going_live"]
    expected = when(receipt["received_at"]) + SENSOR_TICK + BENCH_BUILD
    assert when(going_live["expected_by"]) == expected and going_live["overdue"] is False
    assert f"expected by {expected:%Y-%m-%d %H:%M} UTC" in going_live["message"]
    assert "next build" in going_live["message"]

    # Looked up again, and in the tester's list: the same promise.
    looked_up = intake.get(f"/api/intake/receipts/{receipt['id']}", bearer(token)).json()
    listed = {r["id"]: r for r in intake.get("/api/intake/receipts", bearer(token)).json()["receipts"]}
    assert looked_up["going_live"] == going_live == listed[receipt["id"]]["going_live"]
    # The same bytes again: the same receipt, with its time.
    assert upload(intake, sheet(good_row(reading="17.5")), token).json()["going_live"] == going_live

    # Once a build has published it (as the publish asset records it), it says so.
    IntakeStore(intake.home).mark_published({receipt["id"]: "accepted"})
    published = intake.get(f"/api/intake/receipts/{receipt['id']}", bearer(token)).json()["going_live"]
    assert published == {"expected_by": None, "overdue": False, "message": "Live in the newest published release."}


def test_the_upload_command_prints_when_the_readings_go_live(intake: Server, token: str, tmp_path: Path):
    path = tmp_path / "tuesday.csv"
    path.write_bytes(sheet(good_row(reading="18.5")))
    url = f"http://127.0.0.1:{intake.port}"
    printed = run_cli("upload", str(path), "--url", url, "--token", token, home=intake.home)
    assert printed.returncode == 0, printed.output
    (line,) = [line for line in printed.output.splitlines() if line.startswith("  live ")]
    assert "goes live with the next build, expected by" in line
