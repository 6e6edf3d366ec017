"""What each file of a release is made from, as a key, and the making of files by their keys.

Each file and its compressed copies (or the sitemaps, together) are keyed by what they are made
from: the tables they read, by their keys in the snapshot (``publish.snapshot_copy.table_key``),
and the code that writes them (``producer_digest``). The keys go into the manifest; a file whose
key the release being served recorded is hard-linked from it, not written (``FileMaker``).
"""

from __future__ import annotations

import importlib.metadata
import os
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from foundations.content_keys import sha256_of, source_key, value_key
from foundations.settings import PROJECT_ROOT
from release.manifest import PublishedRelease, ReleaseFile

# What writes a release's files: this project's packages it is written with (the release's
# format, what the public sees, publish itself and what lies under them), and the libraries
# whose output lands in the files. A change to any of them makes every file again, once.
PRODUCER_PACKAGES = ("foundations", "warehouse", "release", "public", "publish")
PRODUCER_LIBRARIES = ("duckdb", "orjson", "zstandard", "numpy")


@cache
def producer_digest() -> str:
    """The key of the code that writes a release's files and of the libraries' versions."""
    return value_key(
        {
            "code": source_key(PROJECT_ROOT, PRODUCER_PACKAGES),
            "libraries": {library: importlib.metadata.version(library) for library in PRODUCER_LIBRARIES},
            "zlib": zlib.ZLIB_RUNTIME_VERSION,
        }
    )


def key_of(*made_of: Any) -> str:
    """The key of a file made from ``made_of`` (JSON-encodable) by this code."""
    return value_key([producer_digest(), *made_of])


@dataclass
class FileMaker:
    """Makes the files of one release into ``folder``: links each group of files from
    ``previous`` when that release made it from the same things, writes it otherwise, and
    records what each file was made from (``made_from``, for the manifest)."""

    folder: Path
    previous: PublishedRelease | None
    made_from: dict[str, dict[str, Any]] = field(default_factory=dict)
    linked: dict[str, str] = field(default_factory=dict)  # path -> sha256, of the files linked

    def previous_files(self, key: str) -> list[ReleaseFile]:
        """The files of the previous release made from ``key``, all still on its disk (or none)."""
        if self.previous is None:
            return []
        files = [f for f in self.previous.manifest.files.values() if f.made_from and f.made_from.get("key") == key]
        return files if all(self.previous.path_of(f).is_file() for f in files) else []

    def make(self, key: str, write: Callable[[], Iterable[str]]) -> bool:
        """The files made from ``key``: linked from the previous release, or written by ``write``
        (which returns the paths it wrote); whether they were linked."""
        found = self.previous_files(key)
        for file in found:
            target = self.folder / file.path
            target.parent.mkdir(parents=True, exist_ok=True)
            os.link(self.previous.path_of(file), target)
            self.made_from[file.path] = dict(file.made_from)
            self.linked[file.path] = file.sha256
        if not found:
            self.record(key, write())
        return bool(found)

    def record(self, key: str, paths: Iterable[str], extra: dict[str, dict[str, Any]] | None = None) -> None:
        """Record that the files at ``paths`` were made from ``key`` (with ``extra`` by path)."""
        for path in paths:  # what was recorded of it before (where its body begins) is kept
            self.made_from[path] = {**self.made_from.get(path, {}), "key": key, **(extra or {}).get(path, {})}

    def sha256(self, path: str) -> str:
        """The sha256 of the written file ``path``: the previous release's for a linked file."""
        return self.linked.get(path) or sha256_of(self.folder / path)
