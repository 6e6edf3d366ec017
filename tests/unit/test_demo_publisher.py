"""The demo generator: the committed demo is its output, and it scales without reshuffling."""

import json
from pathlib import Path

from openpyxl import load_workbook

from inputs.demo_publisher import generate, load_vocabulary
from tests.conftest import DEMO

DEMO_PRODUCTS, DEMO_MEASUREMENTS = 96, 2400


def quiet(_: str) -> None:
    pass


def test_committed_demo_catalogue_and_sheets_match_the_generator(tmp_path: Path):
    generate(tmp_path, DEMO_PRODUCTS, DEMO_MEASUREMENTS, editorial_source=DEMO, report=quiet)
    assert (tmp_path / "editorial" / "products.jsonl").read_bytes() == (
        DEMO / "editorial" / "products.jsonl"
    ).read_bytes()
    generated = sorted(p.name for p in (tmp_path / "bench").iterdir())
    committed = sorted(p.name for p in (DEMO / "bench").iterdir())
    assert generated == committed
    for name in generated:
        assert sheet_content(tmp_path / "bench" / name) == sheet_content(DEMO / "bench" / name), name


def sheet_content(path: Path) -> object:
    """A CSV's bytes; a workbook's sheets and cells. (openpyxl writes the same workbook as other
    bytes when lxml is installed, as the dev extras' tools install it.)"""
    if path.suffix != ".xlsx":
        return path.read_bytes()
    workbook = load_workbook(path, read_only=True)
    content = {sheet.title: list(sheet.iter_rows(values_only=True)) for sheet in workbook.worksheets}
    workbook.close()
    return content


def test_demo_has_the_size_the_issue_asks_for(tmp_path: Path):
    summary = generate(tmp_path, DEMO_PRODUCTS, DEMO_MEASUREMENTS, editorial_source=DEMO, report=quiet)
    assert summary["products"] >= 80
    assert len(load_vocabulary()["categories"]) >= 10
    assert summary["readings"] >= 2000
    assert summary["untested_slots"] / summary["planned_slots"] >= 0.05


def test_a_larger_publisher_extends_a_smaller_one(tmp_path: Path):
    small = generate(tmp_path / "small", 26, 500, editorial_source=DEMO, report=quiet)
    large = generate(tmp_path / "large", 52, 2000, editorial_source=DEMO, report=quiet)
    assert large["products"] == 2 * small["products"]

    def slugs(folder: Path) -> set[str]:
        lines = (folder / "editorial" / "products.jsonl").read_text(encoding="utf-8").splitlines()
        return {json.loads(line)["slug"] for line in lines}

    assert slugs(tmp_path / "small") < slugs(tmp_path / "large")


def test_a_small_publisher_drops_editorial_items_about_missing_products(tmp_path: Path):
    generate(tmp_path, 13, 100, editorial_source=DEMO, report=quiet)
    products = {
        json.loads(line)["slug"]
        for line in (tmp_path / "editorial" / "products.jsonl").read_text(encoding="utf-8").splitlines()
    }
    import yaml

    for item in (tmp_path / "editorial" / "content").glob("*/*.md"):
        front = yaml.safe_load(item.read_text(encoding="utf-8").split("---", 2)[1])
        assert set(front.get("products") or []) <= products, item.name
    pages = {f"/{p.parent.name}/{p.stem}" for p in (tmp_path / "editorial" / "content").glob("*/*.md")}
    answers = yaml.safe_load((tmp_path / "editorial" / "answers.yml").read_text(encoding="utf-8"))
    assert all(a["cites"] in pages or a["cites"].startswith("/products/") for a in answers)
