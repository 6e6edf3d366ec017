"""A backup of what a build host cannot make again: the intake, the questions asked, the ask models.

The warehouse and the releases are rebuilt from the inputs by `reuse-data build`; these three are
not. A backup is a folder of three parts, each where the settings put it
(``foundations.settings``), and a manifest, ``backup.json``, listing every file with its size and
sha256, written last:

- ``intake/``: the testers and receipts, copied with SQLite's online backup so that a running
  intake can go on writing, then every archived sheet (a sheet is archived before its receipt
  exists and never changes, so each receipt of the copy finds its sheet);
- ``questions/``: every day file of questions, each up to its last whole line (a server may be
  appending to today's);
- ``ask-models/``: the trainings and model files of ``REUSE_DATA_ASK_MODELS``.

The folder is filled under a hidden name beside its destination and renamed into place whole,
so a backup that exists is complete. A restore checks every file against the manifest before it
touches the home, then puts each part in place whole (filled beside it, then renamed).
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from foundations.durable_files import fsync_directory, replace_durably
from foundations.file_digests import file_digests, listed_file_faults
from foundations.settings import Settings
from intake.store import DATABASE_FILE, IntakeStore, intake_folder
from warehouse.asked_questions import RECORD_SUFFIX

BACKUP_MANIFEST = "backup.json"
BACKUP_FORMAT = 1


class BackupError(RuntimeError):
    """A backup or restore that cannot be done, and what to do about it."""


@dataclass(frozen=True)
class Part:
    """One part of a backup: its folder in the backup, where it lives, and how it is copied."""

    name: str
    source: Path
    copy: Callable[[Path], None]  # fills the given folder of the backup from the live source


def parts(settings: Settings) -> tuple[Part, ...]:
    """The parts of a backup of ``settings``' home, in the order they are copied."""
    return (
        Part("intake", intake_folder(settings.home), functools.partial(_copy_intake, settings.home)),
        Part("questions", settings.questions_dir, functools.partial(_copy_questions, settings.questions_dir)),
        Part("ask-models", settings.ask_models, functools.partial(_copy_files, settings.ask_models)),
    )


def _visible_files(folder: Path) -> Iterator[Path]:
    """The files under ``folder``, but hidden ones: a writer's staging files are hidden."""
    for path in sorted(folder.rglob("*")) if folder.is_dir() else ():
        relative = path.relative_to(folder)
        if path.is_file() and not any(part.startswith(".") for part in relative.parts):
            yield path


def _copy_files(source: Path, target: Path) -> None:
    for path in _visible_files(source):
        copied = target / path.relative_to(source)
        copied.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, copied)


def _copy_intake(home: Path, target: Path) -> None:
    """The database by SQLite's online backup (never its write-ahead log), then the archived sheets."""
    if not (intake_folder(home) / DATABASE_FILE).is_file():
        return  # no intake on this home (opening its store would make one)
    store = IntakeStore(home)
    target.mkdir(parents=True)
    store.back_up_database(target / DATABASE_FILE)
    _copy_files(store.sheets_dir, target / store.sheets_dir.relative_to(store.root))


def _copy_questions(source: Path, target: Path) -> None:
    """Every day file, up to its last whole line: the rest is a line still being appended."""
    for path in _visible_files(source):
        if path.suffix != RECORD_SUFFIX:
            continue
        data = path.read_bytes()
        copied = target / path.relative_to(source)
        copied.parent.mkdir(parents=True, exist_ok=True)
        copied.write_bytes(data[: data.rfind(b"\n") + 1])


@dataclass(frozen=True)
class BackedUpFile:
    path: str  # relative to the backup folder, under its part's folder
    size: int
    sha256: str


