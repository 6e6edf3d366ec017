"""The sha256 of input files, remembered by their stat so that an unchanged file is not read again.

At ten million readings the bench folder holds 15,000 sheets (800 MB): hashing them all costs
about 4 s of every build, statting them 0.1 s. As git's index does, a digest is reused while
the file's size, modification and change times (in nanoseconds) and inode are what they were
when it was hashed. A file modified less than ``RACY_SECONDS`` before it was hashed is not
remembered (a second write within the same clock tick would leave its stat unchanged), so it
is hashed again next time. A missing or unreadable cache only means hashing everything.

A folder checked against the files its manifest lists (a release, a backup) is hashed the same
way, without the cache (``listed_file_faults``).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Protocol

from foundations.content_keys import sha256_of
from foundations.durable_files import replace_durably

RACY_SECONDS = 2.0


def _stat_key(stat: os.stat_result) -> list[int]:
    return [stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino]


def _load(cache: Path) -> dict[str, dict]:
    try:
        entries = json.loads(cache.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return entries if isinstance(entries, dict) else {}


def _save(cache: Path, entries: dict[str, dict]) -> None:
    cache.parent.mkdir(parents=True, exist_ok=True)
    # One staging name: builds never run two at a time (DuckDB takes one writer), and a build
    # killed mid-write leaves a file the next one overwrites.
    content = json.dumps(entries, separators=(",", ":")).encode("utf-8")
    replace_durably(cache, content, cache.with_name(f".{cache.name}.staging"))


def file_digests(paths: Sequence[Path], cache: Path | None = None) -> list[str]:
    """The sha256 of each file, hashing (in parallel) only those whose stat changed since
    ``cache`` last saw them; ``cache`` then holds exactly these files."""
    known = _load(cache) if cache else {}
    stats = [path.stat() for path in paths]
    digests: list[str | None] = []
    for path, stat in zip(paths, stats, strict=True):
        entry = known.get(str(path))
        same = isinstance(entry, dict) and entry.get("stat") == _stat_key(stat)
        digests.append(entry.get("sha256") if same else None)
    to_hash = [path for path, digest in zip(paths, digests, strict=True) if digest is None]
    with ThreadPoolExecutor(max_workers=os.cpu_count()) as pool:
        hashed = dict(zip(to_hash, pool.map(sha256_of, to_hash), strict=True))
    digests = [digest or hashed[path] for path, digest in zip(paths, digests, strict=True)]
    if cache:
        settled_before = time.time_ns() - int(RACY_SECONDS * 1e9)
        _save(
            cache,
            {
                str(path): {"stat": _stat_key(stat), "sha256": digest}
                for path, stat, digest in zip(paths, stats, digests, strict=True)
                if stat.st_mtime_ns < settled_before
            },
        )
    return digests


class ListedFile(Protocol):
    """A file as a manifest lists it: its path inside a folder, its size and its sha256 (read-only,
    as the manifests' frozen records hold them)."""

    @property
    def path(self) -> str: ...

    @property
    def size(self) -> int: ...

    @property
    def sha256(self) -> str: ...


def listed_file_faults(folder: Path, files: Iterable[ListedFile]) -> list[str]:
    """What is wrong with ``folder`` against the ``files`` its manifest lists: each one missing,
    of another size, or (when every size is right) of another sha256. Sizes first, so that a
    missing or truncated file is found without reading any; then every file's sha256 on as many
    threads as there are cores, the largest first, so that the threads finish together, and with
    no cache: a manifest vouches for content, never for a stat."""
    faults, to_hash = [], []
    for file in files:
        try:
            size = (folder / file.path).stat().st_size
        except FileNotFoundError:
            faults.append(f"{file.path} is missing")
            continue
        if size != file.size:
            faults.append(f"{file.path} has {size} bytes, the manifest says {file.size}")
        else:
            to_hash.append(file)
    if faults:
        return faults
    to_hash.sort(key=lambda file: -file.size)
    digests = file_digests([folder / file.path for file in to_hash])
    return [
        f"{file.path} differs from its sha256 in the manifest"
        for file, digest in zip(to_hash, digests, strict=True)
        if digest != file.sha256
    ]
