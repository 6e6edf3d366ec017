"""The questions people asked the ask engine: the records a server writes, and how a build reads them.

A server appends one JSON line per answer to a file of its own per day
(``<home>/questions/<YYYY-MM-DD>-<pid>.jsonl``, ``serve.operations.question_log``): the fields are
``RECORD_FIELDS``, and none of them says who asked. A deployment's replicas upload theirs to the
object store, and a build mirrors them into a folder under its questions folder
(``release.question_store``), so a build reads it recursively, each file once. Files
whose day is older than the retention are deleted whole before the rest is loaded into
``raw.asked_questions``, each question beside its normalised text (``normalise_question``).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
import unicodedata
from pathlib import Path

import duckdb

from warehouse.catalog import RAW_SCHEMA

ASKED_QUESTIONS_TABLE = "asked_questions"  # raw.asked_questions, and the mart of the same name
# The fields of a record, each line one JSON object with them all, and their DuckDB types.
RECORD_FIELDS = {
    "time": "VARCHAR",  # when it was answered, UTC, ISO 8601 to the millisecond
    "question": "VARCHAR",  # as asked
    "language": "VARCHAR",  # the language of the answer
    "answered": "BOOLEAN",  # whether an entry answered it (``serve.operations.question_log.answered``)
    # The entry that came closest, answered or not (``serve.operations.question_log.Nearest``): the
    # id of the most probable entry (cited first when it answered; day files written before
    # 2026-11-27 hold its URL), its probability under the release's decision, and why it did not
    # answer (``ask.decision.verdict.Refusal``), null when it did.
    "entry": "VARCHAR",
    "probability": "DOUBLE",
    "refusal": "VARCHAR",
    "release": "VARCHAR",  # the release that answered
}
RECORD_SUFFIX = ".jsonl"
DAY_FILE = re.compile(r"^(\d{4}-\d{2}-\d{2})-.+\.jsonl$")


def record_file_name(day: dt.date, process: int) -> str:
    """The file one server process writes a day's records to: no two processes share one, and a
    day's files are dropped whole when the day leaves the retention."""
    return f"{day.isoformat()}-{process}{RECORD_SUFFIX}"


def day_of(path: Path) -> dt.date | None:
    """The day a record file holds, from its name; None for a file that is not one."""
    matched = DAY_FILE.match(path.name)
    if matched is None:
        return None
    try:
        return dt.date.fromisoformat(matched.group(1))
    except ValueError:
        return None


def normalise_question(text: str) -> str:
    """The text by which questions count as the same: Unicode compatibility forms folded (NFKC:
    full-width ？ is ?), case folded, runs of white space made one space, and punctuation and
    spaces trimmed from both ends (a question mark or a trailing full stop change nothing)."""
    folded = " ".join(unicodedata.normalize("NFKC", text).casefold().split())
    start, end = 0, len(folded)
    while start < end and _trimmed(folded[start]):
        start += 1
    while end > start and _trimmed(folded[end - 1]):
        end -= 1
    return folded[start:end]


def _trimmed(character: str) -> bool:
    return character.isspace() or unicodedata.category(character).startswith("P")


def drop_expired(folder: Path, retention_days: int, today: dt.date) -> list[Path]:
    """Delete the record files (under ``folder``, at any depth) whose day is more than
    ``retention_days`` before ``today``; return the ones kept, oldest day first."""
    oldest_kept = today - dt.timedelta(days=retention_days)
    kept: list[tuple[dt.date, Path]] = []
    for path in folder.rglob(f"*{RECORD_SUFFIX}") if folder.is_dir() else ():
        day = day_of(path)
        if day is None:
            continue
        if day < oldest_kept:
            path.unlink(missing_ok=True)
        else:
            kept.append((day, path))
    return [path for _, path in sorted(kept)]


def distinct_files(files: list[Path], mirror: Path) -> list[Path]:
    """``files`` with each process's day file once. The files under ``mirror`` (the object store's
    copy, ``release.question_store``) are one per object; a file outside it with the same name (day
    and pid) where one is the beginning of the other is the same file reached twice, a copy taken
    at another time (a server on the build host that is also a replica, or a folder copied by hand),
    and only the longer is read. Processes of two hosts that share a pid differ from their first
    line, which holds the time to the millisecond."""
    mirrored: dict[str, list[Path]] = {}
    for path in files:
        if mirror in path.parents:
            mirrored.setdefault(path.name, []).append(path)
    copies: set[Path] = set()
    for path in files:
        if mirror in path.parents or path.name not in mirrored:
            continue
        ours = path.read_bytes()
        for other in mirrored[path.name]:
            theirs = other.read_bytes()
            if theirs.startswith(ours):
                copies.add(path)
            elif ours.startswith(theirs):
                copies.add(other)
    return [path for path in files if path not in copies]


