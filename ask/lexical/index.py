"""The lexical index: BM25F over the recommendation matrix and the answer library, in six languages.

Every entry is one document with four fields, each holding the field's text in all six
languages, so a question in any language finds the entry whatever language the answer is
returned in:

    question (weight 3)   the entry's question
    scenario (2)          the buying scenario of a recommendation
    product (1.5)         the recommended product, its brand and category names
    answer (1)            the answer, and a recommendation's bench evidence

Scoring is BM25F (Robertson and Zaragoza): term frequencies are weighted per field and
length-normalised per field *before* one saturation, so a word in the question counts more
than the same word deep in an answer without letting a long answer win by repetition.
Query-independent weights are computed once per term, when the snapshot loads; a search
only gathers the postings of the question's terms. (bm25s and rank-bm25 score a single
field and a flat bag of tokens; the field weights and the question's alternative readings,
exact or folded, English or Vietnamese, corrected typos, need the scoring done here.)

Two numbers come out for every entry (``AskIndex.evidence``): its **score** (BM25F) and its
**coverage**, the IDF-weighted share of the question's words found in it (a word the library
never uses counts fully against it). Neither decides anything here: both are features of the
decision (``ask.decision.features``), the score over the scale of the question's language
(``Tuning.score_scale``), as each analysis scores on a scale of its own.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ask.entries import Entry, library_entries
from ask.lexical.analysis import Slot, document_terms, is_common_word, latin_readings, question_slots
from ask.lexical.script import script_language, script_of
from warehouse.reference_data import LANGUAGES

K1 = 1.2
B = 0.75
FUZZY_MIN_LENGTH = 4  # shorter words are too easily another word with one letter changed


@dataclass(frozen=True)
class Tuning:
    """The knobs of the lexical ranking."""

    field_weights: Mapping[str, float]
    # The scale of a language's scores, per language of the question (``AskIndex.question_language``):
    # each analysis has one of its own (a Vietnamese word is two or three syllables, each a term; a Han
    # character counts in two bigrams at half weight). Set once from the dev split of the labelled
    # questions, as the score a lexical match in that language needed; the lexical feature is a
    # score over it (``ask.decision.features``).
    score_scale: Mapping[str, float]
    unknown_han_bigram: float  # share of an unknown word's weight that an unknown Han bigram counts
    fuzzy_reading: float  # a term reached by correcting a typo weighs this much; 0 turns corrections off


TUNED = Tuning(
    field_weights={"question": 3.0, "scenario": 2.0, "product": 1.5, "answer": 1.0},
    score_scale={"en": 9.4, "zh": 8.5, "el": 12.9, "vi": 18.9, "ar": 13.6, "pa": 13.9},
    unknown_han_bigram=0.35,
    fuzzy_reading=0.8,
)


def _texts(value: Mapping[str, str | None] | None) -> list[tuple[str, str]]:
    """A translated value as (text, language) pairs, skipping missing translations."""
    return [(value[lang], lang) for lang in LANGUAGES if value and value.get(lang)]


def recommendation_fields(row: Mapping[str, Any]) -> dict[str, list[tuple[str, str]]]:
    product = [(f"{row['brand']} {row['product_name']}", "en"), *_texts(row["category_name"])]
    return {
        "question": _texts(row["question"]),
        "scenario": _texts(row["scenario"]),
        "product": product,
        "answer": _texts(row["answer"]) + _texts(row["evidence"]),
    }


def answer_fields(row: Mapping[str, Any], category_name: Mapping[str, str] | None) -> dict[str, list[tuple[str, str]]]:
    return {"question": _texts(row["question"]), "product": _texts(category_name), "answer": _texts(row["answer"])}


def _deletions(term: str) -> set[str]:
    return {term[:i] + term[i + 1 :] for i in range(len(term))}


def _within_one_edit(a: str, b: str) -> bool:
    """True when ``b`` is ``a`` with one letter inserted, deleted, replaced or two swapped."""
    if a == b or abs(len(a) - len(b)) > 1:
        return a == b
    if len(a) == len(b):
        differ = [i for i in range(len(a)) if a[i] != b[i]]
        if len(differ) == 1:
            return True
        first, second = differ if len(differ) == 2 else (0, 0)
        return second == first + 1 and a[first] == b[second] and a[second] == b[first]
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


class AskIndex:
    """Postings of BM25F weights, per term, over every entry; searched in well under a millisecond.

    ``analyse`` builds one from the entries' texts (the pipeline does, at every build); a server
    loads the result from the snapshot (``ask.lexical.stored``) instead of analysing again.
    """

    def __init__(
        self,
        entries: list[Entry],
        tuning: Tuning,
        postings: dict[str, tuple[np.ndarray, np.ndarray]],
        idf: dict[str, float],
        latin_vocabulary: dict[str, set[str]],
        neighbours: Callable[[set[str]], set[str]] | None = None,
    ):
        self.entries = entries
        self.tuning = tuning
        self.postings = postings  # term -> (the entries holding it, its BM25F weight in each)
        self.idf = idf
        # Latin terms by the language of their text: tells unmarked Vietnamese from English.
        self.latin_vocabulary = latin_vocabulary
        self.unknown_idf = math.log(1 + (len(entries) + 0.5) / 0.5)
        # Typo correction: each term is filed under every spelling one deletion away (and its own),
        # so the terms one edit from a question's word are found by looking up that word's
        # deletions. ``neighbours`` answers that lookup (a stored index asks its table).
        self.neighbourhoods = self._neighbourhoods(postings) if neighbours is None else None
        self.neighbours = neighbours or self._filed_under

    @staticmethod
    def _neighbourhoods(postings: Iterable[str]) -> dict[str, set[str]]:
        near: dict[str, set[str]] = defaultdict(set)
        for term in postings:
            if len(term) >= FUZZY_MIN_LENGTH and script_of(term) != "han":
                for key in _deletions(term) | {term}:
                    near[key].add(term)
        return near

    def _filed_under(self, keys: set[str]) -> set[str]:
        return set().union(*(self.neighbourhoods.get(key, ()) for key in keys))

    @classmethod
    def analyse(
        cls, entries: list[Entry], fields: list[dict[str, list[tuple[str, str]]]], tuning: Tuning = TUNED
    ) -> AskIndex:
        """The index of ``entries`` whose texts are ``fields`` (per entry: field -> (text, language) pairs)."""
        count = len(entries)
        latin_vocabulary: dict[str, set[str]] = {"en": set(), "vi": set()}
        field_terms: list[dict[str, list[str]]] = []
        for doc in fields:
            field_terms.append(defaultdict(list))
            for name, pairs in doc.items():
                for text, lang in pairs:
                    terms = document_terms(text, lang)
                    field_terms[-1][name].extend(terms)
                    if lang in latin_vocabulary:
                        latin_vocabulary[lang].update(t for t in terms if script_of(t) == "latin")
        average_length = {
            name: (sum(len(doc.get(name, ())) for doc in field_terms) / count) or 1.0 for name in tuning.field_weights
        }
        postings: dict[str, list[tuple[int, float]]] = defaultdict(list)
        for number, doc in enumerate(field_terms):
            weighted: Counter[str] = Counter()
            for name, terms in doc.items():
                norm = 1 - B + B * len(terms) / average_length[name]
                for term, frequency in Counter(terms).items():
                    weighted[term] += tuning.field_weights[name] * frequency / norm
            for term, frequency in weighted.items():
                postings[term].append((number, frequency * (K1 + 1) / (frequency + K1)))
        idf = {term: math.log(1 + (count - len(p) + 0.5) / (len(p) + 0.5)) for term, p in postings.items()}
        arrays = {
            term: (
                np.array([number for number, _ in p], dtype=np.int32),
                np.array([weight for _, weight in p], dtype=np.float32) * idf[term],
            )
            for term, p in postings.items()
        }
        return cls(entries, tuning, arrays, idf, latin_vocabulary)

    @staticmethod
    def fields_of(
        entries: Iterable[Entry], categories: Iterable[Mapping[str, Any]]
    ) -> list[dict[str, list[tuple[str, str]]]]:
        """Each entry's texts by field, as ``analyse`` reads them."""
        category_names = {row["category_slug"]: row["category_name"] for row in categories}
        return [
            recommendation_fields(entry.row)
            if entry.kind == "recommendation"
            else answer_fields(entry.row, category_names.get(entry.row.get("category_slug")))
            for entry in entries
        ]

    @classmethod
    def from_tables(
        cls,
        recommendations: Iterable[Mapping[str, Any]],
        answers: Iterable[Mapping[str, Any]],
        categories: Iterable[Mapping[str, Any]],
        tuning: Tuning = TUNED,
    ) -> AskIndex:
        """The index of a snapshot's recommendations and library answers, analysed now."""
        entries = library_entries(recommendations, answers)
        return cls.analyse(entries, cls.fields_of(entries, categories), tuning)

    def corrections(self, term: str) -> set[str]:
        """Terms of the index one typo away from ``term`` (none for short words or Han)."""
        if len(term) < FUZZY_MIN_LENGTH or script_of(term) == "han":
            return set()
        near = self.neighbours(_deletions(term) | {term})
        return {candidate for candidate in near if _within_one_edit(term, candidate)}

    def _readings(self, slot: Slot) -> list[tuple[str, float]]:
        """The slot's readings the index knows, with typo corrections for a word it does not know
        (unless the word is a common word of its language: then the library just lacks it)."""
        known = [(term, weight) for term, weight in slot.readings if term in self.postings]
        if known or not self.tuning.fuzzy_reading or is_common_word(slot.word):
            return known
        fuzzy = self.tuning.fuzzy_reading
        return [(c, weight * fuzzy) for term, weight in slot.readings for c in self.corrections(term)]

    def _unknown_weight(self, slot: Slot) -> float:
        """How much a word the index does not know counts against a match.

        A Han bigram the library never uses is mostly a seam between two words (灌的, 想撑),
        not a topic of its own, so it counts for a fraction of an unknown word.
        """
        han = script_of(slot.readings[0][0]) == "han"
        return self.unknown_idf * (self.tuning.unknown_han_bigram if han else 1.0)

    def question_language(self, question: str) -> str:
        """The language whose score threshold applies: the question's script decides, and Latin
        text without Vietnamese marks is Vietnamese when more of its words are Vietnamese-only
        in the library than English-only ("binh giu nhiet nao" is, "best travel mug" is not).
        """
        language = script_language(question)
        if language != "en":
            return language
        english_only = vietnamese_only = 0
        for english, syllable in latin_readings(question):
            if english is None:
                continue  # an English stop word ("do", "to", "can") is also a Vietnamese syllable: no evidence
            in_english = english in self.latin_vocabulary["en"]
            in_vietnamese = syllable in self.latin_vocabulary["vi"]
            english_only += in_english and not in_vietnamese
            vietnamese_only += in_vietnamese and not in_english
        return "vi" if vietnamese_only > english_only else "en"

    def evidence(self, question: str) -> tuple[np.ndarray, np.ndarray]:
        """(BM25F score, coverage) of every entry for ``question``."""
        count = len(self.entries)
        score = np.zeros(count, dtype=np.float32)
        found = np.zeros(count, dtype=np.float32)
        total_weight = 0.0
        for slot in question_slots(question):
            readings = self._readings(slot)
            slot_weight = max((self.idf[term] for term, _ in readings), default=self._unknown_weight(slot))
            total_weight += slot_weight
            if not readings:
                continue
            slot_score = np.zeros(count, dtype=np.float32)
            slot_found = np.zeros(count, dtype=np.float32)
            for term, weight in readings:
                docs, weights = self.postings[term]
                # A term lists each entry once, so plain indexing is safe (and faster than ufunc.at).
                slot_score[docs] = np.maximum(slot_score[docs], weights * weight)
                slot_found[docs] = np.maximum(slot_found[docs], weight)
            score += slot_score * slot.share
            found += slot_found * slot_weight
        return score, found / max(total_weight, 1e-9)