@dataclass(frozen=True)
class BackupManifest:
    """What a backup holds: when it was made, of which home, and every file's size and sha256."""

    made_at: str
    home: str
    sources: dict[str, str]  # each part's folder on the home it was made of
    files: tuple[BackedUpFile, ...]

    def part_files(self, part: str) -> list[BackedUpFile]:
        return [file for file in self.files if file.path.split("/", 1)[0] == part]

    def to_json(self) -> bytes:
        parts = {
            name: {
                "from": source,
                "files": len(self.part_files(name)),
                "bytes": sum(file.size for file in self.part_files(name)),
            }
            for name, source in self.sources.items()
        }
        files = [{"path": file.path, "size": file.size, "sha256": file.sha256} for file in self.files]
        document = {"format": BACKUP_FORMAT, "made_at": self.made_at, "home": self.home, "parts": parts}
        return (json.dumps({**document, "files": files}, indent=2, ensure_ascii=False) + "\n").encode()

    @classmethod
    def read(cls, folder: Path) -> BackupManifest:
        try:
            data = json.loads((folder / BACKUP_MANIFEST).read_bytes())
        except FileNotFoundError as error:
            raise BackupError(
                f"{folder} has no {BACKUP_MANIFEST}: it is not a backup `reuse-data backup` finished; name one it made"
            ) from error
        except ValueError as error:
            raise BackupError(f"{folder / BACKUP_MANIFEST} cannot be read ({error}); the backup is damaged") from error
        if data.get("format") != BACKUP_FORMAT:
            raise BackupError(
                f"{folder} is a backup of format {data.get('format')!r}, and this reuse-data reads format "
                f"{BACKUP_FORMAT}; restore it with the reuse-data that made it"
            )
        files = tuple(BackedUpFile(file["path"], int(file["size"]), file["sha256"]) for file in data["files"])
        sources = {name: part["from"] for name, part in data["parts"].items()}
        return cls(data["made_at"], data["home"], sources, files)


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _remove(path: Path) -> None:
    """Remove a folder of this module's making, if there is one."""
    if path.exists():
        shutil.rmtree(path)


def back_up(settings: Settings, destination: Path) -> BackupManifest:
    """Back the home of ``settings`` up into the new folder ``destination``."""
    if destination.exists():
        raise BackupError(f"{destination} exists already; name a new folder (a backup never overwrites one)")
    if not destination.parent.is_dir():
        raise BackupError(f"{destination.parent} is not a folder; create it, or name a backup in another one")
    staging = destination.with_name(f".{destination.name}.partial-{os.getpid()}")
    _remove(staging)
    try:
        staging.mkdir()
        for part in parts(settings):
            part.copy(staging / part.name)
        os.sync()  # every copy on disk before the manifest that vouches for it
        paths = list(_visible_files(staging))
        files = tuple(
            BackedUpFile(path.relative_to(staging).as_posix(), path.stat().st_size, digest)
            for path, digest in zip(paths, file_digests(paths), strict=True)
        )
        sources = {part.name: str(part.source) for part in parts(settings)}
        manifest = BackupManifest(_now(), str(settings.home), sources, files)
        replace_durably(staging / BACKUP_MANIFEST, manifest.to_json(), staging / f".{BACKUP_MANIFEST}.staging")
        os.rename(staging, destination)
    except BaseException:
        _remove(staging)
        raise
    fsync_directory(destination.parent)
    return manifest


def verify(folder: Path) -> BackupManifest:
    """The manifest of the backup ``folder``, after checking every file it lists (BackupError naming each
    one missing or altered)."""
    manifest = BackupManifest.read(folder)
    faults = listed_file_faults(folder, manifest.files)
    if faults:
        raise BackupError(
            f"the backup {folder} is damaged: {'; '.join(faults[:5])}; nothing was restored (restore another backup)"
        )
    return manifest


def occupied(settings: Settings, manifest: BackupManifest) -> list[str]:
    """The parts a restore of ``manifest`` would replace that already hold files on the home of ``settings``."""
    return [
        f"{part.source} ({sum(1 for _ in _visible_files(part.source))} files)"
        for part in parts(settings)
        if manifest.part_files(part.name) and any(True for _ in _visible_files(part.source))
    ]


def restore(settings: Settings, folder: Path, force: bool = False) -> BackupManifest:
    """Put the backup ``folder`` in place on the home of ``settings``: every file checked first,
    then each part the backup holds replaced whole. Parts that already hold files are replaced
    only with ``force``."""
    manifest = verify(folder)
    if not force and (held := occupied(settings, manifest)):
        raise BackupError(
            f"would replace what is there: {', '.join(held)}. Restore into a new REUSE_DATA_HOME (and "
            "REUSE_DATA_ASK_MODELS), or pass --force to replace them, with the intake and the servers stopped"
        )
    for part in parts(settings):
        if manifest.part_files(part.name):
            _replace_folder(part.source, folder / part.name)
    return manifest


def _replace_folder(target: Path, source: Path) -> None:
    """Make ``target`` a copy of ``source``: copied beside it, then renamed over it."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = target.with_name(f".{target.name}.restoring-{os.getpid()}")
    replaced = target.with_name(f".{target.name}.replaced-{os.getpid()}")
    _remove(staging)
    shutil.copytree(source, staging)
    if target.exists():
        os.rename(target, replaced)
    os.rename(staging, target)
    fsync_directory(target.parent)
    _remove(replaced)
