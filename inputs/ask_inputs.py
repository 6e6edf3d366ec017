"""The publisher's inputs for the ask engine: its labelled questions, and the encoder trained on its library.

A publisher's inputs may ship a trained ask encoder (``<inputs>/ask_encoder/``, written by
`reuse-data ask train`; ``ask.model.store`` reads it), so a build from them trains nothing.

The labelled questions are what readers type, and which entry answers it. They are an input
like the bench sheets, in two sets written two ways (``LABELLED_SETS``):

- ``questions`` (``<inputs>/ask_questions/``): questions as a reader writes them, each written
  from an entry's question without its wording (``keywords``, ``chatty``, ``typo``, ``mixed``,
  ``reworded``, and ``near-domain`` and ``off-topic`` ones nothing answers);
- ``queries`` (``<inputs>/ask_queries/``): what people type into a search box or say to a voice
  assistant, each written from a fact of an entry (``product``: a catalogue product by name with a
  fact; ``keywords``; ``constraint``: a need with a budget, person, place or context; ``problem``:
  a symptom with no product word; ``spoken``; ``unmarked``: Greek without accents, Vietnamese
  without tone marks, dialectal Arabic, informal Punjabi, careless English, traditional Chinese;
  and ``no-match`` beside the categories).

Each is ``<set folder>/<split>/<language>.jsonl``, one ``{"question", "expected", "kind"}`` per
line. ``expected`` lists the entries (a recommendation's ``scenario_slug``, a library answer's
``answer_id``) any of which is a right first answer; empty for a question the library cannot
answer. Each set was split once into two parts (``Split``, each named as its folder):

- ``dev`` (``FITTED_SPLIT``): anything may be fitted on it: the encoder is trained on it and the
  decision fitted on it;
- ``test`` (``HELD_OUT_SPLIT``): nothing is fitted on it; a build reports its figures on it beside
  the model, and ``make bench-ask`` and the regression tests read it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from foundations.content_keys import tree_key

# The labelled sets, by name: the folder of each under the inputs.
LABELLED_SETS = {"questions": "ask_questions", "queries": "ask_queries"}
SHIPPED_ENCODER_FOLDER = "ask_encoder"


class Split(StrEnum):
    """The parts each labelled set was split into once; a value is its folder's name."""

    DEV = "dev"
    TEST = "test"


FITTED_SPLIT = Split.DEV  # the only split anything is fitted on
HELD_OUT_SPLIT = Split.TEST  # only ever scored


class LabelledQuestionsError(ValueError):
    """A labelled-questions file that cannot be read, named with its line."""


@dataclass(frozen=True)
class LabelledQuestion:
    language: str
    question: str
    expected: tuple[str, ...]  # entry ids; empty: must not match
    kind: str
    split: Split
    labelled_set: str = "questions"  # which of ``LABELLED_SETS``


def split_files(
    inputs: Path, split: Split, languages: Iterable[str], sets: Iterable[str] = LABELLED_SETS
) -> list[Path]:
    """The files of ``split`` that exist under ``inputs``, set by set in ``sets`` order, each in ``languages`` order."""
    if split not in tuple(Split):
        raise ValueError(f"split must be one of {tuple(map(str, Split))}, got {split!r}")
    languages = list(languages)
    return [
        path
        for labelled_set in sets
        for language in languages
        if (path := inputs / LABELLED_SETS[labelled_set] / split / f"{language}.jsonl").is_file()
    ]


def load_questions(
    inputs: Path, split: Split, languages: Iterable[str], sets: Iterable[str] = LABELLED_SETS
) -> list[LabelledQuestion]:
    """Every labelled question of ``split`` in ``sets`` (both by default; none when the inputs have
    no such files), set by set, each in language order."""
    questions: list[LabelledQuestion] = []
    folders = {folder: name for name, folder in LABELLED_SETS.items()}
    for path in split_files(inputs, split, languages, sets):
        labelled_set = folders[path.parent.parent.name]
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                question = LabelledQuestion(
                    path.stem, item["question"], tuple(item["expected"]), item["kind"], Split(split), labelled_set
                )
            except (ValueError, KeyError, TypeError) as error:
                raise LabelledQuestionsError(
                    f"{path}, line {number}: not a labelled question ({error}); each line is "
                    '{"question": "…", "expected": ["entry id", …], "kind": "…"}'
                ) from error
            questions.append(question)
    return questions


def digest_of(inputs: Path, split: Split, languages: Iterable[str]) -> str:
    """The key of a split's files in every set, in order: what a model fitted on them records."""
    return tree_key(inputs, split_files(inputs, split, languages))
