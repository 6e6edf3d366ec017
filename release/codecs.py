"""The compressed copies of a release's files, as publish writes them and the server reads them.

Every text file of ``GZIP_MINIMUM_BYTES`` or more gets a gzip copy (``.gz``) and, where zstd saves
a further ``ZSTD_MUST_SAVE``, a zstd copy (``.zst``) beside it (``ENCODINGS``). Both are written so
that the head of a document that names its release can be replaced without compressing its body
again: a gzip member's head as deflate blocks of their own, ended on a byte boundary, then the
body's blocks; a zstd frame's head as raw blocks, then the body's blocks, which carry no state
across the join (``ZstdFrame``). The server joins a page.json's envelope and its part the same
way (``release.folder``): a deflate stream may go on in blocks compressed apart.

A file that a tester's sheet changes in a few places (``publish.parted_files``) has its gzip copy
written as parts deflated apart (``GzipParts``), so that the next release copies the deflated
parts that did not change. Its zstd copy is compressed whole, its head apart (``zstd_copy``): zstd
cannot be joined from parts within one frame (a block may reuse the offsets of the blocks before
it), and a copy of several frames is cut short, without an error, by a client that decodes it in
one call (``zstandard.ZstdDecompressor().decompress`` returns the first frame alone).
``publish.parted_files`` says at which level (``ZSTD_FAST_LEVEL`` for the claims).
"""

from __future__ import annotations

import io
import shutil
import struct
import zlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import zstandard

# Content codings a release carries copies in, best first, with their files' suffixes; identity is the file itself.
ENCODINGS: dict[str, str] = {"zstd": ".zst", "gzip": ".gz"}
# Gzip for bodies fixed for a release, written at publish or made once by the server: below this
# size compressing saves next to nothing; level 9 saves about 1 % more and takes twice as long.
GZIP_MINIMUM_BYTES = 1024
GZIP_LEVEL = 6
# A gzip member's header as this project writes them: no name, no time, unknown system.
GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
GZIP_TRAILER_BYTES = 8  # the CRC-32 and the size of what was compressed
ZSTD_LEVEL = 9
# For a large file made again at every sheet from reused parts, whose zstd copy is compressed
# whole each time: on the 70 MB of claims at 1M readings, level 3 took 0.12 s to level 9's 0.75 s
# (and gzip's 0.92 s), for a copy 15 % larger. (On products.json it saves nothing over gzip.)
ZSTD_FAST_LEVEL = 3
# Of the gzip copy's size, or no zstd copy is kept. A document that names its release, within a few
# bytes of the bar, may gain or lose its zstd copy from one release to the next as the version's
# digits compress; 5.5 % keeps the demo's documents clear of that (dataset.json saves 5.0 %,
# sitemaps/reviews.xml 5.8 %).
ZSTD_MUST_SAVE = 0.055
COPY_BYTES = 1024 * 1024


def gzip_trailer(crc: int, size: int) -> bytes:
    """The end of a gzip member: the CRC-32 and the size (modulo 2**32) of its uncompressed bytes."""
    return struct.pack("<II", crc, size & 0xFFFFFFFF)


DEFLATE_END = b"\x03\x00"  # an empty final block: ends a deflate stream made of parts


def deflate_part(part: bytes) -> bytes:
    """``part`` as deflate blocks of its own, ended on a byte boundary (a sync flush) and not
    final, so that blocks compressed on their own may follow it."""
    compressor = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, -zlib.MAX_WBITS)
    return compressor.compress(part) + compressor.flush(zlib.Z_SYNC_FLUSH)


class GzipParts:
    """One gzip member written as parts deflated apart (``deflate_part``), so that a part
    deflated for an earlier file can be copied into this one as it is: any gzip reader reads
    the member as one stream."""

    def __init__(self, out: BinaryIO) -> None:
        self.out, self.crc, self.size = out, 0, 0
        out.write(GZIP_HEADER)

    def add(self, plain: bytes, deflated: bytes | None = None) -> tuple[int, int]:
        """Add ``plain``, as ``deflated`` when given (its ``deflate_part``); where its blocks lie."""
        deflated = deflate_part(plain) if deflated is None else deflated
        self.crc, self.size = zlib.crc32(plain, self.crc), self.size + len(plain)
        at = self.out.tell()
        self.out.write(deflated)
        return at, len(deflated)

    def close(self) -> None:
        """End the stream and the member (the CRC-32 and size of everything added)."""
        self.out.write(DEFLATE_END + gzip_trailer(self.crc, self.size))


