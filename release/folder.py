"""A release folder as the server reads it: its manifest, checked, and its files by URL path.

A release mirrors the URL space: the document at ``/api/public/products.json`` is the file
``api/public/products.json``, its compressed copies ``….gz`` and ``….zst`` beside it. Page
records are packed in one file, read by offset (``PAGE_PACK``), so that the server holds an
index of them rather than the records.

Every page.json document begins with the same envelope, which names the release
(``PAGE_ENVELOPE``); the packs and their index hold what follows it, which does not, so that a
release whose pages did not change links them from the release before. The server puts the two
together: the envelope and the page's part, and for gzip the envelope's deflate stream
(compressed once per release, ended on a byte boundary) followed by the part's own, under one
gzip header and trailer: a deflate stream may go on in blocks compressed apart, as long as none
refers back across the join. A document's ETag is a digest of the envelope's sha256 and its
part's, so that it changes with either.
"""

from __future__ import annotations

import hashlib
import os
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from release.codecs import ENCODINGS, GZIP_HEADER, deflate_part, gzip_trailer
from release.manifest import Manifest, ReleaseError, ReleaseFile, read_manifest, verify

DOWNLOADS_DIR = "api/public/downloads"
PAGE_ENVELOPE = "records/page.json.envelope"  # what every page.json document of the release begins with
PAGE_PACK = "records/page.json.pack"  # what follows the envelope in each page.json document, end to end
PAGE_PACK_GZIP = "records/page.json.pack.gz"  # each of them gzipped alone, end to end
PAGE_INDEX = "records/page.json.index.npy"  # where each is in the two packs, and its sha256
PAGE_PATHS = "records/page.json.paths.txt"  # whose: the page paths, one per line, in the index's order
RELEASES_PREFIX = "/releases/"
# The fixed documents of a release, each served at its own address from the file at the same path
# (besides the collections, ``public.documents.COLLECTIONS``).
CAPABILITIES = "api/public/capabilities.json"
PRESS_KIT = "api/public/press-kit.json"
OPENAPI = "api/public/openapi.json"
CLAIMS = "api/public/claims.jsonl"
FULL_TEXT = "llms-full.txt"
DATASET = "api/public/dataset.json"  # written last: it lists the others' sizes and sha256
DATA_PACKAGE = "api/public/datapackage.json"
SINGLE_DOCUMENTS = (CAPABILITIES, PRESS_KIT, OPENAPI, CLAIMS, FULL_TEXT)
# What crawlers read first, outside the API's contract.
ROBOTS = "robots.txt"
LLMS = "llms.txt"
SITEMAP_INDEX = "sitemap.xml"
SITEMAPS_DIR = "sitemaps"
# A page as ``PageIndex.write`` takes it: (offset, length, deflate offset, deflate length, the
# part's sha256 digest), and what the part was made from (``source``) when known.
PageEntry = tuple[int, int, int, int, bytes] | tuple[int, int, int, int, bytes, int]


