"""A release's manifest: every file of the release with its size and sha256, its version and base URL.

Publish writes the manifest last, after every other file of the release folder is complete;
a server (or a replica downloading the release) checks every file against it before serving
any, so a release with a missing, truncated or altered file is refused as a whole.

Releases share what did not change: a file may be a hard link to the same file of the release
before (``PublishedRelease``). Release files are read-only and never written in place, so a
file that shares its inode with a file of that release has its content, and its sha256 is
taken from that release's manifest rather than read again. Each file may also record what it
was made from (``made_from``, written by ``publish.release_files``), which the next publish
compares with what it would make the file from.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import orjson

from foundations.file_digests import file_digests, listed_file_faults

MANIFEST_FILE = "manifest.json"
MANIFEST_FORMAT = 1


class ReleaseError(RuntimeError):
    """A release folder that cannot be served as it is, and why."""


@dataclass(frozen=True)
class ReleaseFile:
    """One file of a release: its path inside the release folder, size and sha256."""

    path: str
    size: int
    sha256: str
    # What the publish that wrote it made it from (opaque here: ``publish.release_files`` writes and
    # reads it); None when it recorded nothing.
    made_from: Mapping[str, Any] | None = None

    @property
    def etag(self) -> str:
        """A strong HTTP validator: the file's content, so any two releases agree on it."""
        return f'"{self.sha256[:32]}"'


@dataclass(frozen=True)
class Manifest:
    version: str
    base_url: str
    published_at: str
    files: dict[str, ReleaseFile]

    def to_json(self) -> bytes:
        return orjson.dumps(
            {
                "format": MANIFEST_FORMAT,
                "version": self.version,
                "base_url": self.base_url,
                "published_at": self.published_at,
                "files": [
                    {
                        "path": f.path,
                        "size": f.size,
                        "sha256": f.sha256,
                        "etag": f.etag,
                        **({"made_from": f.made_from} if f.made_from is not None else {}),
                    }
                    for f in sorted(self.files.values(), key=lambda f: f.path)
                ],
            },
            option=orjson.OPT_INDENT_2,
        )

    @classmethod
    def from_json(cls, text: bytes) -> Manifest:
        data = orjson.loads(text)
        if data.get("format") != MANIFEST_FORMAT:
            raise ReleaseError(f"manifest format {data.get('format')!r} is not {MANIFEST_FORMAT}")
        files = {
            f["path"]: ReleaseFile(f["path"], int(f["size"]), f["sha256"], f.get("made_from")) for f in data["files"]
        }
        return cls(data["version"], data["base_url"], data["published_at"], files)


@dataclass(frozen=True)
class PublishedRelease:
    """A finished release folder and its manifest: what the next publish takes unchanged files from."""

    folder: Path
    manifest: Manifest

    @classmethod
    def read(cls, folder: Path) -> PublishedRelease:
        return cls(folder, read_manifest(folder))

    def path_of(self, file: ReleaseFile) -> Path:
        return self.folder / file.path

    @cached_property
    def by_inode(self) -> dict[tuple[int, int], ReleaseFile]:
        """Its files by (device, inode): a file linked from this release is recognised by them."""
        found = {}
        for file in self.manifest.files.values():
            try:
                stat = self.path_of(file).stat()
            except FileNotFoundError:
                continue
            if stat.st_size == file.size:
                found[(stat.st_dev, stat.st_ino)] = file
        return found

    @cached_property
    def by_content(self) -> dict[tuple[str, int], ReleaseFile]:
        """Its files by (sha256, size)."""
        return {(file.sha256, file.size): file for file in self.manifest.files.values()}


def release_files(folder: Path) -> Iterator[Path]:
    """Every file under ``folder`` but the manifest, in a stable order."""
    for path in sorted(folder.rglob("*")):
        if path.is_file() and path.name != MANIFEST_FILE:
            yield path


def describe_files(
    folder: Path,
    previous: PublishedRelease | None = None,
    made_from: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, ReleaseFile]:
    """Every file of the finished release ``folder`` with its size and sha256 (and what it was
    made from, as ``made_from`` gives it by path). A file that is a link to a file of
    ``previous`` takes that file's sha256 unread; the others are hashed on every core."""
    made_from = made_from or {}
    known, to_hash = {}, []
    for path in release_files(folder):
        stat = path.stat()
        linked = previous.by_inode.get((stat.st_dev, stat.st_ino)) if previous else None
        if linked is not None:
            known[path] = linked.sha256
        else:
            to_hash.append(path)
    known.update(zip(to_hash, file_digests(to_hash), strict=True))
    files = {}
    for path in sorted(known):
        relative = path.relative_to(folder).as_posix()
        files[relative] = ReleaseFile(relative, path.stat().st_size, known[path], made_from.get(relative))
    return files


def write_manifest(
    folder: Path, version: str, base_url: str, published_at: str, files: dict[str, ReleaseFile] | None = None
) -> Manifest:
    """List every file of the finished release ``folder`` in its manifest (written and synced
    last), as ``files`` describes them (``describe_files`` when not given)."""
    manifest = Manifest(version, base_url, published_at, describe_files(folder) if files is None else files)
    target = folder / MANIFEST_FILE
    with target.open("wb") as handle:
        handle.write(manifest.to_json())
        handle.flush()
        os.fsync(handle.fileno())
    return manifest


def read_manifest(folder: Path) -> Manifest:
    try:
        return Manifest.from_json((folder / MANIFEST_FILE).read_bytes())
    except FileNotFoundError as error:
        raise ReleaseError(f"{folder} has no {MANIFEST_FILE}: it is not a finished release") from error
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as error:
        raise ReleaseError(f"{folder / MANIFEST_FILE} cannot be read ({error})") from error


def verify(folder: Path, manifest: Manifest) -> None:
    """Raise ReleaseError naming every file of ``manifest`` that is missing from ``folder`` or differs
    (``foundations.file_digests.listed_file_faults``: sizes first, then every sha256)."""
    faults = listed_file_faults(folder, manifest.files.values())
    if faults:
        shown = "; ".join(faults[:5]) + (f"; and {len(faults) - 5} more" if len(faults) > 5 else "")
        raise ReleaseError(f"release {manifest.version} is incomplete or altered: {shown}")