def gzip_member(part: bytes) -> bytes:
    """``part`` as one gzip member of its own."""
    deflated = zlib.compress(part, GZIP_LEVEL, -zlib.MAX_WBITS)
    return GZIP_HEADER + deflated + gzip_trailer(zlib.crc32(part), len(part))


def write_file(folder: Path, path: str, write: Callable[[Path], None]) -> list[str]:
    """The file at ``path`` as ``write`` writes it, and its compressed copies: the paths written."""
    target = folder / path
    target.parent.mkdir(parents=True, exist_ok=True)
    write(target)
    return [path, *compress_copies(folder, path)]


def compress_copies(folder: Path, path: str, head_length: int = 0) -> dict[str, int]:
    """Write the gzip copy of a text file, and its zstd copy where that saves more: both at
    once, on two threads (each library compresses without holding the GIL). Each copy's path,
    with where its body begins: the first ``head_length`` bytes (a head that names the release)
    are compressed apart from the body, so that a later release can put a new head before the
    same compressed body (``restamp``)."""
    source = folder / path
    if source.suffix == ".parquet" or source.stat().st_size < GZIP_MINIMUM_BYTES:
        return {}
    gzipped, zstd = path + ENCODINGS["gzip"], path + ENCODINGS["zstd"]
    with ThreadPoolExecutor(max_workers=1) as beside:
        zstd_written = beside.submit(write_zstd, source, folder / zstd, head_length)
        copies = {gzipped: write_gzip(source, folder / gzipped, head_length)}
        copies[zstd] = zstd_written.result()
    if not zstd_worth_keeping(folder, path):
        del copies[zstd]
    return copies


def zstd_worth_keeping(folder: Path, path: str) -> bool:
    """Whether the zstd copy of ``path`` saves ``ZSTD_MUST_SAVE`` of its gzip copy; removed if not."""
    zstd = folder / (path + ENCODINGS["zstd"])
    if zstd.stat().st_size > (folder / (path + ENCODINGS["gzip"])).stat().st_size * (1 - ZSTD_MUST_SAVE):
        zstd.unlink()
        return False
    return True


def zstd_copy(
    folder: Path, path: str, level: int, head_length: int = 0, body_from: tuple[Path, int] | None = None
) -> dict[str, int]:
    """The zstd copy of ``path``, where it saves enough beside the gzip copy already written: its
    first ``head_length`` bytes as raw blocks, then the rest compressed whole at ``level``, or
    taken from ``body_from`` (an earlier copy of the same rest, and where it begins there). Its
    path with where its body begins, or nothing."""
    zstd, source = path + ENCODINGS["zstd"], folder / path
    if body_from is None:
        body_at = write_zstd(source, folder / zstd, head_length, level)
    else:
        with source.open("rb") as plain:
            head = plain.read(head_length)
        body_at = restamp_zstd(body_from[0], body_from[1], head, source, folder / zstd)
    return {zstd: body_at} if zstd_worth_keeping(folder, path) else {}


def write_gzip(source: Path, target: Path, head_length: int = 0) -> int:
    """``source`` as one gzip member: its first ``head_length`` bytes as deflate blocks of their
    own, ended on a byte boundary, then the rest compressed apart; where the rest's blocks begin."""
    with source.open("rb") as plain, target.open("wb") as out:
        head = plain.read(head_length)
        out.write(GZIP_HEADER + (deflate_part(head) if head else b""))
        body_at = out.tell()
        crc, size = zlib.crc32(head), len(head)
        compressor = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, -zlib.MAX_WBITS)
        while block := plain.read(COPY_BYTES):
            crc, size = zlib.crc32(block, crc), size + len(block)
            out.write(compressor.compress(block))
        out.write(compressor.flush() + gzip_trailer(crc, size))
    return body_at


