"""A Parquet file's footer, read and written, so that row groups can be copied from one file into another.

A Parquet file is ``PAR1``, the column chunks of its row groups, then its metadata (Thrift's
compact protocol), the metadata's length and ``PAR1``. The metadata says where each column chunk
lies in the file and where its bloom filter and page indexes lie, when it has them. A row group
copied into another file at another place is the same bytes with those offsets moved
(``FileFooter.row_group_spans``, ``write_parquet``): no value is decoded or encoded again.

The metadata is kept as Thrift's fields by number (``ThriftStruct``), so that fields this module
does not know pass through as they were; only the offsets named below are changed.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

MAGIC = b"PAR1"

# Thrift compact protocol's types.
STOP, TRUE, FALSE, BYTE, I16, I32, I64, DOUBLE, BINARY, LIST, SET, MAP, STRUCT = range(13)

# Field numbers of parquet.thrift: FileMetaData, RowGroup, ColumnChunk, ColumnMetaData.
FILE_NUM_ROWS, FILE_ROW_GROUPS = 3, 4
GROUP_COLUMNS, GROUP_NUM_ROWS, GROUP_FILE_OFFSET, GROUP_ORDINAL = 1, 3, 5, 7
CHUNK_FILE_PATH, CHUNK_FILE_OFFSET, CHUNK_META = 1, 2, 3
CHUNK_OFFSET_INDEX, CHUNK_OFFSET_INDEX_LENGTH, CHUNK_COLUMN_INDEX, CHUNK_COLUMN_INDEX_LENGTH = 4, 5, 6, 7
META_TOTAL_COMPRESSED, META_DATA_PAGE, META_INDEX_PAGE, META_DICTIONARY_PAGE = 7, 9, 10, 11
META_BLOOM_FILTER, META_BLOOM_FILTER_LENGTH = 14, 15
CRYPTO_METADATA = 8  # ColumnChunk: an encrypted column, which cannot be copied this way


class ParquetLayoutError(ValueError):
    """A file whose row groups cannot be copied as bytes (encrypted, or laid out unexpectedly)."""


class ThriftStruct:
    """A Thrift struct as its fields by number, each with its compact type, in the order read."""

    def __init__(self, fields: list[list[Any]] | None = None) -> None:
        self.fields: list[list[Any]] = fields or []  # [field id, type, value]

    def get(self, field: int, default: Any = None) -> Any:
        for number, _, value in self.fields:
            if number == field:
                return value
        return default

    def set(self, field: int, value: Any) -> None:
        for entry in self.fields:
            if entry[0] == field:
                entry[2] = value
                return
        raise KeyError(field)

    def has(self, field: int) -> bool:
        return any(number == field for number, _, _ in self.fields)


class CompactReader:
    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def byte(self) -> int:
        value = self.data[self.at]
        self.at += 1
        return value

    def varint(self) -> int:
        shift = result = 0
        while True:
            byte = self.byte()
            result |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return result
            shift += 7

    def zigzag(self) -> int:
        value = self.varint()
        return (value >> 1) ^ -(value & 1)

    def value(self, kind: int) -> Any:
        if kind in (TRUE, FALSE):  # within a list, a bool is a byte of its own
            return self.byte() == TRUE
        if kind == BYTE:
            return struct.unpack("b", bytes([self.byte()]))[0]
        if kind in (I16, I32, I64):
            return self.zigzag()
        if kind == DOUBLE:
            self.at += 8
            return struct.unpack("<d", self.data[self.at - 8 : self.at])[0]
        if kind == BINARY:
            length = self.varint()
            self.at += length
            return self.data[self.at - length : self.at]
        if kind in (LIST, SET):
            header = self.byte()
            size, element = header >> 4, header & 0x0F
            if size == 15:
                size = self.varint()
            return (element, [self.value(element) for _ in range(size)])
        if kind == MAP:
            size = self.varint()
            types = self.byte() if size else 0
            return (types, [(self.value(types >> 4), self.value(types & 0x0F)) for _ in range(size)])
        if kind == STRUCT:
            return self.struct()
        raise ParquetLayoutError(f"unknown Thrift compact type {kind}")

    def struct(self) -> ThriftStruct:
        fields, last = [], 0
        while (header := self.byte()) != STOP:
            delta, kind = header >> 4, header & 0x0F
            number = last + delta if delta else self.zigzag()
            value = kind == TRUE if kind in (TRUE, FALSE) else self.value(kind)
            fields.append([number, kind, value])
            last = number
        return ThriftStruct(fields)


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        if value < 0x80:
            out.append(value)
            return bytes(out)
        out.append(value & 0x7F | 0x80)
        value >>= 7


def _zigzag(value: int) -> bytes:
    return _varint((value << 1) ^ (value >> 63))


def _encode_value(kind: int, value: Any) -> bytes:
    if kind in (TRUE, FALSE):
        return bytes([TRUE if value else FALSE])
    if kind == BYTE:
        return struct.pack("b", value)
    if kind in (I16, I32, I64):
        return _zigzag(value)
    if kind == DOUBLE:
        return struct.pack("<d", value)
    if kind == BINARY:
        return _varint(len(value)) + bytes(value)
    if kind in (LIST, SET):
        element, items = value
        header = (
            bytes([len(items) << 4 | element]) if len(items) < 15 else bytes([0xF0 | element]) + _varint(len(items))
        )
        return header + b"".join(_encode_value(element, item) for item in items)
    if kind == MAP:
        types, items = value
        if not items:
            return b"\x00"
        body = b"".join(_encode_value(types >> 4, k) + _encode_value(types & 0x0F, v) for k, v in items)
        return _varint(len(items)) + bytes([types]) + body
    if kind == STRUCT:
        return encode_struct(value)
    raise ParquetLayoutError(f"unknown Thrift compact type {kind}")


def encode_struct(value: ThriftStruct) -> bytes:
    out, last = bytearray(), 0
    for number, kind, item in value.fields:
        if kind in (TRUE, FALSE):
            kind = TRUE if item else FALSE
        delta = number - last
        out += bytes([delta << 4 | kind]) if 0 < delta <= 15 else bytes([kind]) + _zigzag(number)
        if kind not in (TRUE, FALSE):
            out += _encode_value(kind, item)
        last = number
    out.append(STOP)
    return bytes(out)


@dataclass(frozen=True)
class Span:
    """Bytes of a file, as where they begin and how many."""

    at: int
    length: int


@dataclass
class RowGroupBytes:
    """One row group of a file: its metadata, where its column chunks lie (one span, as every
    writer lays them end to end), and where each chunk's bloom filter and page indexes lie."""

    metadata: ThriftStruct
    chunks: Span
    extras: list[tuple[ThriftStruct, int, int, Span]]  # (struct, offset field, length field, where)

    @property
    def rows(self) -> int:
        return self.metadata.get(GROUP_NUM_ROWS)


