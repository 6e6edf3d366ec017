"""The bench charts on the real server: per protocol, inline SVG placing a product's reading among
its category's (product pages) or the readings of the products a comparison or guide covers.

Expectations come from the published snapshot itself (read with DuckDB), not from the charts'
code: which slots are pending, each slot's reading and tolerance, the category's scoring rule.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import html5lib
import pytest

from release.local_store import SNAPSHOT_FILE, current_version, open_snapshot, release_path
from serve.html.charts import Protocol, Slot, strip_chart
from serve.html.site import LABELS
from tests.support.harness import Server
from tests.support.site_pages import parsed

SVG = "{http://www.w3.org/2000/svg}"
WIDTH = 400  # the charts' viewBox width
SLOTS_SQL = (
    "SELECT m.product_slug, m.product_name, m.category_slug, m.protocol_slug, m.status, m.value, m.unit, m.tolerance,"
    " p.scoring_rules FROM bench_measurements m JOIN protocols p USING (protocol_slug)"
)


@pytest.fixture(scope="module")
def slots(server: Server) -> list[dict]:
    """Every bench slot of the served snapshot with its category's scoring rule (zero_at, full_at)."""
    folder = release_path(server.store, current_version(server.store))
    with open_snapshot(folder / SNAPSHOT_FILE) as connection:
        cursor = connection.execute(SLOTS_SQL)
        names = [column[0] for column in cursor.description]
        rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    for row in rows:  # the category's own scoring rule, else the protocol's general one
        rules = sorted(
            row.pop("scoring_rules"),
            key=lambda rule: (rule["category"] != row["category_slug"], rule["category"] is not None),
        )
        row["zero_at"], row["full_at"] = rules[0]["zero_at"], rules[0]["full_at"]
    return rows


def product_with_pending_and_measured_slots(slots: list[dict]) -> str:
    """A product with a pending (or retest) slot and a measured one, found in the data."""
    statuses: dict[str, set[str]] = {}
    for slot in slots:
        statuses.setdefault(slot["product_slug"], set()).add("measured" if slot["status"] == "measured" else "not")
    return next(slug for slug, found in sorted(statuses.items()) if found == {"measured", "not"})


def charts(document) -> dict[str, object]:
    """The page's charts by protocol slug (their ids are ``chart-<protocol>-title``/``-desc``)."""
    found = {}
    for svg in document.iter(f"{SVG}svg"):
        title_id, desc_id = svg.get("aria-labelledby").split()
        assert svg.get("role") == "img" and title_id.endswith("-title") and desc_id.endswith("-desc")
        assert svg.find(f"{SVG}title").get("id") == title_id and svg.find(f"{SVG}desc").get("id") == desc_id
        found[title_id.removeprefix("chart-").removesuffix("-title")] = svg
    return found


def texts(svg, css_class: str) -> list[str]:
    return ["".join(node.itertext()) for node in svg.iter(f"{SVG}text") if css_class in node.get("class").split()]


def elements(svg, tag: str, css_class: str) -> list:
    return [node for node in svg.iter(f"{SVG}{tag}") if node.get("class") == css_class]


def description(svg) -> str:
    return "".join(svg.find(f"{SVG}desc").itertext())


def page(server: Server, path: str, lang: str = "en"):
    return parsed(server.get(path if lang == "en" else f"{path}?lang={lang}"))


def test_a_product_page_charts_each_slot_and_draws_a_pending_one_without_a_value(server: Server, slots: list[dict]):
    slug = product_with_pending_and_measured_slots(slots)
    own = [slot for slot in slots if slot["product_slug"] == slug]
    drawn = charts(page(server, f"/products/{slug}"))
    assert set(drawn) == {slot["protocol_slug"] for slot in own}
    for slot in own:
        svg = drawn[slot["protocol_slug"]]
        if slot["status"] != "measured":
            assert texts(svg, "pending") == [LABELS["en"][slot["status"]]]
            assert not elements(svg, "circle", "value") and not elements(svg, "rect", "tolerance")
            assert not texts(svg, "value-label")
            assert f"{slot['product_name']}: {LABELS['en'][slot['status']]}, no reading yet." in description(svg)


