"""A release folder as the server reads it: its manifest, checked, and its files by URL path.

A release mirrors the URL space: the document at ``/api/public/products.json`` is the file
``api/public/products.json``, its compressed copies ``….gz`` and ``….zst`` beside it. Page
records are packed in one file, read by offset (``PAGE_PACK``), so that the server holds an
index of them rather than the records.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from warehouse.manifest import Manifest, ReleaseError, ReleaseFile, read_manifest, verify

# Content codings a release carries copies in, best first; identity is the file itself.
ENCODINGS: dict[str, str] = {"zstd": ".zst", "gzip": ".gz"}
DOWNLOADS_DIR = "api/public/downloads"
PAGE_PACK = "records/page.json.pack"  # every page.json document end to end
PAGE_PACK_GZIP = "records/page.json.pack.gz"  # each of them gzipped alone, end to end
PAGE_INDEX = "records/page.json.index.npy"  # where each is in the two packs, and its ETag
PAGE_PATHS = "records/page.json.paths.txt"  # whose: the page paths, one per line, in the index's order
RELEASES_PREFIX = "/releases/"


@dataclass(frozen=True)
class PackedRecord:
    """Where one page.json document lies in the pack and in its gzipped pack, and its validator."""

    offset: int
    length: int
    gzip_offset: int
    gzip_length: int
    etag: str


def path_key(path: bytes) -> int:
    """The 64-bit key a page path is sorted and found by."""
    return int.from_bytes(hashlib.blake2b(path, digest_size=8).digest(), "little")


class PageIndex:
    """The page paths of a release and where each page.json lies in the packs.

    ``PAGE_INDEX`` (NumPy's own format) holds a row per page, sorted by the 64-bit key of its
    path (``path_key``): where its document lies in each pack, its ETag, and where its path lies
    in ``PAGE_PATHS``. A path is found by binary search over the keys, then confirmed by reading
    its bytes from ``PAGE_PATHS`` (keys of two paths may collide). A hundred thousand pages hold
    under 6 MB, not a Python object each, and reading them needs no library the server does not
    load anyway."""

    DTYPE = np.dtype(
        [
            ("key", "<u8"),
            ("offset", "<i8"),
            ("length", "<i4"),
            ("gzip_offset", "<i8"),
            ("gzip_length", "<i4"),
            ("path_offset", "<i8"),
            ("path_length", "<i4"),
            ("etag", "u1", (16,)),  # the first 16 bytes of the document's sha256 (raw: "S" would drop NULs)
        ]
    )

    def __init__(self, paths_file: Path, rows: np.ndarray) -> None:
        if rows.dtype != self.DTYPE:
            raise ReleaseError(f"the page index has columns {rows.dtype}, not {self.DTYPE}")
        self.keys = np.ascontiguousarray(rows["key"])
        self.rows = rows
        self._paths = os.open(paths_file, os.O_RDONLY)

    @classmethod
    def read(cls, folder: Path) -> PageIndex:
        return cls(folder / PAGE_PATHS, np.load(folder / PAGE_INDEX, allow_pickle=False))

    @classmethod
    def write(cls, folder: Path, pages: list[tuple[str, tuple[int, int, int, int, bytes]]]) -> None:
        """Write the index of ``pages``: (path, (offset, length, gzip offset, gzip length, sha256 digest)) each."""
        ordered = sorted((path_key(path.encode()), path.encode(), entry) for path, entry in pages)
        rows, position = [], 0
        for key, path, (offset, length, gzip_offset, gzip_length, digest) in ordered:
            rows.append((key, offset, length, gzip_offset, gzip_length, position, len(path), tuple(digest[:16])))
            position += len(path) + 1
        (folder / PAGE_PATHS).parent.mkdir(parents=True, exist_ok=True)
        (folder / PAGE_PATHS).write_bytes(b"".join(path + b"\n" for _, path, _ in ordered))
        with (folder / PAGE_INDEX).open("wb") as out:  # np.save would add .npy to a name without it
            np.save(out, np.array(rows, dtype=cls.DTYPE), allow_pickle=False)

    def _row(self, path: str) -> int | None:
        wanted = path.encode()
        key = np.uint64(path_key(wanted))
        row = int(np.searchsorted(self.keys, key))
        while row < len(self.keys) and self.keys[row] == key:
            at, length = int(self.rows["path_offset"][row]), int(self.rows["path_length"][row])
            if length == len(wanted) and os.pread(self._paths, length, at) == wanted:
                return row
            row += 1
        return None

    def __contains__(self, path: str) -> bool:
        return self._row(path) is not None

    def __len__(self) -> int:
        return len(self.keys)

    def get(self, path: str) -> PackedRecord | None:
        row = self._row(path)
        if row is None:
            return None
        entry = self.rows[row]
        return PackedRecord(
            int(entry["offset"]),
            int(entry["length"]),
            int(entry["gzip_offset"]),
            int(entry["gzip_length"]),
            f'"{entry["etag"].tobytes().hex()}"',
        )

    def __del__(self) -> None:
        if hasattr(self, "_paths"):  # not when __init__ refused the index
            os.close(self._paths)


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

    def page(self, record: PackedRecord, gzipped: bool) -> bytes:
        """The page.json document of a page its index found (``pages.get``), gzipped if asked."""
        if gzipped:
            return self.read(PAGE_PACK_GZIP, record.gzip_offset, record.gzip_length)
        return self.read(PAGE_PACK, record.offset, record.length)

    def close(self) -> None:
        for fd in self._descriptors.values():
            os.close(fd)
        self._descriptors.clear()

    def __del__(self) -> None:
        self.close()