RAW_COLUMNS = (
    "asked_at TIMESTAMP, question VARCHAR, question_normalised VARCHAR, language VARCHAR, answered BOOLEAN, "
    "entry VARCHAR, probability DOUBLE, refusal VARCHAR, release VARCHAR, _source_file VARCHAR, _ingested_at TIMESTAMP"
)


def load_asked_questions(connection: duckdb.DuckDBPyConnection, folder: Path, files: list[Path]) -> int:
    """Replace ``raw.asked_questions`` with the records of ``files`` (under ``folder``); return its
    row count. A line that is not a whole record (a server killed while writing) is skipped."""
    connection.execute(f"CREATE SCHEMA IF NOT EXISTS {RAW_SCHEMA}")
    table = f"{RAW_SCHEMA}.{ASKED_QUESTIONS_TABLE}"
    connection.execute(f"CREATE OR REPLACE TABLE {table} ({RAW_COLUMNS})")
    if not files:
        return 0
    connection.create_function("normalise_question", normalise_question, ["VARCHAR"], "VARCHAR")
    try:
        columns = ", ".join(f"'{name}': '{kind}'" for name, kind in RECORD_FIELDS.items())
        connection.execute(
            f"INSERT INTO {table} "
            "SELECT rtrim(time, 'Z')::TIMESTAMP, question, normalise_question(question), language, answered, "
            "entry, probability, refusal, release, substr(filename, length($folder) + 2), "
            "current_timestamp::TIMESTAMP "
            f"FROM read_json($files, format = 'newline_delimited', columns = {{{columns}}}, "
            "ignore_errors = true, filename = true) "
            "WHERE time IS NOT NULL AND question IS NOT NULL AND answered IS NOT NULL",
            {"files": [str(path) for path in files], "folder": str(folder)},
        )
    finally:
        connection.remove_function("normalise_question")
    return connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


# The unanswered questions as an editor reads them: (column of ``most_asked_unanswered``, heading).
REPORT_COLUMNS = (
    ("question", "question"),
    ("language", "language"),
    ("times_asked", "times asked"),
    ("last_seen", "last seen (UTC)"),
    ("nearest_entry", "closest entry"),
    ("nearest_entry_question", "its question"),
    ("nearest_probability", "its probability"),
    ("last_refusal", "why not answered"),
)


def most_asked_unanswered(
    connection: duckdb.DuckDBPyConnection, marts_schema: str, days: int, limit: int, now: dt.datetime
) -> list[dict]:
    """The questions asked in the last ``days`` whose latest asking got no answer, most asked first
    (from the ``asked_questions`` mart): what an editor reads to decide what to write next."""
    since = (now - dt.timedelta(days=days)).replace(tzinfo=None)
    cursor = connection.execute(
        f"SELECT {', '.join(column for column, _ in REPORT_COLUMNS)} "
        f"FROM {marts_schema}.{ASKED_QUESTIONS_TABLE} WHERE NOT last_answered AND last_seen >= ? "
        "ORDER BY times_asked DESC, last_seen DESC, language, question LIMIT ?",
        [since, limit],
    )
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, dt.datetime):
        return value.strftime("%Y-%m-%d %H:%M")
    return str(value)


def report_csv(rows: list[dict]) -> bytes:
    """The list as CSV (UTF-8, a header row), for a spreadsheet."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([heading for _, heading in REPORT_COLUMNS])
    writer.writerows([_cell(row[column]) for column, _ in REPORT_COLUMNS] for row in rows)
    return out.getvalue().encode("utf-8")


def report_markdown(rows: list[dict], days: int) -> str:
    """The list as a Markdown table, what the Dagster UI shows on the report asset."""
    if not rows:
        return f"No unanswered question was asked in the last {days} days."
    lines = [
        "| " + " | ".join(heading for _, heading in REPORT_COLUMNS) + " |",
        "|" + "---|" * len(REPORT_COLUMNS),
    ]
    for row in rows:
        cells = (" ".join(_cell(row[column]).split()).replace("|", "\\|") for column, _ in REPORT_COLUMNS)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