def test_a_measured_slot_shows_the_value_among_the_category_with_its_tolerance_and_thresholds(
    server: Server, slots: list[dict]
):
    slug = product_with_pending_and_measured_slots(slots)
    measured = [slot for slot in slots if slot["product_slug"] == slug and slot["status"] == "measured"]
    drawn = charts(page(server, f"/products/{slug}"))
    for slot in measured:
        svg = drawn[slot["protocol_slug"]]
        reading = f"{slot['value']} ± {slot['tolerance']} {slot['unit']}"
        assert [label.strip("\u2066\u2069") for label in texts(svg, "value-label")] == [reading]
        (dot,) = elements(svg, "circle", "value")
        assert "".join(dot.find(f"{SVG}title").itertext()) == f"{slot['product_name']}: {reading}"
        others = [
            other
            for other in slots
            if other["category_slug"] == slot["category_slug"]
            and other["protocol_slug"] == slot["protocol_slug"]
            and other["status"] == "measured"
            and other["product_slug"] != slug
        ]
        assert len(elements(svg, "circle", "mark")) == len(others)
        # The band spans value ± tolerance on the same scale as the thresholds' lines.
        (band,) = elements(svg, "rect", "tolerance")
        zero_line, full_line = (float(line.get("x1")) for line in elements(svg, "line", "threshold"))
        per_unit = (full_line - zero_line) / (slot["full_at"] - slot["zero_at"])
        assert float(band.get("width")) == pytest.approx(max(2 * slot["tolerance"] * abs(per_unit), 1.5), abs=0.2)
        expected_x = zero_line + (slot["value"] - slot["zero_at"]) * per_unit
        assert float(dot.get("cx")) == pytest.approx(expected_x, abs=0.2)
        labels = texts(svg, "threshold-label")
        assert f"score 0 at \u2066{slot['zero_at']} {slot['unit']}\u2069" in labels
        assert f"score 100 at \u2066{slot['full_at']} {slot['unit']}\u2069" in labels


def test_the_text_alternative_states_the_reading_and_the_bench_table_its_tolerance(server: Server, slots: list[dict]):
    slug = product_with_pending_and_measured_slots(slots)
    document = page(server, f"/products/{slug}")
    drawn = charts(document)
    table = next(document.iter("table"))
    headers = [th.text for th in table.iter("th") if th.get("scope") == "col"]
    assert headers[2] == "Tolerance"
    cells = {
        "".join(row[0].itertext()): ["".join(cell.itertext()).strip() for cell in row]
        for row in table.find("tbody").findall("tr")
    }
    for slot in slots:
        if slot["product_slug"] == slug and slot["status"] == "measured":
            text = description(drawn[slot["protocol_slug"]])
            assert f"{slot['product_name']}: {slot['value']} ± {slot['tolerance']} {slot['unit']}." in text
            assert f"The sub-score is 0 at {slot['zero_at']} {slot['unit']}" in text
            row = next(cells for cells in cells.values() if cells[1] == f"{slot['value']} {slot['unit']}")
            assert row[2] == f"± {slot['tolerance']} {slot['unit']}"
        elif slot["product_slug"] == slug:
            assert ["", "", "", "", LABELS["en"][slot["status"]]] in [row[1:] for row in cells.values()]


def test_arabic_charts_run_right_to_left_in_arabic(server: Server, slots: list[dict]):
    slug = product_with_pending_and_measured_slots(slots)
    english, arabic = (charts(page(server, f"/products/{slug}", lang)) for lang in ("en", "ar"))
    assert all(svg.get("direction") == "ltr" for svg in english.values())
    assert all(svg.get("direction") == "rtl" for svg in arabic.values())
    for protocol, svg in arabic.items():
        for tag, css_class, attribute in (
            ("circle", "mark", "cx"),
            ("circle", "value", "cx"),
            ("line", "threshold", "x1"),
        ):
            mirrored = [WIDTH - float(node.get(attribute)) for node in elements(english[protocol], tag, css_class)]
            assert [float(node.get(attribute)) for node in elements(svg, tag, css_class)] == pytest.approx(mirrored)
        assert "الدرجة الفرعية 0 عند" in description(svg)
        pending = texts(svg, "pending")
        assert pending in ([], [LABELS["ar"]["pending"]], [LABELS["ar"]["retest"]])


