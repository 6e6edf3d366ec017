"""The tester intake's state: testers and their tokens, receipts, and the archive of sheets.

One SQLite file (``<REUSE_DATA_HOME>/intake/intake.sqlite3``) holds testers and receipts;
accepted sheets are kept byte for byte under ``intake/sheets/<sha256><suffix>``, written
once (to a temporary name, then renamed) and never changed. A file name from an upload is
only ever shown, never used as a path.

A tester's token is shown once, when the tester is added or their token rotated; only its
SHA-256 is stored. A
receipt remembers which of its states (accepted, withdrawn) the newest published snapshot
holds, so the pipeline's sensor can tell what is still to publish, and a crash between
accepting a sheet and ingesting it loses nothing: the receipt stays unpublished until a
build publishes it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import secrets
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path

from foundations.durable_files import replace_durably

TOKEN_PREFIX = "rdt_"
"""Starts every tester token: recognisable in a leaked log, and never read as a command-line option
(a bare ``token_urlsafe`` may begin with ``-``)."""
INTAKE_FOLDER = "intake"  # under the home
DATABASE_FILE = "intake.sqlite3"  # in the intake folder: testers and receipts

SCHEMA = """
CREATE TABLE IF NOT EXISTS testers (
    name TEXT PRIMARY KEY,
    token_sha256 TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    revoked_at TEXT
);
CREATE TABLE IF NOT EXISTS receipts (
    id TEXT PRIMARY KEY,
    sha256 TEXT NOT NULL UNIQUE,
    file_name TEXT NOT NULL,
    suffix TEXT NOT NULL,
    tester TEXT NOT NULL,
    received_at TEXT NOT NULL,
    rows_accepted INTEGER NOT NULL,
    slots TEXT NOT NULL,
    withdrawn_at TEXT,
    withdrawal_reason TEXT,
    published_status TEXT
);
CREATE TABLE IF NOT EXISTS receipt_builds (
    receipt_id TEXT NOT NULL REFERENCES receipts (id),
    status TEXT NOT NULL,
    run_id TEXT NOT NULL,
    requested_at TEXT NOT NULL,
    started_at TEXT,
    PRIMARY KEY (receipt_id, status)
);
"""
# A receipt's row with the newest build of its current status (accepted or withdrawn), if any.
RECEIPT_SELECT = """
SELECT r.*, b.run_id AS build_run_id, b.requested_at AS build_requested_at, b.started_at AS build_started_at
FROM receipts AS r LEFT JOIN receipt_builds AS b
  ON b.receipt_id = r.id AND b.status = CASE WHEN r.withdrawn_at IS NULL THEN 'accepted' ELSE 'withdrawn' END
"""


class IntakeError(ValueError):
    """A request the intake store cannot carry out (unknown tester, unknown receipt...)."""


@dataclass(frozen=True)
class Tester:
    name: str
    created_at: str
    revoked_at: str | None

    @property
    def active(self) -> bool:
        return self.revoked_at is None


@dataclass(frozen=True)
class Build:
    """The Dagster run that takes a receipt's current status to a release: when it was asked
    for, and when it started (None until it has)."""

    run_id: str
    requested_at: str
    started_at: str | None

    def as_json(self) -> dict[str, object]:
        return {"run_id": self.run_id, "requested_at": self.requested_at, "started_at": self.started_at}


@dataclass(frozen=True)
class Receipt:
    """An accepted sheet: what it held, who sent it, and whether it is withdrawn and published."""

    id: str
    sha256: str
    file_name: str
    suffix: str
    tester: str
    received_at: str
    rows_accepted: int
    slots: tuple[str, ...]
    withdrawn_at: str | None
    withdrawal_reason: str | None
    published_status: str | None  # the status the newest published snapshot holds, if any
    build: Build | None = None  # the run asked to publish its current status, once there is one

    @property
    def status(self) -> str:
        return "withdrawn" if self.withdrawn_at else "accepted"

    @property
    def published(self) -> bool:
        return self.published_status == self.status

    def as_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "sha256": self.sha256,
            "file_name": self.file_name,
            "tester": self.tester,
            "received_at": self.received_at,
            "rows_accepted": self.rows_accepted,
            "slots": list(self.slots),
            "status": self.status,
            "withdrawn_at": self.withdrawn_at,
            "withdrawal_reason": self.withdrawal_reason,
            "published": self.published,
            "build": self.build.as_json() if self.build else None,
        }


def iso_utc(moment: dt.datetime) -> str:
    """``moment`` as every receipt writes a time: ISO 8601 in UTC, to the second, ``Z``."""
    return moment.astimezone(dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def now_iso() -> str:
    return iso_utc(dt.datetime.now(dt.UTC))


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_token() -> str:
    """A fresh tester token: 32 random bytes, URL-safe, behind ``TOKEN_PREFIX``."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def intake_folder(home: Path) -> Path:
    """Where the intake of ``home`` keeps its state: the database and the archive of sheets."""
    return home / INTAKE_FOLDER


