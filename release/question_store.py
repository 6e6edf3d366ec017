"""The questions the replicas were asked, carried to the build through the object store.

A replica has no disk the build reads: it writes its questions to day files under its own home
(``serve.operations.question_log``), and uploads them under a folder of its own in the store it
serves from::

    s3://bucket/prefix/questions/<replica>/<YYYY-MM-DD>-<pid>.jsonl

``<replica>`` is ``REUSE_DATA_REPLICA_NAME`` (the host name by default): a file's name keeps the
worker processes of one replica apart, not two hosts whose processes share a pid. The replica
uploads every ``REUSE_DATA_QUESTION_UPLOAD_SECONDS`` and once more when it stops, so one killed
outright loses at most the questions of the last interval. A file goes up whole, to its last
complete line, when its size differs from its object's: today's file grows and replaces its
object, a closed day is sent once, an unchanged one costs nothing but the listing.

A build that publishes to the store mirrors ``questions/`` into ``<home>/questions/from-store/``
before it reads the questions: an object new or changed since the last build (size, time) is
downloaded over the older copy, never beside it, and a copy whose object is gone is deleted.
Day files older than the retention are deleted from the store as well; a replica deletes its own
and never uploads them again.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path

import obstore

from foundations.settings import REPLICA_NAME
from release.object_store import ReleaseStore
from warehouse.asked_questions import RECORD_SUFFIX, day_of

QUESTIONS = "questions"  # the store's folder of questions, beside releases/ and current
MIRROR_FOLDER = "from-store"  # under the build's questions folder: the store's copy, kept by the build alone
log = logging.getLogger("reuse_data.questions")


@dataclass(frozen=True)
class StoredDayFile:
    """One replica's day file in the store."""

    replica: str
    name: str
    day: dt.date
    size: int
    modified_ns: int  # when it was last uploaded, by the store's clock

    @property
    def key(self) -> str:
        return f"{QUESTIONS}/{self.replica}/{self.name}"


@dataclass(frozen=True)
class Mirrored:
    """What a build's mirror did: files downloaded (new or grown), deleted as expired from the
    store, and kept in the mirror in all."""

    downloaded: int
    expired: int
    files: int


