"""ask.json: language choice and a first matching engine over the recommendation matrix and
the answer library, built when a snapshot loads.

Matching is term overlap weighted by inverse document frequency, over the questions,
answers and scenarios in all six languages (Han text as character bigrams, accents folded),
so a question in any language finds an entry whatever language the answer comes back in.
The ranking engine of the ask issue replaces ``AskIndex``; the route and its contract stay.
"""

from __future__ import annotations

import itertools
import math
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from typing import Any

LANGUAGES = ("en", "zh", "el", "vi", "ar", "pa")
NO_MATCH_THRESHOLD = 0.35  # share of the question's weight that must be found in one entry
RECOMMENDATION_BOOST = 1.1  # a recommendation backed by bench evidence outranks an equal library answer
_WORD = re.compile(r"\w+", re.UNICODE)
_VIETNAMESE = set("ăâđêôơưạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹ")
STOP_WORDS = {
    "the",
    "a",
    "an",
    "is",
    "are",
    "for",
    "to",
    "of",
    "and",
    "or",
    "in",
    "on",
    "my",
    "i",
    "do",
    "what",
    "which",
    "how",
    "best",
    "does",
    "it",
    "with",
    "can",
    "should",
    "you",
    "your",
    "me",
}


def fold(text: str) -> str:
    """Lower-case, accents removed (Greek final sigma too), Arabic diacritics dropped."""
    decomposed = unicodedata.normalize("NFKD", text.lower().replace("ς", "σ"))
    return "".join(c for c in decomposed if not unicodedata.combining(c)).replace("ـ", "")


def terms(text: str) -> list[str]:
    """Index terms: words of alphabetic scripts, character bigrams of Han text."""
    result: list[str] = []
    for word in _WORD.findall(fold(text)):
        han = [c for c in word if "\u4e00" <= c <= "\u9fff"]
        if han:
            result.extend(a + b for a, b in itertools.pairwise(han))
            result.extend(han if len(han) == 1 else [])
            word = "".join(c for c in word if not "\u4e00" <= c <= "\u9fff")
            if not word:
                continue
        if word not in STOP_WORDS and (len(word) > 1 or not word.isascii()):
            result.append(word)
    return result


def script_language(text: str) -> str:
    """The language the script of ``text`` points to: Han, Greek, Arabic, Gurmukhi, Vietnamese, else en."""
    counts = Counter()
    for c in text:
        if "\u4e00" <= c <= "\u9fff":
            counts["zh"] += 1
        elif "\u0370" <= c <= "\u03ff" or "\u1f00" <= c <= "\u1fff":
            counts["el"] += 1
        elif "\u0600" <= c <= "\u06ff":
            counts["ar"] += 1
        elif "\u0a00" <= c <= "\u0a7f":
            counts["pa"] += 1
        elif c.lower() in _VIETNAMESE:
            counts["vi"] += 1
    return counts.most_common(1)[0][0] if counts else "en"


def accept_language(header: str) -> str | None:
    """The supported code the Accept-Language header prefers most, honouring q-values."""
    choices: list[tuple[float, int, str]] = []
    for position, part in enumerate(header.split(",")):
        tag, _, params = part.strip().partition(";")
        quality = 1.0
        for param in params.split(";"):
            name, _, value = param.strip().partition("=")
            if name == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        code = tag.strip().lower().split("-")[0]
        if quality > 0 and (code in LANGUAGES or code == "*"):
            choices.append((quality, -position, "en" if code == "*" else code))
    return max(choices)[2] if choices else None


@dataclass(frozen=True)
class Entry:
    kind: str  # "recommendation" or "answer-library"
    row: dict[str, Any]
    weights: dict[str, float]


class AskIndex:
    """Every recommendation and library answer, as weighted term vectors."""

    def __init__(self, recommendations: list[dict[str, Any]], answers: list[dict[str, Any]]):
        documents: list[tuple[str, dict[str, Any], list[str]]] = []
        for row in recommendations:
            texts = [row["question"][lang] for lang in LANGUAGES] + [row["scenario"][lang] for lang in LANGUAGES]
            documents.append(("recommendation", row, [t for text in texts for t in terms(text)]))
        for row in answers:
            texts = [row["question"][lang] for lang in LANGUAGES]
            documents.append(("answer-library", row, [t for text in texts for t in terms(text)]))
        frequency = Counter(t for _, _, words in documents for t in set(words))
        total = len(documents)
        self.idf = {t: math.log(1 + total / f) for t, f in frequency.items()}
        self.entries = [Entry(kind, row, {t: self.idf[t] for t in set(words)}) for kind, row, words in documents]

    def search(self, question: str, limit: int) -> list[tuple[Entry, float]]:
        query = set(terms(question))
        if not query:
            return []
        possible = sum(self.idf.get(t, 0.0) for t in query) or 1.0
        scored = []
        for entry in self.entries:
            found = sum(w for t, w in entry.weights.items() if t in query)
            if found / possible >= NO_MATCH_THRESHOLD:
                boost = RECOMMENDATION_BOOST if entry.kind == "recommendation" else 1.0
                scored.append((entry, found / possible * boost))
        scored.sort(key=lambda pair: -pair[1])
        return scored[:limit]