@pytest.mark.parametrize("page_type", ["comparison", "guide"])
def test_comparisons_and_guides_chart_each_covered_product(server: Server, slots: list[dict], page_type: str):
    changes = server.get("/api/public/changes.json").json()["changes"]
    for change in (change for change in changes if change["type"] == page_type):
        path = urlsplit(change["url"]).path
        record = server.get(f"/api/public/page.json?path={path}").json()["page"]
        covered = [slot for slot in slots if slot["product_slug"] in record["product_slugs"]]
        if covered:
            break
    else:
        pytest.fail(f"no {page_type} covers a product with bench slots")
    for lang in ("en", "ar"):
        document = page(server, path, lang)
        drawn = charts(document)
        assert set(drawn) == {slot["protocol_slug"] for slot in covered}
        for slot in covered:
            svg = drawn[slot["protocol_slug"]]
            text = description(svg)
            assert slot["product_name"] in text
            if slot["status"] == "measured":
                assert f"{slot['value']} ± {slot['tolerance']} {slot['unit']}" in text
        for protocol, svg in drawn.items():
            rows = [slot for slot in covered if slot["protocol_slug"] == protocol]
            assert len(texts(svg, "name")) == len(rows)
            assert len(elements(svg, "circle", "value")) == sum(slot["status"] == "measured" for slot in rows)
            assert len(texts(svg, "pending")) == sum(slot["status"] != "measured" for slot in rows)
        table = next(table for table in document.iter("table") if table.find("caption") is not None)
        assert len(table.find("tbody").findall("tr")) == len(covered)


def test_charts_hold_no_script_and_no_external_reference(server: Server, slots: list[dict]):
    changes = server.get("/api/public/changes.json").json()["changes"]
    paths = {next(urlsplit(c["url"]).path for c in changes if c["type"] == kind) for kind in ("comparison", "guide")}
    paths.add(f"/products/{product_with_pending_and_measured_slots(slots)}")
    for path in paths:
        for lang in ("en", "ar"):
            drawn = charts(page(server, path, lang))
            assert drawn, path
            for svg in drawn.values():
                for node in svg.iter():
                    assert node.tag not in (
                        f"{SVG}script",
                        f"{SVG}image",
                        f"{SVG}use",
                        f"{SVG}a",
                        f"{SVG}foreignObject",
                    )
                    for name, value in node.attrib.items():
                        assert "href" not in name and not name.startswith("on"), (path, name)
                        if not name.endswith("xmlns"):  # the SVG namespace's name, not a reference
                            assert "url(" not in value and "//" not in value, (path, name, value)


def test_a_product_name_with_markup_is_escaped_in_the_chart():
    """Names come from the editorial export: in the SVG they are text, never markup."""
    name = 'Tom & Jerry <b>"Bottle"</b>'
    own = Slot("tj", name, "bottles", "leak-loss", "measured", 1.5, "ml", 0.5, 5, 90.0)
    other = Slot("x", "<script>alert(1)</script>", "bottles", "leak-loss", "measured", 3.0, "ml", 0.5, 5, 80.0)
    protocol = Protocol("leak-loss", "Leak <loss>", "ml", 0.5, [{"category": None, "zero_at": 30.0, "full_at": 0.0}])
    chart = strip_chart(own, [own, other], protocol, LABELS["en"], rtl=False)
    svg = html5lib.parse(f"<!DOCTYPE html><title>t</title>{chart.svg}", namespaceHTMLElements=False).find(
        f".//{SVG}svg"
    )
    assert not list(svg.iter(f"{SVG}script")) and not list(svg.iter(f"{SVG}b"))
    assert "".join(svg.find(f"{SVG}title").itertext()) == "Leak <loss>"
    assert description(svg).startswith(f"{name}: 1.5 ± 0.5 ml.")
    titles = ["".join(node.find(f"{SVG}title").itertext()) for node in svg.iter(f"{SVG}circle")]
    assert titles == ["<script>alert(1)</script>: 3.0 ± 0.5 ml", f"{name}: 1.5 ± 0.5 ml"]
