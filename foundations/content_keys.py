"""Keys of content: equal content, equal key. Work whose inputs have the key they had last time is
skipped (a trained encoder kept, a fitted decision kept, a release file linked, a dbt project not
parsed again), so every such key is made here, one way for a value and one for a tree of files.

- ``value_key``: the sha256 of a JSON-encodable value's canonical serialisation (keys sorted,
  text as UTF-8, not escaped). The value names its parts (a dict), so that two keys of different
  things cannot be confused.
- ``sha256_of``: the sha256 of one file's bytes, read in blocks: what every input row keeps of
  its file, a release's manifest lists, and a linked release file is known by.
- ``tree_key``: the sha256 of files, each its path relative to a root, NUL, then its bytes, in the
  order given (sort them for an order-free key). The published digest of a labelled split is one;
  ``source_key`` is the tree of some of our own code, so that work made by it is made again when
  it changes.

A key is kept with what it describes: in the same table (the ask decision's), by the key itself
(a trained encoder in the model store), or, for a file that another process may hold locked (the
build warehouse) or that another tool writes (dbt's manifest), in a ``KeyFile`` beside it.

Rows in DuckDB are keyed by DuckDB itself, without reading them into Python:
``publish.snapshot_copy.RelationContents`` keys a table by its rows' hashes, and the page packs
key a page by its row's hash (``publish.page_packs``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from foundations.durable_files import replace_durably


def value_key(value: Any) -> str:
    """The sha256 (hex) of ``value``'s canonical JSON: equal values, equal keys, whatever the dicts' order."""
    return hashlib.sha256(json.dumps(value, ensure_ascii=False, sort_keys=True).encode()).hexdigest()


def sha256_of(path: Path) -> str:
    """The sha256 (hex) of the file at ``path``, read a megabyte at a time."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def tree_key(root: Path, files: Iterable[Path]) -> str:
    """The sha256 (hex) of ``files`` under ``root``: each one's path relative to ``root``, NUL, its bytes."""
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def source_key(root: Path, paths: Iterable[str]) -> str:
    """The ``tree_key`` of the files at ``paths`` under ``root`` (a folder: every file under it but
    compiled bytecode), sorted: the key of the code, and its data, that some work is made by."""
    files: set[Path] = set()
    for name in paths:
        path = root / name
        found = path.rglob("*") if path.is_dir() else [path]
        files.update(p for p in found if p.is_file() and "__pycache__" not in p.parts)
    return tree_key(root, sorted(files))


class KeyFile:
    """The key of what a file holds, kept beside it: readable while the file itself is locked."""

    def __init__(self, described: Path, suffix: str) -> None:
        self.path = described.with_name(f"{described.name}.{suffix}")

    def read(self) -> str | None:
        """The key kept, or None when none is."""
        try:
            return self.path.read_text(encoding="utf-8").strip() or None
        except FileNotFoundError:
            return None

    def write(self, key: str) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        replace_durably(self.path, f"{key}\n".encode(), self.path.with_name(f".{self.path.name}.staging"))
