"""The page index of a release: written sorted, found by binary search, whatever the paths' script."""

from pathlib import Path

from release import folder as release
from release.folder import PackedRecord, PageIndex


def test_every_written_path_is_found_and_no_other(tmp_path: Path):
    paths = ["/guides/start-here", "/products/zébra-flask", "/products/a", "/journal/水瓶", "/reviews/z"]
    pages = [(path, (number * 10, 10, number * 5, 5, bytes([number]) * 32)) for number, path in enumerate(paths)]
    PageIndex.write(tmp_path, pages)
    index = PageIndex.read(tmp_path)
    assert len(index) == len(paths)
    for number, path in enumerate(paths):
        assert index.get(path) == PackedRecord(number * 10, 10, number * 5, 5, '"' + f"{number:02x}" * 16 + '"')
    for absent in ("", "/products", "/products/zebra-flask", "/zzz", "/guides/start-here/"):
        assert absent not in index and index.get(absent) is None


def test_an_empty_index_finds_nothing(tmp_path: Path):
    PageIndex.write(tmp_path, [])
    index = PageIndex.read(tmp_path)
    assert len(index) == 0 and index.get("/guides/start-here") is None


def test_paths_whose_keys_collide_are_told_apart_by_their_bytes(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(release, "path_key", lambda path: 7)  # every path one key
    pages = [(path, (n, 1, n, 1, bytes(32))) for n, path in enumerate(["/guides/b", "/guides/a", "/guides/c"])]
    PageIndex.write(tmp_path, pages)
    index = PageIndex.read(tmp_path)
    assert [index.get(path).offset for path in ("/guides/b", "/guides/a", "/guides/c")] == [0, 1, 2]
    assert index.get("/guides/d") is None and index.get("/guides/a/") is None
