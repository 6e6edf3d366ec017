"""The files of a release, written once at publish from its snapshot, so the server only sends them.

- Every fixed document of the API at its URL path (``publish.catalogue``).
- Whole-table distributions under ``api/public/downloads/`` (``publish.distributions``).
- The page.json documents' records packed end to end with an index (``publish.page_packs``).
- What crawlers and answer engines read first: ``robots.txt``, ``llms.txt``, the sitemap index
  ``sitemap.xml`` and its sitemaps under ``sitemaps/`` (``publish.crawler_files``).
- The distributions described for open-data tools from the data dictionary
  (``public.table_descriptions``): dataset.json is also Croissant, and ``datapackage.json`` a
  Frictionless data package.

Every text file gets its compressed copies (``release.codecs``). The base URL is the one the
marts were built with, read from the snapshot: the whole release speaks of one address. A
publish writes only what changed since the release being served (``publish.file_keys``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from public import documents, table_descriptions
from publish import crawler_files
from publish.catalogue import CRAWLER_DOCUMENTS, DOCUMENTS, Document
from publish.distributions import as_listed, describe_file, write_distributions
from publish.file_keys import FileMaker, key_of
from publish.page_packs import write_page_pack
from publish.parted_files import write_parted
from publish.restamp import restamp, write_enveloped
from release.codecs import compress_copies, write_file
from release.folder import DATA_PACKAGE, DATASET
from release.local_store import SNAPSHOT_FILE, open_snapshot, table_keys
from release.manifest import PublishedRelease
from release.snapshot import Snapshot, read_snapshot
from warehouse.reference_data import SECTIONS


def write_release_files(
    folder: Path, snapshot_file: Path, previous: PublishedRelease | None = None, memory_limit: str | None = None
) -> dict[str, dict[str, Any]]:
    """Write every served file of the release ``folder`` from its finished ``snapshot_file``,
    taking from ``previous`` what it made from the same things; what each file was made from.
    DuckDB spills past ``memory_limit`` (sorting ten million readings took 7 GB without one)."""
    snapshot = read_snapshot(snapshot_file, memory_limit)
    maker = FileMaker(folder, previous)
    try:
        keys = table_keys(snapshot.connection)
        every_table = sorted(keys.items())
        downloads, tables = write_distributions(maker, snapshot, keys, previous_table_keys(previous))
        for path, document in DOCUMENTS.items():
            write_document(maker, snapshot, path, document, every_table)
        distributions = [describe_file(maker, entry) for entry in downloads]
        record_sets = [
            table_descriptions.croissant_record_set(tables[entry["table"]], entry["@id"])
            for entry in distributions
            if entry.get("table") and entry["@id"].endswith(".parquet")
        ]
        dataset = documents.dataset(snapshot, [as_listed(entry) for entry in distributions], record_sets)
        write_file(folder, DATASET, lambda target: target.write_bytes(documents.encode(dataset)))
        package = documents.data_package(snapshot, tables, distributions, DATA_PACKAGE)
        write_file(folder, DATA_PACKAGE, lambda target: target.write_bytes(documents.encode(package)))
        write_page_pack(maker, snapshot, every_table)
        for path, document in CRAWLER_DOCUMENTS.items():
            write_document(maker, snapshot, path, document, every_table)
        maker.make(key_of("sitemaps", every_table), lambda: write_sitemaps(folder, snapshot))
    finally:
        snapshot.connection.close()
    return maker.made_from


def previous_table_keys(previous: PublishedRelease | None) -> dict[str, str]:
    """The keys of the tables of ``previous``'s snapshot (none without one)."""
    snapshot_file = previous.folder / SNAPSHOT_FILE if previous is not None else None
    if snapshot_file is None or not snapshot_file.is_file():
        return {}
    with open_snapshot(snapshot_file) as connection:
        return table_keys(connection)


def write_document(
    maker: FileMaker, snapshot: Snapshot, path: str, document: Document, every_table: list[tuple[str, str]]
) -> None:
    """One fixed document and its copies: linked, restamped or written (``Document``)."""
    made_of = every_table if document.tables is None else [item for item in every_table if item[0] in document.tables]
    key = key_of("document", path, made_of)

    def write() -> list[str]:
        return write_file(maker.folder, path, lambda target: document.write(target, snapshot))

    if document.parted is not None:
        layout = document.parted

        def write_parts() -> list[str]:
            return write_parted(maker, snapshot, path, layout, key)

        if document.names_release:
            write_parts()
        else:
            maker.make(key, write_parts)
    elif document.body_follows is not None:
        if not restamp(maker, snapshot, path, key):
            write_enveloped(maker, path, key, document.body_follows, lambda target: document.write(target, snapshot))
    elif document.names_release:
        write()
    else:
        maker.make(key, write)


def write_sitemaps(folder: Path, snapshot: Snapshot) -> list[str]:
    """The sitemaps and their index, with their compressed copies: the paths written."""
    written = []
    for path in crawler_files.write_sitemaps(folder, snapshot, SECTIONS):
        written += [path, *compress_copies(folder, path)]
    return written