@dataclass
class FileFooter:
    """A Parquet file's metadata, read from its end."""

    metadata: ThriftStruct

    @classmethod
    def read(cls, path: Path) -> FileFooter:
        with path.open("rb") as file:
            file.seek(-8, 2)
            length, magic = struct.unpack("<I4s", file.read(8))
            if magic != MAGIC:
                raise ParquetLayoutError(f"{path} is not a Parquet file with a plain footer")
            file.seek(-8 - length, 2)
            return cls(CompactReader(file.read(length)).struct())

    @property
    def schema(self) -> list[Any]:
        return self.metadata.get(2)[1]

    def row_groups(self) -> list[RowGroupBytes]:
        """Each row group, with where its bytes lie."""
        groups = []
        for group in self.metadata.get(FILE_ROW_GROUPS, (STRUCT, []))[1]:
            starts, ends, extras = [], [], []
            for chunk in group.get(GROUP_COLUMNS)[1]:
                meta = chunk.get(CHUNK_META)
                if meta is None or chunk.has(CRYPTO_METADATA) or chunk.get(CHUNK_FILE_PATH) is not None:
                    raise ParquetLayoutError("a column chunk that is encrypted or in another file")
                first = meta.get(META_DICTIONARY_PAGE) or meta.get(META_DATA_PAGE)
                if meta.get(META_INDEX_PAGE):
                    first = min(first, meta.get(META_INDEX_PAGE))
                starts.append(first)
                ends.append(first + meta.get(META_TOTAL_COMPRESSED))
                for owner, offset, length in (
                    (meta, META_BLOOM_FILTER, META_BLOOM_FILTER_LENGTH),
                    (chunk, CHUNK_OFFSET_INDEX, CHUNK_OFFSET_INDEX_LENGTH),
                    (chunk, CHUNK_COLUMN_INDEX, CHUNK_COLUMN_INDEX_LENGTH),
                ):
                    if owner.get(offset) is not None:
                        if owner.get(length) is None:
                            raise ParquetLayoutError("a bloom filter or page index of unknown length")
                        extras.append((owner, offset, length, Span(owner.get(offset), owner.get(length))))
            span = Span(min(starts), max(ends) - min(starts))
            if sum(end - start for start, end in zip(starts, ends, strict=True)) != span.length:
                raise ParquetLayoutError("a row group whose column chunks are not laid end to end")
            groups.append(RowGroupBytes(group, span, extras))
        return groups


