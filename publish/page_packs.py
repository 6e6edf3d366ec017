"""The page.json records of a release: packed end to end, plain and gzipped a page at a time, with an index.

The packs hold what follows the envelope every page.json document begins with (which names the
release: ``release.folder.PAGE_ENVELOPE``), so they are linked whole while no table changed. When
some table changed, a page whose row hashes as before is copied from the packs before, so that a
changed page costs its own rendering (``write_packs``).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from pathlib import Path
from typing import Any

import orjson

from public import documents
from publish.file_keys import FileMaker, key_of, producer_digest
from release.codecs import GZIP_HEADER, GZIP_TRAILER_BYTES, gzip_member
from release.folder import PAGE_ENVELOPE, PAGE_INDEX, PAGE_PACK, PAGE_PACK_GZIP, PAGE_PATHS, PageEntry, PageIndex
from release.local_store import rows_of
from release.manifest import PublishedRelease, ReleaseError
from release.snapshot import Snapshot


def write_page_pack(maker: FileMaker, snapshot: Snapshot, every_table: list[tuple[str, str]]) -> None:
    """The envelope every page.json document of the release begins with, and each page's part
    after it, end to end, plain and gzipped alone, with their index (``release.folder``): the
    packs and index linked while no table changed, the envelope written every time."""
    folder = maker.folder
    envelope = orjson.dumps(documents.envelope(snapshot, documents.USAGE["page"]))[:-1] + b',"page":'
    (folder / PAGE_ENVELOPE).parent.mkdir(parents=True, exist_ok=True)
    (folder / PAGE_ENVELOPE).write_bytes(envelope)
    maker.make(key_of("pages", every_table), lambda: write_packs(folder, snapshot, maker.previous))


# Each page's path and the 64-bit hash of its row, in pack order (``TABLE_ORDER["pages"]``).
PAGE_SOURCES_SQL = "SELECT path, hash(row) FROM pages AS row ORDER BY path"
CHANGED_PAGES_SQL = "SELECT * FROM pages WHERE path IN (SELECT unnest($paths)) ORDER BY path"


def write_packs(folder: Path, snapshot: Snapshot, previous: PublishedRelease | None) -> list[str]:
    """Each page's part after the envelope (its record, then the envelope's closing brace), end
    to end, plain and as a gzip member each, and their index; the paths written. A page whose
    row hashes as it did in ``previous`` (under the same code) is copied from its packs, so
    that a changed page costs its own rendering, not every page's."""
    under_this_code = int(producer_digest()[:16], 16)  # a page's source counts only under the same code
    found = snapshot.connection.execute(PAGE_SOURCES_SQL).fetchall()
    sources = [(path, row_hash ^ under_this_code) for path, row_hash in found]
    before = previous_pages(previous)
    changed = [path for path, source in sources if path not in before or int(before[path]["source"]) != source]
    if len(changed) > len(sources) // 2:  # most pages: every row as it comes
        wanted = set(changed)
        fresh = (row for row in snapshot.stream("pages") if row["path"] in wanted)
    else:  # a few: only theirs
        fresh = iter(rows_of(snapshot.connection, CHANGED_PAGES_SQL, {"paths": changed}) if changed else ())
    pages: list[tuple[str, PageEntry]] = []
    member_overhead = len(GZIP_HEADER) + GZIP_TRAILER_BYTES
    with contextlib.ExitStack() as stack:
        pack = stack.enter_context((folder / PAGE_PACK).open("wb"))
        gzip_pack = stack.enter_context((folder / PAGE_PACK_GZIP).open("wb"))
        if before:
            old_pack = stack.enter_context((previous.folder / PAGE_PACK).open("rb")).fileno()
            old_gzip_pack = stack.enter_context((previous.folder / PAGE_PACK_GZIP).open("rb")).fileno()
        for path, source in sources:
            old = before.get(path)
            if old is not None and int(old["source"]) == source:
                part = os.pread(old_pack, int(old["part_length"]), int(old["part_offset"]))
                member_at = int(old["deflate_offset"]) - len(GZIP_HEADER)
                member = os.pread(old_gzip_pack, int(old["deflate_length"]) + member_overhead, member_at)
                digest = old["part_sha256"].tobytes()
            else:
                row = next(fresh)
                if row["path"] != path:  # both are in path order, from one read-only snapshot
                    raise RuntimeError(f"page {path} was not read in order (read {row['path']})")
                part = documents.encode(documents.record(row)) + b"}"
                member = gzip_member(part)
                digest = hashlib.sha256(part).digest()
            deflate_at = gzip_pack.tell() + len(GZIP_HEADER)
            pages.append((path, (pack.tell(), len(part), deflate_at, len(member) - member_overhead, digest, source)))
            pack.write(part)
            gzip_pack.write(member)
    PageIndex.write(folder, pages)
    return [PAGE_PACK, PAGE_PACK_GZIP, PAGE_INDEX, PAGE_PATHS]


def previous_pages(previous: PublishedRelease | None) -> dict[str, Any]:
    """The rows of ``previous``'s page index by path: empty without a release before, or one
    whose packs are in another layout."""
    if previous is None or not all((previous.folder / path).is_file() for path in (PAGE_PACK, PAGE_PACK_GZIP)):
        return {}
    try:
        return PageIndex.read(previous.folder).by_path()
    except (OSError, ValueError, ReleaseError):
        return {}
