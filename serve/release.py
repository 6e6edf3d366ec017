"""A release folder as the server reads it: its manifest, checked, and its files by URL path.

A release mirrors the URL space: the document at ``/api/public/products.json`` is the file
``api/public/products.json``, its compressed copies ``….gz`` and ``….zst`` beside it. Page
records are packed in one file, read by offset (``PAGE_PACK``), so that the server holds an
index of them rather than the records.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from warehouse.manifest import Manifest, ReleaseError, ReleaseFile, read_manifest, verify

# Content codings a release carries copies in, best first; identity is the file itself.
ENCODINGS: dict[str, str] = {"zstd": ".zst", "gzip": ".gz"}
MEDIA_TYPES: dict[str, str] = {
    ".json": "application/json; charset=utf-8",
    ".jsonl": "application/x-ndjson",
    ".csv": "text/csv; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".parquet": "application/vnd.apache.parquet",
}
DOWNLOADS_DIR = "api/public/downloads"
PAGE_PACK = "records/page.json.pack"  # every page.json document end to end
PAGE_PACK_GZIP = "records/page.json.pack.gz"  # each of them gzipped alone, end to end
PAGE_INDEX = "records/page.json.index.npy"  # where each is in the two packs, and its ETag
PAGE_PATHS = "records/page.json.paths.txt"  # whose: the page paths, one per line, in the same order
RELEASES_PREFIX = "/releases/"


def media_type_of(path: str) -> str:
    return MEDIA_TYPES.get(os.path.splitext(path)[1], "application/octet-stream")


@dataclass(frozen=True)
class PackedRecord:
    """Where one page.json document lies in the pack and in its gzipped pack, and its validator."""

    offset: int
    length: int
    gzip_offset: int
    gzip_length: int
    etag: str


class PageIndex:
    """The page paths of a release and where each page.json lies in the packs: one structured
    array (``PAGE_INDEX``, NumPy's own format) and the paths one per line (``PAGE_PATHS``), both
    sorted by the paths' UTF-8 bytes. A path is found by binary search in an array of fixed-width
    bytes: a hundred thousand pages cost a few megabytes, not a Python object each, and reading
    them needs no library the server does not load anyway."""

    DTYPE = np.dtype(
        [("offset", "<i8"), ("length", "<i8"), ("gzip_offset", "<i8"), ("gzip_length", "<i8"), ("etag", "S32")]
    )

    def __init__(self, paths: list[bytes], entries: np.ndarray) -> None:
        if len(paths) != len(entries) or entries.dtype != self.DTYPE:
            raise ReleaseError(f"the page index lists {len(entries)} entries for {len(paths)} paths")
        self.paths = np.array(paths, dtype=bytes)  # fixed width: the longest path's
        self.entries = entries

    @classmethod
    def read(cls, folder: Path) -> PageIndex:
        text = (folder / PAGE_PATHS).read_bytes()
        return cls(text.split(b"\n") if text else [], np.load(folder / PAGE_INDEX, allow_pickle=False))

    @classmethod
    def write(cls, folder: Path, pages: list[tuple[str, tuple[int, int, int, int, str]]]) -> None:
        """Write the index of ``pages``, (path, (offset, length, gzip offset, gzip length, etag)) each."""
        if any("\n" in path for path, _ in pages):
            raise ValueError("a page path holds a line break: the page index lists one path per line")
        ordered = sorted((path.encode(), entry) for path, entry in pages)
        (folder / PAGE_PATHS).parent.mkdir(parents=True, exist_ok=True)
        (folder / PAGE_PATHS).write_bytes(b"\n".join(path for path, _ in ordered))
        with (folder / PAGE_INDEX).open("wb") as out:  # np.save would add .npy to a name without it
            np.save(out, np.array([entry for _, entry in ordered], dtype=cls.DTYPE), allow_pickle=False)

    def _row(self, path: str) -> int | None:
        key = path.encode()
        row = int(np.searchsorted(self.paths, key))
        return row if row < len(self.paths) and self.paths[row] == key else None

    def __contains__(self, path: str) -> bool:
        return self._row(path) is not None

    def __len__(self) -> int:
        return len(self.paths)

    def get(self, path: str) -> PackedRecord | None:
        row = self._row(path)
        if row is None:
            return None
        offset, length, gzip_offset, gzip_length, etag = self.entries[row].tolist()
        return PackedRecord(offset, length, gzip_offset, gzip_length, f'"{etag.decode()}"')


@dataclass
class Release:
    """A verified release folder, with the descriptors of its packs open for reading."""

    folder: Path
    manifest: Manifest
    pages: PageIndex
    prepared: dict[tuple[str, str, bool], Any] = field(default_factory=dict)  # serve.release_responses
    _descriptors: dict[str, int] = field(default_factory=dict)

    @classmethod
    def open(cls, folder: Path) -> Release:
        """Check every file against the manifest (raises ReleaseError naming what differs), then index the pages."""
        manifest = read_manifest(folder)
        if manifest.version != folder.name:
            raise ReleaseError(f"{folder} holds the manifest of release {manifest.version}, not of {folder.name}")
        verify(folder, manifest)
        return cls(folder, manifest, PageIndex.read(folder))

    @property
    def version(self) -> str:
        return self.manifest.version

    @property
    def base_url(self) -> str:
        return self.manifest.base_url

    def file(self, path: str) -> ReleaseFile | None:
        """The release's file at ``path`` (relative, no leading slash), or None."""
        return self.manifest.files.get(path)

    def variants(self, path: str) -> dict[str, ReleaseFile]:
        """The content codings ``path`` is stored in (``identity`` always, when the file exists)."""
        identity = self.manifest.files.get(path)
        if identity is None:
            return {}
        found = {"identity": identity}
        for coding, suffix in ENCODINGS.items():
            copy = self.manifest.files.get(path + suffix)
            if copy is not None:
                found[coding] = copy
        return found

    def descriptor(self, path: str) -> int:
        """An open read-only descriptor of the release's file ``path``, kept for the release's life."""
        fd = self._descriptors.get(path)
        if fd is None:
            fd = self._descriptors[path] = os.open(self.folder / path, os.O_RDONLY)
        return fd

    def read(self, path: str, offset: int, length: int) -> bytes:
        return os.pread(self.descriptor(path), length, offset)

    def page(self, path: str, gzipped: bool) -> bytes | None:
        """The page.json document of the page ``path`` (gzipped if asked), or None."""
        record = self.pages.get(path)
        if record is None:
            return None
        if gzipped:
            return self.read(PAGE_PACK_GZIP, record.gzip_offset, record.gzip_length)
        return self.read(PAGE_PACK, record.offset, record.length)

    def close(self) -> None:
        for fd in self._descriptors.values():
            os.close(fd)
        self._descriptors.clear()

    def __del__(self) -> None:
        self.close()
