"""Digests of input files, remembered by stat."""

import hashlib
import json
import os
import time
from pathlib import Path

from foundations.file_digests import file_digests


def settled_file(path: Path, text: str) -> Path:
    """A file last modified a minute ago, as sheets waiting in the inputs are."""
    path.write_text(text, encoding="utf-8")
    old = time.time_ns() - 60 * 10**9
    os.utime(path, ns=(old, old))
    return path


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_digests_without_a_cache_and_with_an_unreadable_one(tmp_path: Path):
    sheet = settled_file(tmp_path / "a.csv", "x,1\n")
    assert file_digests([sheet]) == [sha("x,1\n")]
    cache = tmp_path / "digests.json"
    cache.write_text("{not json", encoding="utf-8")
    assert file_digests([sheet], cache) == [sha("x,1\n")]
    assert json.loads(cache.read_text())[str(sheet)]["sha256"] == sha("x,1\n")


def test_an_unchanged_file_is_not_read_again(tmp_path: Path):
    sheet = settled_file(tmp_path / "a.csv", "x,1\n")
    cache = tmp_path / "digests.json"
    file_digests([sheet], cache)
    # What the cache says for an unchanged stat is believed: the file is not read.
    entries = json.loads(cache.read_text())
    entries[str(sheet)]["sha256"] = "remembered"
    cache.write_text(json.dumps(entries))
    assert file_digests([sheet], cache) == ["remembered"]


def test_a_changed_file_is_hashed_again_even_at_the_same_size(tmp_path: Path):
    sheet = settled_file(tmp_path / "a.csv", "x,1\n")
    other = settled_file(tmp_path / "b.csv", "y,2\n")
    cache = tmp_path / "digests.json"
    file_digests([sheet, other], cache)
    settled_file(sheet, "x,2\n")  # same size, new modification time
    assert file_digests([sheet, other], cache) == [sha("x,2\n"), sha("y,2\n")]


def test_a_file_modified_just_now_is_not_remembered(tmp_path: Path):
    sheet = tmp_path / "a.csv"
    sheet.write_text("x,1\n", encoding="utf-8")  # a second write within the same clock tick would keep its stat
    cache = tmp_path / "digests.json"
    assert file_digests([sheet], cache) == [sha("x,1\n")]
    assert str(sheet) not in json.loads(cache.read_text())


def test_the_cache_holds_exactly_the_files_last_asked_for(tmp_path: Path):
    first, second = settled_file(tmp_path / "a.csv", "1"), settled_file(tmp_path / "b.csv", "2")
    cache = tmp_path / "digests.json"
    file_digests([first, second], cache)
    second.unlink()
    file_digests([first], cache)
    assert list(json.loads(cache.read_text())) == [str(first)]
