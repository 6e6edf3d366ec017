"""What the ask encoder is trained on: the library's texts, the dev split's questions, and the
questions nothing in the library answers.

The training set is assembled from the library as the build warehouse holds it, without
PyTorch, so a build can tell whether it needs to train at all on a machine without it: its
``retraining_digest`` is part of the training's key (``ask.training.library.training_key``).

Never the test split: only the dev split's questions are in a training set.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from foundations.content_keys import value_key

# What a text the editors write is, where a library does not say (a set assembled without kinds).
UNNAMED_KIND = "text"
LABELLED_KIND = "labelled question"  # a dev question and the entry it expects
NO_MATCH_KIND = "no-match question"  # the dev split's no-match questions and the uncovered topics' questions
TEXT_DIGEST_CHARACTERS = 10  # a text's short digest: 40 bits, no collision in a library of millions of texts


@dataclass(frozen=True)
class TrainingSet:
    """The library's texts, the dev split's questions, and questions nothing in the library answers."""

    entry_texts: dict[str, tuple[str, ...]]  # entry id -> its question and scenario in six languages, phrasings
    entry_groups: dict[str, str]  # entry id -> its category: entries of one category are each other's hard negatives
    questions: tuple[tuple[str, str], ...]  # (question as people type it, entry id): the dev split's answerable ones
    no_match: tuple[str, ...]  # questions nothing in the library answers: the dev split's and the uncovered topics'
    # The entry texts the bench writes (a recommendation's answer: the pick and its figure).
    bench_written: frozenset[str] = frozenset()
    # What each (entry id, text) is: the ask_texts field that holds it (question, scenario, answer, phrasing).
    text_kinds: Mapping[tuple[str, str], str] = field(default_factory=dict, compare=False)

    def digest(self) -> str:
        """The sha256 of a canonical serialisation: equal sets, equal digests, whatever their order."""
        canonical = {
            "entry_texts": {entry: sorted(texts) for entry, texts in sorted(self.entry_texts.items())},
            "entry_groups": dict(sorted(self.entry_groups.items())),
            "questions": sorted(self.questions),
            "no_match": sorted(self.no_match),
        }
        return value_key(canonical)

    def retraining_digest(self) -> str:
        """The digest of the set less its bench-written texts: what decides whether the encoder is
        trained again. A tester's sheet can change a recommendation's pick or figure, and so its
        answer; training again for that would cost minutes for every sheet and move every vector,
        while the questions people ask of the entry stay the same. The editors' texts, the
        phrasings, the labelled questions and the uncovered topics all count."""
        edited = {
            entry: tuple(t for t in texts if t not in self.bench_written) for entry, texts in self.entry_texts.items()
        }
        return dataclasses.replace(self, entry_texts=edited, bench_written=frozenset()).digest()

    def edited_texts(self) -> dict[str, str]:
        """A short digest of every text that counts for retraining, by kind, space-separated: what a
        model's manifest keeps of its training set, so that a build can say how many phrasings, answers
        or labelled questions a model was not trained on (``ask.training.library.lag``) without the
        texts themselves."""
        kinds: dict[str, set[str]] = {}
        for entry, texts in self.entry_texts.items():
            for text in texts:
                if text not in self.bench_written:
                    kind = self.text_kinds.get((entry, text), UNNAMED_KIND)
                    kinds.setdefault(kind, set()).add(short_digest(entry, text))
        for question, entry in self.questions:
            kinds.setdefault(LABELLED_KIND, set()).add(short_digest(entry, question))
        for question in self.no_match:
            kinds.setdefault(NO_MATCH_KIND, set()).add(short_digest("", question))
        return {kind: " ".join(sorted(digests)) for kind, digests in sorted(kinds.items())}

    def summary(self) -> dict[str, int]:
        return {
            "entries": len(self.entry_texts),
            "entry_texts": sum(len(texts) for texts in self.entry_texts.values()),
            "questions": len(self.questions),
            "no_match": len(self.no_match),
        }


def short_digest(entry: str, text: str) -> str:
    return hashlib.sha256(f"{entry}\n{text}".encode()).hexdigest()[:TEXT_DIGEST_CHARACTERS]


def training_set(
    entry_texts: Iterable[tuple[str, str]],
    entry_groups: Mapping[str, str],
    dev_questions: Iterable[tuple[str, tuple[str, ...]]],
    uncovered_questions: Iterable[str],
    bench_written: Iterable[str] = (),
    text_kinds: Mapping[tuple[str, str], str] | None = None,
) -> TrainingSet:
    """The training set of a library: ``entry_texts`` as (entry id, text) rows, each entry's
    category, the dev split's (question, expected entry ids), the uncovered topics' questions,
    which of the texts the bench writes, and what kind of text each (entry id, text) is.

    A dev question whose expected entries are all missing from the library (a publisher that
    dropped them) is left out rather than taught as a no-match: it was written to be answered.
    """
    texts: dict[str, list[str]] = {}
    for entry, text in entry_texts:
        texts.setdefault(entry, []).append(text)
    questions, no_match = [], list(dict.fromkeys(uncovered_questions))
    for question, expected in dev_questions:
        if not expected:
            no_match.append(question)
        elif present := [entry for entry in expected if entry in texts]:
            questions.append((question, present[0]))
    return TrainingSet(
        entry_texts={entry: tuple(dict.fromkeys(found)) for entry, found in sorted(texts.items())},
        entry_groups={entry: entry_groups.get(entry, entry) for entry in sorted(texts)},
        questions=tuple(questions),
        no_match=tuple(dict.fromkeys(no_match)),
        bench_written=frozenset(bench_written),
        text_kinds=dict(text_kinds or {}),
    )