class QuestionStore:
    """The ``questions/`` folder of one store: replicas upload to it, the build mirrors it."""

    def __init__(self, store: ReleaseStore) -> None:
        self.releases = store

    def stored(self, replica: str | None = None) -> list[StoredDayFile]:
        """The day files in the store (of ``replica`` only, when given); other objects are ignored."""
        prefix = f"{QUESTIONS}/{replica}/" if replica else f"{QUESTIONS}/"
        try:
            entries = [entry for batch in obstore.list(self.releases.store, prefix) for entry in batch]
        except Exception as error:
            raise self.releases.failed(f"list {prefix}", error) from error
        found = []
        for entry in entries:
            parts = entry["path"].removeprefix(f"{self.releases.prefix}/").split("/")
            if len(parts) != 3 or parts[0] != QUESTIONS or not REPLICA_NAME.match(parts[1]):
                continue
            day = day_of(Path(parts[2]))
            if day is None:
                continue
            modified = entry["last_modified"]
            modified_ns = int(modified.timestamp()) * 1_000_000_000 + modified.microsecond * 1000
            found.append(StoredDayFile(parts[1], parts[2], day, entry["size"], modified_ns))
        return found

    # --- a replica: upload ---------------------------------------------------------------------

    def upload(self, folder: Path, replica: str, retention_days: int, today: dt.date) -> int:
        """Upload the day files directly under ``folder`` whose size differs from their object's
        under ``questions/<replica>/``, each up to its last whole line; delete the ones older than
        the retention instead. The number uploaded."""
        oldest_kept = today - dt.timedelta(days=retention_days)
        stored = {file.name: file.size for file in self.stored(replica)}
        sent = 0
        for path in sorted(folder.glob(f"*{RECORD_SUFFIX}")) if folder.is_dir() else ():
            day = day_of(path)
            if day is None:
                continue
            if day < oldest_kept:
                path.unlink(missing_ok=True)
                continue
            try:
                if path.stat().st_size == stored.get(path.name):
                    continue
                data = path.read_bytes()
            except FileNotFoundError:
                continue
            data = data[: data.rfind(b"\n") + 1]  # a line being appended goes with the next upload
            if not data or len(data) == stored.get(path.name):
                continue
            key = f"{QUESTIONS}/{replica}/{path.name}"
            try:
                obstore.put(self.releases.store, key, data)
            except Exception as error:
                raise self.releases.failed(f"upload {key}", error) from error
            sent += 1
        return sent

    # --- the build: mirror ---------------------------------------------------------------------

    def mirror(self, folder: Path, retention_days: int, today: dt.date) -> Mirrored:
        """Make ``folder`` (``<replica>/<day file>``) hold what the store holds: download what is
        new or changed, delete what the store no longer has; delete from the store (and so from
        the mirror) the day files older than the retention."""
        oldest_kept = today - dt.timedelta(days=retention_days)
        kept: set[Path] = set()
        downloaded = expired = 0
        for stored in self.stored():
            if stored.day < oldest_kept:
                try:
                    obstore.delete(self.releases.store, stored.key)
                except Exception as error:
                    raise self.releases.failed(f"delete {stored.key}", error) from error
                expired += 1
                continue
            local = folder / stored.replica / stored.name
            kept.add(local)
            try:
                status = local.stat()
                if (status.st_size, status.st_mtime_ns) == (stored.size, stored.modified_ns):
                    continue
            except FileNotFoundError:
                pass
            self._download(stored, local)
            downloaded += 1
        for path in folder.rglob("*") if folder.is_dir() else ():
            if path.is_file() and path not in kept:
                path.unlink(missing_ok=True)
        for replica in folder.iterdir() if folder.is_dir() else ():
            if replica.is_dir() and not any(replica.iterdir()):
                replica.rmdir()
        return Mirrored(downloaded, expired, len(kept))

    def _download(self, stored: StoredDayFile, local: Path) -> None:
        """``stored`` into ``local``, replacing it whole (written beside it, then renamed), with the
        object's time as its own: what the next mirror compares."""
        local.parent.mkdir(parents=True, exist_ok=True)
        partial = local.with_name(f".{local.name}.part")
        try:
            data = bytes(obstore.get(self.releases.store, stored.key).bytes())
        except FileNotFoundError:  # deleted since the listing (by a build before this one)
            return
        except Exception as error:
            raise self.releases.failed(f"download {stored.key}", error) from error
        partial.write_bytes(data)
        # The listing's time: an object replaced since then differs from the listing in size too,
        # and the next build takes it again.
        os.utime(partial, ns=(stored.modified_ns, stored.modified_ns))
        os.replace(partial, local)


class QuestionUploader:
    """A replica's uploads of its questions: every ``interval`` seconds while it serves (0: never),
    and once when it stops. A store that fails is logged and tried again at the next interval;
    serving never waits for it."""

    def __init__(self, store: ReleaseStore, folder: Path, replica: str, retention_days: int, interval: float) -> None:
        self.questions = QuestionStore(store)
        self.folder = folder
        self.replica = replica
        self.retention_days = retention_days
        self.interval = interval
        self._one_at_a_time = threading.Lock()  # the last upload never races one still sending older bytes

    def upload(self) -> int:
        """One upload of what changed; the number of files sent (0 when the store failed)."""
        with self._one_at_a_time:
            try:
                return self.questions.upload(
                    self.folder, self.replica, self.retention_days, dt.datetime.now(dt.UTC).date()
                )
            except Exception as error:
                log.warning("could not upload the questions asked here (%s); the next upload sends them", error)
                return 0

    async def keep_uploading(self) -> None:
        """Upload every ``interval`` seconds, for ever (cancelled when the server stops)."""
        if self.interval <= 0:
            return
        while True:
            await asyncio.sleep(self.interval)
            await asyncio.to_thread(self.upload)