@dataclass(frozen=True)
class PackedRecord:
    """Where one page.json document's part after the envelope lies in the pack, where its deflate
    stream lies in the gzipped pack, and the whole document's validator (``PageIndex.get``)."""

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
    path (``path_key``): where its part lies in each pack, the part's sha256, and where its path
    lies in ``PAGE_PATHS``. A path is found by binary search over the keys, then confirmed by reading
    its bytes from ``PAGE_PATHS`` (keys of two paths may collide). A hundred thousand pages hold
    under 6 MB, not a Python object each, and reading them needs no library the server does not
    load anyway."""

    DTYPE = np.dtype(
        [
            ("key", "<u8"),
            ("part_offset", "<i8"),
            ("part_length", "<i4"),
            ("deflate_offset", "<i8"),
            ("deflate_length", "<i4"),
            ("path_offset", "<i8"),
            ("path_length", "<i4"),
            # The first 16 bytes of the part's sha256 (raw: "S" would drop NULs).
            ("part_sha256", "u1", (16,)),
            # What the part was made from, for the next publish to compare (0: not said).
            ("source", "<u8"),
        ]
    )

    FIELD: ClassVar[dict[str, int]] = {name: number for number, name in enumerate(DTYPE.names)}  # in a row read whole

    def __init__(self, paths_file: Path, rows: np.ndarray, envelope_sha256: bytes | None = None) -> None:
        if rows.dtype != self.DTYPE:
            raise ReleaseError(f"the page index has columns {rows.dtype}, not {self.DTYPE}")
        self.keys = np.ascontiguousarray(rows["key"])
        self.rows = rows
        self.envelope_sha256 = envelope_sha256
        self._paths = os.open(paths_file, os.O_RDONLY)

    @classmethod
    def read(cls, folder: Path, envelope_sha256: bytes | None = None) -> PageIndex:
        """The index in ``folder``; its ETags those of documents after the envelope of that
        sha256 (without one, of the parts alone)."""
        return cls(folder / PAGE_PATHS, np.load(folder / PAGE_INDEX, allow_pickle=False), envelope_sha256)

    @classmethod
    def write(cls, folder: Path, pages: list[tuple[str, PageEntry]]) -> None:
        """Write the index of ``pages``: (path, ``PageEntry``) each."""
        ordered = sorted((path_key(path.encode()), path.encode(), entry) for path, entry in pages)
        rows, position = [], 0
        for key, path, (offset, length, gzip_offset, gzip_length, digest, *source) in ordered:
            made_from = source[0] if source else 0
            rows.append(
                (key, offset, length, gzip_offset, gzip_length, position, len(path), tuple(digest[:16]), made_from)
            )
            position += len(path) + 1
        (folder / PAGE_PATHS).parent.mkdir(parents=True, exist_ok=True)
        (folder / PAGE_PATHS).write_bytes(b"".join(path + b"\n" for _, path, _ in ordered))
        with (folder / PAGE_INDEX).open("wb") as out:  # np.save would add .npy to a name without it
            np.save(out, np.array(rows, dtype=cls.DTYPE), allow_pickle=False)

    def by_path(self) -> dict[str, np.void]:
        """Every page's row, by its path (for a publish that takes unchanged pages from this one)."""
        paths = os.pread(self._paths, os.fstat(self._paths).st_size, 0)
        return {paths[row["path_offset"] : row["path_offset"] + row["path_length"]].decode(): row for row in self.rows}

    def _row(self, path: str) -> tuple[Any, ...] | None:
        """The row of ``path`` as a tuple of ``DTYPE``'s fields, or None. Read whole, with the
        array's own searchsorted: NumPy's access field by field and its searchsorted function
        made a lookup 8.4 µs, against 5.3 µs."""
        wanted = path.encode()
        key = path_key(wanted)  # a Python int: NumPy compares it as the keys' uint64
        keys = self.keys
        row = int(keys.searchsorted(key))
        while row < len(keys) and keys[row] == key:
            fields = self.rows.item(row)
            at, length = fields[self.FIELD["path_offset"]], fields[self.FIELD["path_length"]]
            if length == len(wanted) and os.pread(self._paths, length, at) == wanted:
                return fields
            row += 1
        return None

    def __contains__(self, path: str) -> bool:
        return self._row(path) is not None

    def __len__(self) -> int:
        return len(self.keys)

    def get(self, path: str) -> PackedRecord | None:
        fields = self._row(path)
        if fields is None:
            return None
        field = self.FIELD
        validator = fields[field["part_sha256"]].tobytes()
        if self.envelope_sha256 is not None:  # the whole document's: it changes with either part
            validator = hashlib.blake2b(self.envelope_sha256 + validator, digest_size=16).digest()
        return PackedRecord(
            fields[field["part_offset"]],
            fields[field["part_length"]],
            fields[field["deflate_offset"]],
            fields[field["deflate_length"]],
            f'"{validator.hex()}"',
        )

    def __del__(self) -> None:
        if hasattr(self, "_paths"):  # not when __init__ refused the index
            os.close(self._paths)


@dataclass
class PageEnvelope:
    """What every page.json document of a release begins with, and that beginning ready to be
    put before a page's part: as bytes, and as the head of a gzip member with its CRC-32 so far."""

    plain: bytes
    gzip_head: bytes
    crc: int

    @property
    def sha256(self) -> bytes:
        return hashlib.sha256(self.plain).digest()

    @classmethod
    def read(cls, folder: Path) -> PageEnvelope:
        try:
            plain = (folder / PAGE_ENVELOPE).read_bytes()
        except FileNotFoundError as error:
            raise ReleaseError(
                f"{folder} has no {PAGE_ENVELOPE}: it was published by an older reuse-data; publish again"
            ) from error
        return cls(plain, GZIP_HEADER + deflate_part(plain), zlib.crc32(plain))


@dataclass
class Release:
    """A verified release folder, with the descriptors of its packs open for reading."""

    folder: Path
    manifest: Manifest
    pages: PageIndex
    envelope: PageEnvelope
    prepared: dict[tuple[str, bool], Any] = field(
        default_factory=dict
    )  # serve.api.release_responses, by (path, immutable)
    page_records: Any = None  # serve.api.release_responses: the page records asked for last, kept found
    kept_bodies: Any = None  # serve.api.release_responses: small files sent whole, read once
    _descriptors: dict[str, int] = field(default_factory=dict)

    @classmethod
    def open(cls, folder: Path) -> Release:
        """Check every file against the manifest (raises ReleaseError naming what differs), then index the pages."""
        manifest = read_manifest(folder)
        if manifest.version != folder.name:
            raise ReleaseError(f"{folder} holds the manifest of release {manifest.version}, not of {folder.name}")
        verify(folder, manifest)
        envelope = PageEnvelope.read(folder)
        return cls(folder, manifest, PageIndex.read(folder, envelope.sha256), envelope)

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
        """The page.json document of a page its index found (``pages.get``), gzipped if asked:
        the release's envelope, then the page's part (module docstring)."""
        part = self.read(PAGE_PACK, record.offset, record.length)
        envelope = self.envelope
        if not gzipped:
            return envelope.plain + part
        deflated = self.read(PAGE_PACK_GZIP, record.gzip_offset, record.gzip_length)
        size = len(envelope.plain) + len(part)
        return envelope.gzip_head + deflated + gzip_trailer(zlib.crc32(part, envelope.crc), size)

    def close(self) -> None:
        for fd in self._descriptors.values():
            os.close(fd)
        self._descriptors.clear()

    def __del__(self) -> None:
        self.close()
