"""The page index of a release: written sorted, found by binary search, whatever the paths' script."""

from pathlib import Path

import pytest

from serve.release import PackedRecord, PageIndex


def test_every_written_path_is_found_and_no_other(tmp_path: Path):
    paths = ["/guides/start-here", "/products/zébra-flask", "/products/a", "/journal/水瓶", "/reviews/z"]
    pages = [(path, (number * 10, 10, number * 5, 5, f"{number:032x}")) for number, path in enumerate(paths)]
    PageIndex.write(tmp_path, pages)
    index = PageIndex.read(tmp_path)
    assert len(index) == len(paths)
    for number, path in enumerate(paths):
        assert index.get(path) == PackedRecord(number * 10, 10, number * 5, 5, f'"{number:032x}"')
    for absent in ("", "/products", "/products/zebra-flask", "/zzz", "/guides/start-here/"):
        assert absent not in index and index.get(absent) is None


def test_an_empty_index_finds_nothing(tmp_path: Path):
    PageIndex.write(tmp_path, [])
    index = PageIndex.read(tmp_path)
    assert len(index) == 0 and index.get("/guides/start-here") is None


def test_a_path_with_a_line_break_is_refused(tmp_path: Path):
    with pytest.raises(ValueError, match="line break"):
        PageIndex.write(tmp_path, [("/guides/a\nb", (0, 1, 0, 1, "0" * 32))])
