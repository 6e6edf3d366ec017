"""Reading the editorial export: every table of the demo reads; broken records are named."""

import shutil
from pathlib import Path

import pytest

from inputs.editorial_export import EXPORT_TABLES, ExportError, read_export_table
from tests.conftest import DEMO

TABLES = {spec.table: spec for spec in EXPORT_TABLES}


@pytest.mark.parametrize("table", sorted(TABLES))
def test_every_demo_table_reads_with_provenance(table: str):
    frame = read_export_table(DEMO, TABLES[table])
    assert len(frame) > 0
    assert frame["_source_file"].null_count() == 0
    assert frame["_source_sha256"].str.len_chars().min() == 64


def test_missing_field_names_file_row_and_column(tmp_path: Path):
    (tmp_path / "editorial").mkdir()
    (tmp_path / "editorial" / "categories.yml").write_text(
        "- {slug: a, group: g, name: {en: A}}\n- {slug: b, name: {en: B}}\n- {slug: c, group: g, name: C}\n",
        encoding="utf-8",
    )
    with pytest.raises(ExportError) as caught:
        read_export_table(tmp_path, TABLES["categories"])
    found = {(p.file, p.row, p.column, p.message) for p in caught.value.problems}
    assert found == {
        ("editorial/categories.yml", 2, "group", "required field is missing"),
        ("editorial/categories.yml", 3, "name", "expected a mapping"),
    }


def test_broken_jsonl_line_is_named(tmp_path: Path):
    (tmp_path / "editorial").mkdir()
    lines = (DEMO / "editorial" / "products.jsonl").read_text(encoding="utf-8").splitlines()[:3]
    lines[1] = lines[1][:-5]
    (tmp_path / "editorial" / "products.jsonl").write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(ExportError, match=r"editorial/products.jsonl, row 2, column 'line': not valid JSON"):
        read_export_table(tmp_path, TABLES["products"])


def test_markdown_without_front_matter_is_named(tmp_path: Path):
    shutil.copytree(DEMO / "editorial" / "content", tmp_path / "editorial" / "content")
    (tmp_path / "editorial" / "content" / "journal" / "draft.md").write_text("# no front matter\n", encoding="utf-8")
    with pytest.raises(ExportError, match=r"journal/draft.md, row 1, column 'front matter'"):
        read_export_table(tmp_path, TABLES["content"])
