"""The questions asked of the ask engine, kept for the editors: one record per answer, without who asked.

Every answer counts, answered or not, the ones served from the memo too (each is a person or
an agent asking). A record holds the time, the question, the language of the answer, whether
an entry answered it (``answered``), the entry that came closest with its probability and, when
it did not answer, why (``Nearest``), and the release
(``warehouse.asked_questions.RECORD_FIELDS``); never an address, an agent or anything else from
the request. The records are gathered in memory and appended in batches
(``serve.operations.batched_lines``) to a file per day and process under ``<home>/questions/``, so the
request pays for a dictionary and a JSON encoding, not a write. ``REUSE_DATA_QUESTION_LOG=off``
turns it off. ``record_question`` is the one way in: ask.json calls it, and so can any other
place that answers a question.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ask.engine import Ranking
from serve.operations.batched_lines import ATOMIC_WRITE_BYTES, BatchedLines
from warehouse.asked_questions import record_file_name


@dataclass(frozen=True)
class Nearest:
    """The entry that came closest to answering a question, answered or not (``ask.engine.Ranking``):
    beside an unanswered question it tells an editor whether a phrasing would do (an entry just
    short of the threshold) or a page is missing."""

    entry: str | None  # its id, as an ask_phrasings.csv row names it; None for a blank question or no library
    probability: float | None  # under the release's decision, which answers at its threshold or above
    refusal: str | None  # why it did not answer (``ask.decision.verdict.Refusal``), None when it did

    @classmethod
    def of(cls, ranking: Ranking) -> Nearest:
        entry = ranking.nearest.id if ranking.nearest is not None else None
        probability = round(ranking.probability, 4) if ranking.probability is not None else None
        return cls(entry, probability, ranking.refusal)


class QuestionLog(BatchedLines):
    """Appends question records to this process's file of the day under ``folder``."""

    def __init__(self, folder: Path) -> None:
        super().__init__(-1)
        self.folder = folder
        self.day = ""

    def add_record(self, record: Mapping[str, Any]) -> None:
        line = orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE)
        if len(line) > ATOMIC_WRITE_BYTES:  # a question near the length limit, in a script of several bytes a character
            line = orjson.dumps(
                {**record, "question": record["question"][: ATOMIC_WRITE_BYTES // 8]}, option=orjson.OPT_APPEND_NEWLINE
            )
        day = record["time"][:10]
        if day != self.day:  # the first record of a day: what is gathered belongs to the day before
            self.flush()
            self.open_day(day)
        self.add(line)

    def open_day(self, day: str) -> None:
        """Append from now on to this process's file of ``day`` (created with its folder)."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            name = record_file_name(dt.date.fromisoformat(day), os.getpid())
            self.fd = os.open(self.folder / name, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o640)
        except OSError:  # a home that cannot be written loses the records, never an answer
            self.fd = -1
        self.day = day

    def flush(self) -> None:
        if self.fd < 0:
            self.pending.clear()
            self.pending_bytes = 0
            return
        super().flush()

    def close(self) -> None:
        """Write what is gathered and close the file (the server stopping)."""
        self.flush()
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def answered(answer: Mapping[str, Any]) -> bool:
    """Whether an entry answered the question: the engine returned one, which it does only when the
    most probable entry reaches the threshold of the decision fitted for the release and the
    question is not closer to a topic the library does not cover (``ask.engine.AskEngine.rank``).
    Otherwise the answer is the fallback (the guide hub) and the question counts as unanswered."""
    return bool(answer["results"])


def record_question(log: QuestionLog | None, answer: Mapping[str, Any], nearest: Nearest, release: str) -> None:
    """Keep one question and its answer (the body of ask.json but its envelope: ``language``,
    ``query``, ``results``), the entry that came closest, answered by ``release``; nothing when
    the log is off (None)."""
    if log is None:
        return
    log.add_record(
        {
            "time": log.now(),
            "question": answer["query"],
            "language": answer["language"],
            "answered": answered(answer),
            "entry": nearest.entry,
            "probability": nearest.probability,
            "refusal": nearest.refusal,
            "release": release,
        }
    )
