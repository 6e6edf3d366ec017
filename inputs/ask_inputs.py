"""The publisher's inputs for the ask engine: its labelled questions, and the encoder trained on its library.

A publisher's inputs may ship a trained ask encoder (``<inputs>/ask_encoder/``, written by
`reuse-data ask train`; ``ask.model.store`` reads it), so a build from them trains nothing.

The labelled questions are what readers type, and which entry answers it. They are an input
like the bench sheets: ``<inputs>/ask_questions/<split>/<language>.jsonl``,
one ``{"question", "expected", "kind"}`` per line. ``expected`` lists the entries (a
recommendation's ``scenario_slug``, a library answer's ``answer_id``) any of which is a right
first answer; empty for a question the library cannot answer. The questions were written
without the library's wording and split once, at random within each language and
answerable/no-match group, into two halves:

- ``dev``: anything may be fitted on it: the encoder is trained on it and the decision fitted on it;
- ``test``: nothing is fitted on it; a build reports its figures on it beside the model, and
  ``make bench-ask`` and the regression tests read it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

QUESTIONS_FOLDER = "ask_questions"
SHIPPED_ENCODER_FOLDER = "ask_encoder"
SPLITS = ("dev", "test")
FITTED_SPLIT = "dev"  # the only split anything is fitted on


class LabelledQuestionsError(ValueError):
    """A labelled-questions file that cannot be read, named with its line."""


@dataclass(frozen=True)
class LabelledQuestion:
    language: str
    question: str
    expected: tuple[str, ...]  # entry ids; empty: must not match
    kind: str
    split: str


def split_files(inputs: Path, split: str, languages: Iterable[str]) -> list[Path]:
    """The files of ``split`` that exist under ``inputs``, in ``languages`` order."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    folder = inputs / QUESTIONS_FOLDER / split
    return [path for language in languages if (path := folder / f"{language}.jsonl").is_file()]


def load_questions(inputs: Path, split: str, languages: Iterable[str]) -> list[LabelledQuestion]:
    """Every labelled question of ``split`` (none when the inputs have no such files), in language order."""
    questions: list[LabelledQuestion] = []
    for path in split_files(inputs, split, languages):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                questions.append(
                    LabelledQuestion(path.stem, item["question"], tuple(item["expected"]), item["kind"], split)
                )
            except (ValueError, KeyError, TypeError) as error:
                raise LabelledQuestionsError(
                    f"{path}, line {number}: not a labelled question ({error}); each line is "
                    '{"question": "…", "expected": ["entry id", …], "kind": "…"}'
                ) from error
    return questions


def digest_of(inputs: Path, split: str, languages: Iterable[str]) -> str:
    """The sha256 of a split's files, in order: what a model fitted on them records."""
    digest = hashlib.sha256()
    for path in split_files(inputs, split, languages):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()