def receipt_id_for(sha256: str) -> str:
    """Receipts are content-addressed: the same bytes always get the same receipt."""
    return f"rcpt-{sha256[:20]}"


class IntakeStore:
    """Testers, receipts and archived sheets under ``<home>/intake``."""

    def __init__(self, home: Path):
        self.root = intake_folder(home)
        self.sheets_dir = self.root / "sheets"
        self.sheets_dir.mkdir(parents=True, exist_ok=True)
        self.database = self.root / DATABASE_FILE
        with self._connect() as connection:
            connection.executescript(SCHEMA)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        connection = sqlite3.connect(self.database, timeout=30, isolation_level=None)
        connection.row_factory = sqlite3.Row
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=FULL")
        try:
            yield connection
        finally:
            connection.close()

    # Testers

    def add_tester(self, name: str) -> str:
        """Create a tester, or give a revoked one a new token; return the token (shown once; only
        its hash is kept). The old token of a revoked tester stays refused."""
        token = new_token()
        with self._connect() as connection:
            row = connection.execute("SELECT revoked_at FROM testers WHERE name = ?", (name,)).fetchone()
            if row is not None and row["revoked_at"] is None:
                raise IntakeError(
                    f"tester {name!r} already exists; `reuse-data testers rotate` gives them a new token "
                    "(or revoke it first)"
                )
            if row is None:
                connection.execute(
                    "INSERT INTO testers (name, token_sha256, created_at) VALUES (?, ?, ?)",
                    (name, token_hash(token), now_iso()),
                )
            else:
                connection.execute(
                    "UPDATE testers SET token_sha256 = ?, revoked_at = NULL WHERE name = ?", (token_hash(token), name)
                )
        return token

    def rotate_token(self, name: str) -> str:
        """Give the active tester ``name`` a new token and return it (shown once): one UPDATE, so
        the old token stops working at the instant the new one starts. Their name, when they were
        added and their receipts stay as they were."""
        token = new_token()
        with self._connect() as connection:
            rotated = connection.execute(
                "UPDATE testers SET token_sha256 = ? WHERE name = ? AND revoked_at IS NULL", (token_hash(token), name)
            ).rowcount
            if not rotated:
                row = connection.execute("SELECT revoked_at FROM testers WHERE name = ?", (name,)).fetchone()
                if row is None:
                    raise IntakeError(f"no tester named {name!r}; `reuse-data testers list` shows them")
                raise IntakeError(
                    f"tester {name!r} is revoked; `reuse-data testers add` gives them a token again if they are back"
                )
        return token

    def back_up_database(self, target: Path) -> None:
        """Copy the database to ``target`` with SQLite's online backup: a consistent copy while the
        intake goes on writing (a plain file copy could take half of a transaction, or miss what the
        write-ahead log still holds)."""
        with self._connect() as source, closing(sqlite3.connect(target)) as copy:
            source.backup(copy)

    def revoke_tester(self, name: str) -> None:
        with self._connect() as connection:
            row = connection.execute("SELECT revoked_at FROM testers WHERE name = ?", (name,)).fetchone()
            if row is None:
                raise IntakeError(f"no tester named {name!r}; `reuse-data testers list` shows them")
            if row["revoked_at"] is None:
                connection.execute("UPDATE testers SET revoked_at = ? WHERE name = ?", (now_iso(), name))

    def testers(self) -> list[Tester]:
        with self._connect() as connection:
            rows = connection.execute("SELECT name, created_at, revoked_at FROM testers ORDER BY name").fetchall()
        return [Tester(**dict(row)) for row in rows]

    def authenticate(self, token: str) -> str | None:
        """The name of the active tester holding ``token``, or None.

        Every active tester's hash is compared, each in constant time, and none is looked up by
        the presented value, so how long the answer takes tells nothing of how close a guess was.
        """
        if not token:
            return None
        presented = token_hash(token)
        with self._connect() as connection:
            rows = connection.execute("SELECT name, token_sha256 FROM testers WHERE revoked_at IS NULL").fetchall()
        holder = None
        for row in rows:
            if hmac.compare_digest(row["token_sha256"], presented):
                holder = row["name"]
        return holder

    # Receipts

    def sheet_path(self, receipt: Receipt) -> Path:
        return self.sheets_dir / f"{receipt.sha256}{receipt.suffix}"

    def archive(self, content: bytes, sha256: str, suffix: str) -> Path:
        """Keep ``content`` as received under its hash; a second copy of the same bytes is a no-op."""
        path = self.sheets_dir / f"{sha256}{suffix}"
        if not path.exists():
            staging = self.sheets_dir / f".{sha256}.{secrets.token_hex(4)}.part"
            replace_durably(path, content, staging, mode=0o444)
        return path

    def record(
        self, *, sha256: str, file_name: str, suffix: str, tester: str, rows_accepted: int, slots: list[str]
    ) -> tuple[Receipt, bool]:
        """The receipt of a sheet already archived, and whether it is new (False: the same bytes came before)."""
        receipt_id = receipt_id_for(sha256)
        with self._connect() as connection:
            cursor = connection.execute(
                "INSERT OR IGNORE INTO receipts (id, sha256, file_name, suffix, tester, received_at, rows_accepted, "
                "slots) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (receipt_id, sha256, file_name, suffix, tester, now_iso(), rows_accepted, json.dumps(slots)),
            )
            created = cursor.rowcount == 1
        receipt = self.receipt(receipt_id)
        assert receipt is not None
        return receipt, created

    def receipt(self, receipt_id: str) -> Receipt | None:
        with self._connect() as connection:
            row = connection.execute(RECEIPT_SELECT + "WHERE r.id = ?", (receipt_id,)).fetchone()
        return _receipt(row) if row else None

    def receipt_by_sha256(self, sha256: str) -> Receipt | None:
        with self._connect() as connection:
            row = connection.execute(RECEIPT_SELECT + "WHERE r.sha256 = ?", (sha256,)).fetchone()
        return _receipt(row) if row else None

    def receipts(self, tester: str | None = None) -> list[Receipt]:
        """Receipts, newest first; only ``tester``'s when given."""
        sql = RECEIPT_SELECT + ("WHERE r.tester = ? " if tester else "") + "ORDER BY r.received_at DESC, r.id"
        with self._connect() as connection:
            rows = connection.execute(sql, (tester,) if tester else ()).fetchall()
        return [_receipt(row) for row in rows]

    def withdraw(self, receipt_id: str, reason: str) -> Receipt:
        """Mark a sheet withdrawn: its readings leave the scores at the next build; nothing is deleted."""
        if not reason.strip():
            raise IntakeError("a withdrawal needs a reason (--reason)")
        with self._connect() as connection:
            cursor = connection.execute(
                "UPDATE receipts SET withdrawn_at = ?, withdrawal_reason = ? WHERE id = ? AND withdrawn_at IS NULL",
                (now_iso(), reason.strip(), receipt_id),
            )
            if cursor.rowcount == 0 and self.receipt(receipt_id) is None:
                raise IntakeError(f"no receipt {receipt_id!r}; `reuse-data upload` prints receipt ids")
        receipt = self.receipt(receipt_id)
        assert receipt is not None
        return receipt

    def unpublished(self) -> list[Receipt]:
        """Receipts whose current status the newest published snapshot does not hold yet."""
        return [r for r in self.receipts() if not r.published]

    def record_build(self, receipts: list[Receipt], run_id: str, requested_at: str, started_at: str | None) -> None:
        """Record the Dagster run that builds each receipt's current status: asked for at
        ``requested_at``, started at ``started_at`` (None while it waits on Dagster's queue).
        The run's start is added to its request, never the other way round."""
        with self._connect() as connection:
            connection.executemany(
                "INSERT INTO receipt_builds (receipt_id, status, run_id, requested_at, started_at) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (receipt_id, status) DO UPDATE SET "
                "requested_at = CASE WHEN run_id = excluded.run_id THEN requested_at ELSE excluded.requested_at END, "
                "started_at = CASE WHEN run_id = excluded.run_id THEN coalesce(excluded.started_at, started_at) "
                "ELSE excluded.started_at END, run_id = excluded.run_id",
                [(r.id, r.status, run_id, requested_at, started_at) for r in receipts],
            )

    def mark_published(self, statuses: dict[str, str]) -> None:
        """Record the status of each receipt (id -> accepted/withdrawn) a published snapshot holds."""
        with self._connect() as connection:
            connection.executemany(
                "UPDATE receipts SET published_status = ? WHERE id = ?", [(s, i) for i, s in statuses.items()]
            )


def unpublished_state(unpublished: list[Receipt]) -> str:
    """A digest of the unpublished receipts and their statuses: what a build must publish now.
    The intake sensor tags its build with it, and the intake launches a build only when it is
    tagged with its own (so the build is of this home, as it is now)."""
    described = sorted(f"{r.id} ({r.status})" for r in unpublished)
    return hashlib.sha256("\n".join(described).encode()).hexdigest()[:16]


def _receipt(row: sqlite3.Row) -> Receipt:
    values = dict(row)
    values["slots"] = tuple(json.loads(values["slots"]))
    build = Build(**{name: values.pop(f"build_{name}") for name in ("run_id", "requested_at", "started_at")})
    return Receipt(**values, build=build if build.run_id else None)