def _move(group: RowGroupBytes, delta: int) -> None:
    """Move every offset of ``group``'s column chunks by ``delta`` bytes (not its extras')."""
    for chunk in group.metadata.get(GROUP_COLUMNS)[1]:
        meta = chunk.get(CHUNK_META)
        for field in (META_DATA_PAGE, META_INDEX_PAGE, META_DICTIONARY_PAGE):
            if meta.get(field) is not None:
                meta.set(field, meta.get(field) + delta)
        if chunk.get(CHUNK_FILE_OFFSET):
            chunk.set(CHUNK_FILE_OFFSET, chunk.get(CHUNK_FILE_OFFSET) + delta)
    if group.metadata.get(GROUP_FILE_OFFSET) is not None:
        group.metadata.set(GROUP_FILE_OFFSET, group.metadata.get(GROUP_FILE_OFFSET) + delta)


def write_parquet(target: BinaryIO, template: FileFooter, groups: Iterable[tuple[BinaryIO, RowGroupBytes]]) -> int:
    """Write a Parquet file of ``groups`` (each read from its open source file), in that order,
    under ``template``'s schema and file metadata: their column chunks end to end, then their
    bloom filters and page indexes, then the metadata; how many rows it holds."""
    target.write(MAGIC)
    placed: list[tuple[BinaryIO, RowGroupBytes]] = []
    for source, group in groups:
        _move(group, target.tell() - group.chunks.at)
        _copy(source, group.chunks, target)
        placed.append((source, group))
    for source, group in placed:
        for owner, offset, _, span in group.extras:
            owner.set(offset, target.tell())
            _copy(source, span, target)
    for ordinal, (_, group) in enumerate(placed):
        if group.metadata.has(GROUP_ORDINAL):
            group.metadata.set(GROUP_ORDINAL, ordinal)
    rows = sum(group.rows for _, group in placed)
    metadata = ThriftStruct([list(field) for field in template.metadata.fields])
    metadata.set(FILE_NUM_ROWS, rows)
    metadata.set(FILE_ROW_GROUPS, (STRUCT, [group.metadata for _, group in placed]))
    footer = encode_struct(metadata)
    target.write(footer + struct.pack("<I", len(footer)) + MAGIC)
    return rows


def _copy(source: BinaryIO, span: Span, target: BinaryIO) -> None:
    source.seek(span.at)
    remaining = span.length
    while remaining:
        block = source.read(min(remaining, 4 * 1024 * 1024))
        if not block:
            raise ParquetLayoutError("a row group past the end of its file")
        target.write(block)
        remaining -= len(block)