def write_zstd(source: Path, target: Path, head_length: int = 0, level: int = ZSTD_LEVEL) -> int:
    """``source`` as one zstd frame with its size in the header (so that a client can decode it
    in one call): its first ``head_length`` bytes as raw blocks, then the blocks of the rest as
    zstd compresses it alone (at ``level``); where those begin."""
    size = source.stat().st_size
    # On every core: zstd's jobs are cut by size, not by thread, so the bytes are the same on any
    # machine (checked for one to four threads), and a 187 MB products.json takes 0.8 s, not 1.7.
    compressor = zstandard.ZstdCompressor(level=level, threads=-1)
    with source.open("rb") as plain, target.open("wb") as out:
        if not head_length:
            compressor.copy_stream(plain, out, size=size)
            return 0
        head = plain.read(head_length)
        body = io.BytesIO()
        compressor.copy_stream(plain, body, size=size - len(head))
        frame = ZstdFrame.parse(body.getbuffer())
        out.write(frame.with_head(head, size))
        body_at = out.tell()
        out.write(body.getbuffer()[frame.length :])
    return body_at


@dataclass(frozen=True)
class ZstdFrame:
    """The header of a zstd frame as ``zstandard`` writes one (no dictionary, no checksum): its
    length, and its window, which the blocks compressed under it need."""

    MAGIC = b"\x28\xb5\x2f\xfd"
    RAW_BLOCK_MAX = 128 * 1024
    length: int
    window_descriptor: int | None  # None: a single-segment frame, whose window is its content

    @classmethod
    def parse(cls, frame: bytes | memoryview) -> ZstdFrame:
        if bytes(frame[:4]) != cls.MAGIC:
            raise ValueError("not a zstd frame")
        descriptor = frame[4]
        single_segment, checksum, dictionary = descriptor >> 5 & 1, descriptor >> 2 & 1, descriptor & 3
        if checksum or dictionary:
            raise ValueError("a zstd frame with a checksum or a dictionary cannot take a new head")
        size_bytes = (1 if single_segment else 0, 2, 4, 8)[descriptor >> 6]
        return cls(5 + (0 if single_segment else 1) + size_bytes, None if single_segment else frame[5])

    def with_head(self, head: bytes, content_size: int) -> bytes:
        """A frame header for ``content_size`` bytes under this frame's window, then ``head`` as
        raw blocks: this frame's blocks may follow unchanged, as raw blocks change none of the
        state (entropy tables, repeated offsets) that compressed blocks carry over."""
        single_segment = self.window_descriptor is None
        descriptor = 3 << 6 | (1 << 5 if single_segment else 0)  # an eight-byte content size
        window = b"" if single_segment else bytes([self.window_descriptor])
        header = self.MAGIC + bytes([descriptor]) + window + content_size.to_bytes(8, "little")
        pieces = (head[at : at + self.RAW_BLOCK_MAX] for at in range(0, len(head), self.RAW_BLOCK_MAX))
        return header + b"".join((len(piece) << 3).to_bytes(3, "little") + piece for piece in pieces)


def restamp_gzip(old_copy: Path, body_at: int, head: bytes, plain: Path, target: Path) -> int:
    """The gzip copy of ``plain`` (``head``, then the body ``old_copy`` holds compressed from
    ``body_at``): the head's blocks, the old body's blocks, a trailer for the whole; where the
    body begins."""
    crc = 0
    with plain.open("rb") as document:
        while block := document.read(COPY_BYTES):
            crc = zlib.crc32(block, crc)
    with target.open("wb") as out, old_copy.open("rb") as old:
        out.write(GZIP_HEADER + deflate_part(head))
        new_body_at = out.tell()
        old.seek(body_at)
        remaining = old_copy.stat().st_size - GZIP_TRAILER_BYTES - body_at
        while remaining > 0:
            block = old.read(min(COPY_BYTES, remaining))
            out.write(block)
            remaining -= len(block)
        out.write(gzip_trailer(crc, plain.stat().st_size))
    return new_body_at


def restamp_zstd(old_copy: Path, body_at: int, head: bytes, plain: Path, target: Path) -> int:
    """The zstd copy of ``plain`` (``head``, then the body ``old_copy`` holds compressed from
    ``body_at``): a frame header for the whole, the head's raw blocks, the old body's blocks;
    where the body begins."""
    with old_copy.open("rb") as old, target.open("wb") as out:
        frame = ZstdFrame.parse(old.read(64))
        out.write(frame.with_head(head, plain.stat().st_size))
        new_body_at = out.tell()
        old.seek(body_at)
        shutil.copyfileobj(old, out, COPY_BYTES)
    return new_body_at
