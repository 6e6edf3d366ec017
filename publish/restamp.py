"""Documents that name their release only in a head before their body (the collections).

Such a document is written as a head and a body compressed apart (``write_enveloped``), so that a
release whose collection did not change writes the head anew, naming itself, and copies the body,
plain and compressed, from the release before (``restamp``).
"""

from __future__ import annotations

import datetime as dt
import shutil

import orjson

from public import documents
from publish.catalogue import FileWriter
from publish.file_keys import FileMaker
from release.codecs import COPY_BYTES, ENCODINGS, compress_copies, restamp_gzip, restamp_zstd
from release.snapshot import Snapshot


def write_enveloped(maker: FileMaker, path: str, key: str, body_follows: bytes, write: FileWriter) -> None:
    """Write a document that names its release only in its head, and its copies with that head
    compressed apart; record where each one's body begins, for ``restamp``."""
    target = maker.folder / path
    target.parent.mkdir(parents=True, exist_ok=True)
    write(target)
    with target.open("rb") as written:
        start = written.read(64 * 1024)
    head_length = start.index(body_follows) + len(body_follows)
    body_at = {path: head_length, **compress_copies(maker.folder, path, head_length)}
    maker.record(key, body_at, {copy: {"body_at": at} for copy, at in body_at.items()})


def restamp(maker: FileMaker, snapshot: Snapshot, path: str, key: str) -> bool:
    """Make the document ``path`` and its copies from the previous release's, made from the same
    ``key``: its head naming this release instead of that one, then that document's body,
    copied, plain and compressed. False (nothing written) when the previous release holds no
    such document, or its head does not name that release as expected."""
    previous = maker.previous
    files = {file.path: file for file in maker.previous_files(key)}
    if previous is None or path not in files or not all("body_at" in f.made_from for f in files.values()):
        return False
    source = previous.path_of(files[path])
    with source.open("rb") as old:
        old_head = old.read(files[path].made_from["body_at"])
    published_then = dt.datetime.fromisoformat(previous.manifest.published_at)
    head = restamped(
        old_head,
        {
            b'"generated_at":': (documents.iso_ms(published_then), documents.iso_ms(snapshot.published_at)),
            b'"dataset_version":': (previous.manifest.version, snapshot.version),
        },
    )
    if head is None:
        return False
    target = maker.folder / path
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("wb") as out, source.open("rb") as old:
        out.write(head)
        old.seek(len(old_head))
        shutil.copyfileobj(old, out, COPY_BYTES)
    body_at = {path: len(head)}
    for copy, file in files.items():
        if copy != path:
            put_head = restamp_gzip if copy.endswith(ENCODINGS["gzip"]) else restamp_zstd
            body_at[copy] = put_head(
                previous.path_of(file), file.made_from["body_at"], head, target, maker.folder / copy
            )
    maker.record(key, body_at, {copy: {"body_at": at} for copy, at in body_at.items()})
    return True


def restamped(head: bytes, fields: dict[bytes, tuple[str, str]]) -> bytes | None:
    """``head`` with each named field's old value replaced by its new one; None unless each field
    appears there exactly once, with its old value."""
    for name, (old, new) in fields.items():
        before, after = name + orjson.dumps(old), name + orjson.dumps(new)
        if head.count(name) != 1 or head.count(before) != 1:
            return None
        head = head.replace(before, after)
    return head
