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

import pyarrow.parquet as pq

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
PAGE_INDEX = "records/page.json.index.parquet"  # path -> where each is in the two packs
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


@dataclass
class Release:
    """A verified release folder, with the descriptors of its packs open for reading."""

    folder: Path
    manifest: Manifest
    pages: dict[str, PackedRecord]
    _descriptors: dict[str, int] = field(default_factory=dict)

    @classmethod
    def open(cls, folder: Path) -> Release:
        """Check every file against the manifest (raises ReleaseError naming what differs), then index the pages."""
        manifest = read_manifest(folder)
        if manifest.version != folder.name:
            raise ReleaseError(f"{folder} holds the manifest of release {manifest.version}, not of {folder.name}")
        verify(folder, manifest)
        pages: dict[str, PackedRecord] = {}
        if PAGE_INDEX in manifest.files:
            index = pq.read_table(folder / PAGE_INDEX).to_pydict()
            pages = {
                path: PackedRecord(offset, length, gzip_offset, gzip_length, f'"{sha[:32]}"')
                for path, offset, length, gzip_offset, gzip_length, sha in zip(
                    index["path"],
                    index["offset"],
                    index["length"],
                    index["gzip_offset"],
                    index["gzip_length"],
                    index["sha256"],
                    strict=True,
                )
            }
        return cls(folder, manifest, pages)

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
