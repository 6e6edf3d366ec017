"""The fixed documents of a release, each at its URL path, and how each is written from the snapshot.

A document written in Python may read any table; one written by a DuckDB statement (the claims)
says which it reads (``Document.tables``), so that a publish knows when it is unchanged. A document
that names its release (version, time) cannot be taken from another release: a collection names
it only in its head, before its items, so its body is kept across releases (``publish.restamp``).
A document listing the rows of a table patched by row (``PATCHED_BY``: the claims, the products)
is written in parts that a later release copies where their rows did not change
(``publish.parted_files``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, BinaryIO

from public import documents, openapi
from publish import crawler_files
from publish.parted_files import PartedLayout, collection_parts, full_text_parts, json_lines_parts
from release.codecs import COPY_BYTES, ZSTD_LEVEL
from release.folder import CAPABILITIES, CLAIMS, FULL_TEXT, LLMS, OPENAPI, PRESS_KIT, ROBOTS
from release.snapshot import Snapshot
from warehouse.contract import PATCHED_BY

# Writes one file of the release (at the path given) from the snapshot.
FileWriter = Callable[[Path, Snapshot], None]
# Writes a document into an open file, from the snapshot.
Writer = Callable[[BinaryIO, Snapshot], None]


def streamed(write: Writer) -> FileWriter:
    """A file writer of a document written as it is read (buffered, never whole in memory)."""

    def write_file(target: Path, snapshot: Snapshot) -> None:
        with target.open("wb", buffering=COPY_BYTES) as out:
            write(out, snapshot)

    return write_file


def whole(build: Callable[[Snapshot], dict[str, Any]]) -> FileWriter:
    """A file writer of a small document built whole."""
    return streamed(lambda out, snapshot: out.write(documents.encode(build(snapshot))))


@dataclass(frozen=True)
class Document:
    """A fixed document: how it is written, what it is made from besides the code, and how it
    names the release it belongs to."""

    # How it is written whole; None for a document written in parts (``parted``).
    write: FileWriter | None = None
    # The tables it reads; None for any (a document written in Python may read any table).
    tables: tuple[str, ...] | None = None
    # Whether it names its release (version or time), so that no other release holds it.
    names_release: bool = False
    # For a document that names its release only in a head before its body: the bytes that end
    # that head (the collection's key opening its list), so that the body is kept (``restamp``).
    body_follows: bytes | None = None
    # For a document written in parts that a later release copies (``publish.parted_files``).
    parted: PartedLayout | None = None


def collection(listed: documents.Collection) -> Document:
    """A collection document: it names its release only in its head, before its items. Its
    items are written in parts when its table is patched by row, its body kept whole otherwise."""
    if listed.table in PATCHED_BY:
        layout = PartedLayout(
            listed.table,
            collection_parts(listed),
            head=partial(documents.collection_head, collection=listed),
            separator=b",",
            tail=documents.COLLECTION_TAIL,
            zstd_level=ZSTD_LEVEL,
        )
        return Document(names_release=True, parted=layout, tables=(listed.table,))
    return Document(
        streamed(partial(documents.write_collection, collection=listed)),
        names_release=True,
        body_follows=b',"' + listed.key.encode() + b'":[',
    )


# URL path (no leading slash) of each fixed document -> how it is written from the snapshot.
# The dataset descriptor comes last, as it lists the others' sizes and sha256 (``DATASET``).
DOCUMENTS: dict[str, Document] = {
    **{path.lstrip("/"): collection(listed) for path, listed in documents.COLLECTIONS.items()},
    CAPABILITIES: Document(whole(documents.capabilities), names_release=True),
    PRESS_KIT: Document(whole(documents.press_kit), names_release=True),
    OPENAPI: Document(whole(lambda snapshot: openapi.document(snapshot.base_url, snapshot.dictionary))),
    # DuckDB writes a claim's columns (text, numbers, a date, lists of text) as documents.record
    # would, and ten million reading ids without a Python object each.
    CLAIMS: Document(parted=PartedLayout("claims", json_lines_parts), tables=("claims",)),
    # Every page's Markdown, in parts of about 512 pages: a sheet re-encodes its product's part.
    FULL_TEXT: Document(
        parted=PartedLayout(
            "corpus_documents",
            full_text_parts,
            separator=documents.FULL_TEXT_SEPARATOR,
            zstd_level=ZSTD_LEVEL,
            columns=("document",),
        ),
        tables=("corpus_documents",),
    ),
}
# Served at their own address like the documents above, but outside the API's contract: for crawlers.
CRAWLER_DOCUMENTS: dict[str, Document] = {
    ROBOTS: Document(streamed(crawler_files.write_robots)),
    LLMS: Document(streamed(crawler_files.write_llms_txt)),
}
