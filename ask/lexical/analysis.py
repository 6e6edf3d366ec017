"""Text analysis for the ask index: the same text, in any of six languages, to comparable terms.

Each word is analysed by its script, so a Latin brand name inside a Greek question is
treated as Latin:

- Han: NFKC, split at function characters (的, 吗, 是...), then character bigrams (a lone
  character stays a unigram). Bigrams need no dictionary and match across word boundaries.
- Greek: lowercase, final sigma, accents and diaeresis folded, stop words, Snowball stemmer.
- Arabic: harakat, superscript alef and tatweel removed; alef forms to bare alef, teh
  marbuta to heh, alef maksura to yeh; the article and its clitic prepositions (وال, بال,
  كال, فال, لل) stripped; stop words; Snowball stemmer.
- Gurmukhi: nukta, addak, udaat and yakash dropped, tippi and bindi unified, stop words.
  No stemmer exists for Punjabi; these are the spellings people vary most.
- Latin in Vietnamese text: both the exact syllable and its diacritic-folded form, so a
  question typed without tone marks still matches and one typed with them ranks the exact
  spelling higher. Latin elsewhere: accents folded, stop words, Snowball English stemmer.

A question has no language of its own yet, so a Latin word there may be English or
Vietnamese typed without marks: it becomes one *slot* with both readings, and an entry is
credited for the best reading it contains (see ``ask.lexical.index``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import Stemmer
from wordfreq import zipf_frequency

from ask.lexical.script import HAN_RANGE, VIETNAMESE_LETTERS, WORD, script_of

_HAN_RUN = re.compile(f"([{HAN_RANGE}]+)")
_VIETNAMESE_MARKED = re.compile(f"[{VIETNAMESE_LETTERS}]")

_ARABIC_MARKS = re.compile(r"[\u064b-\u065f\u0670\u0640\u06d6-\u06ed]")
_ARABIC_LETTERS = str.maketrans({"أ": "ا", "إ": "ا", "آ": "ا", "ٱ": "ا", "ة": "ه", "ى": "ي", "ؤ": "و", "ئ": "ي"})
_ARABIC_ARTICLE = ("وال", "بال", "كال", "فال", "لل", "ال")
_GURMUKHI_DROPPED = dict.fromkeys(map(ord, "\u0a3c\u0a71\u0a51\u0a75"))  # nukta, addak, udaat, yakash
_GURMUKHI_LETTERS = {ord("\u0a70"): "\u0a02", **_GURMUKHI_DROPPED}  # tippi -> bindi

# Stop words, one per line, in ask/lexical/stopwords/<lang>.txt. Greek is written in its folded
# form (final sigma as σ, no accents). Vietnamese lists exact spellings only: folded, many
# collide with content words (ban: bàn "table", bán "sell").
STOP_WORDS: dict[str, frozenset[str]] = {
    path.stem: frozenset(path.read_text(encoding="utf-8").split())
    for path in (Path(__file__).parent / "stopwords").glob("*.txt")
}
# Han characters that carry grammar, not meaning: a run is split at them.
_HAN_STOP = frozenset("的了吗呢吧啊是我你他她它在和与及或有也都就要会能可以哪些什么怎么如何个这那吗么")

_STEMMERS = {"en": Stemmer.Stemmer("english"), "el": Stemmer.Stemmer("greek"), "ar": Stemmer.Stemmer("arabic")}


# A word this common in its language (Zipf scale: 4 is ten uses per million words) is a word
# the shopper meant, not a typo: "wine" is not corrected to "fine" nor "dinner" to "inner".
# wordfreq's small lists hold every word down to Zipf 3, enough for this test at a few MB each.
COMMON_WORD_ZIPF = 4.0
_WORDFREQ_LANGUAGE = {"greek": "el", "arabic": "ar"}  # wordfreq has no Punjabi; Han is never corrected


@lru_cache(maxsize=50_000)
def is_common_word(word: str) -> bool:
    """True when ``word`` is a common word of its language (English or Vietnamese for Latin
    script, by its tone marks; Greek; Arabic), so a search should not correct it as a typo."""
    script = script_of(word)
    if script == "latin":
        language = "vi" if _VIETNAMESE_MARKED.search(word.lower()) else "en"
    else:
        language = _WORDFREQ_LANGUAGE.get(script)
    return language is not None and zipf_frequency(word, language, wordlist="small") >= COMMON_WORD_ZIPF


def fold_marks(text: str) -> str:
    """``text`` without combining marks (accents, tone marks); đ becomes d."""
    decomposed = unicodedata.normalize("NFD", text.replace("đ", "d").replace("Đ", "D"))
    return unicodedata.normalize("NFC", "".join(c for c in decomposed if not unicodedata.combining(c)))


def _bare_arabic(word: str) -> str:
    return _ARABIC_MARKS.sub("", word).translate(_ARABIC_LETTERS)


def normalise_arabic(word: str) -> str:
    """Arabic spelling variants to one form, the article and its clitic prepositions removed."""
    word = _bare_arabic(word)
    for article in _ARABIC_ARTICLE:
        if word.startswith(article) and len(word) - len(article) >= 2:
            return word[len(article) :]
    return word


def normalise_gurmukhi(word: str) -> str:
    """Gurmukhi spelling variants to one form (nukta and addak dropped, tippi as bindi)."""
    return unicodedata.normalize("NFD", word).translate(_GURMUKHI_LETTERS)


def normalise_greek(word: str) -> str:
    return fold_marks(word.lower()).replace("ς", "σ")


@lru_cache(maxsize=200_000)
def _latin_english(word: str) -> str | None:
    folded = fold_marks(word.lower())
    if folded in STOP_WORDS["en"] or (len(folded) < 2 and not folded.isdigit()):
        return None
    return _STEMMERS["en"].stemWord(folded)


@lru_cache(maxsize=200_000)
def _latin_vietnamese(word: str) -> tuple[str, ...]:
    """The folded syllable, then the exact one when it differs and is not a stop word.

    Folded forms are kept even for stop words: a question typed without marks cannot tell
    "nào" from a content word, and such a frequent term weighs next to nothing anyway.
    """
    exact = unicodedata.normalize("NFC", word.lower())
    if len(exact) < 2 and not exact.isdigit():
        return ()
    folded = fold_marks(exact)
    return (folded,) if folded == exact or exact in STOP_WORDS["vi"] else (folded, exact)


@lru_cache(maxsize=200_000)
def _greek(word: str) -> str | None:
    normal = normalise_greek(word)
    return None if normal in STOP_WORDS["el"] or len(normal) < 2 else _STEMMERS["el"].stemWord(normal)


@lru_cache(maxsize=200_000)
def _arabic(word: str) -> str | None:
    if _bare_arabic(word) in _ARABIC_STOP:
        return None
    normal = normalise_arabic(word)
    return None if len(normal) < 2 else _STEMMERS["ar"].stemWord(normal)


@lru_cache(maxsize=200_000)
def _gurmukhi(word: str) -> str | None:
    normal = normalise_gurmukhi(word)
    return None if normal in _GURMUKHI_STOP or len(normal) < 2 else stem_gurmukhi(normal)


# Punjabi inflects nouns, adjectives and participles by their final vowel: number, gender and
# case (ਥੈਲੀ, ਥੈਲੀਆਂ; ਵਾਲਾ, ਵਾਲੀ, ਵਾਲੇ, ਵਾਲੀਆਂ). Longest first; written after normalisation (bindi).
_GURMUKHI_ENDINGS = tuple(
    sorted(
        ("ੀਆਂ", "ਿਆਂ", "ਈਆਂ", "ੀਏ", "ਿਆ", "ੀਆ", "ਆਂ", "ੀਂ", "ੇਂ", "ਾਂ", "ੋਂ", "ੂੰ", "ਏ", "ਈ", "ਆ", "ਾ", "ੀ", "ੇ", "ੋ"),
        key=len,
        reverse=True,
    )
)


def stem_gurmukhi(word: str) -> str:
    """A light stemmer (no Snowball one exists for Punjabi): one inflectional vowel ending removed."""
    for ending in _GURMUKHI_ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 2:
            return word[: -len(ending)]
    return word


_GURMUKHI_STOP = frozenset(normalise_gurmukhi(w) for w in STOP_WORDS["pa"])
_ARABIC_STOP = frozenset(_bare_arabic(w) for w in STOP_WORDS["ar"])


def han_terms(run: str) -> list[str]:
    """Bigrams of a Han run, split at function characters; a lone character stays a unigram."""
    terms: list[str] = []
    for segment in re.split(f"[{''.join(_HAN_STOP)}]+", run):
        if len(segment) == 1:
            terms.append(segment)
        terms.extend(segment[i : i + 2] for i in range(len(segment) - 1))
    return terms


def _words(text: str) -> Iterator[str]:
    """Words of ``text``; a Han run inside a word (Copperleaf保温杯) is a word of its own."""
    for word in WORD.findall(unicodedata.normalize("NFKC", text)):
        if _HAN_RUN.search(word):
            yield from (part for part in _HAN_RUN.split(word) if part and part != "_")
        else:
            yield word


def latin_readings(text: str) -> list[tuple[str | None, str | None]]:
    """Each Latin word of ``text`` read as English (its stem) and as Vietnamese (its folded syllable)."""
    readings: list[tuple[str | None, str | None]] = []
    for word in _words(text):
        if script_of(word) == "latin":
            syllables = _latin_vietnamese(word)
            readings.append((_latin_english(word), syllables[0] if syllables else None))
    return readings


@dataclass(frozen=True)
class Slot:
    """One word of a question: the terms it may stand for, each with the weight of that reading."""

    readings: tuple[tuple[str, float], ...]
    word: str  # as the question wrote it
    share: float = 1.0  # of the score: overlapping Han bigrams see each character twice, so half each


# A question's Latin word may be Vietnamese typed without marks: that reading weighs a little
# less than the English one, so an English question never prefers a Vietnamese coincidence.
VIETNAMESE_READING = 0.9
FOLDED_READING = 0.9  # a Vietnamese syllable matched without its tone marks


def _non_latin_terms(word: str, script: str) -> list[str]:
    """Terms of a Han, Greek, Arabic or Gurmukhi word (none for a stop word)."""
    if script == "han":
        return han_terms(word)
    analyse = {"greek": _greek, "arabic": _arabic, "gurmukhi": _gurmukhi}[script]
    term = analyse(word)
    return [term] if term else []


def document_terms(text: str, language: str) -> list[str]:
    """Index terms of a text written in ``language`` (one of the six codes)."""
    terms: list[str] = []
    for word in _words(text):
        script = script_of(word)
        if script != "latin":
            terms.extend(_non_latin_terms(word, script))
        elif language == "vi":
            terms.extend(_latin_vietnamese(word))
        elif (english := _latin_english(word)) is not None:
            terms.append(english)
    return terms


def question_slots(text: str) -> list[Slot]:
    """The slots of a question, in any language or a mix of them."""
    slots: list[Slot] = []
    for word in _words(text):
        script = script_of(word)
        if script != "latin":
            share = 0.5 if script == "han" else 1.0
            slots.extend(Slot(((term, 1.0),), word, share) for term in _non_latin_terms(word, script))
        else:
            readings: dict[str, float] = {}
            vietnamese = _latin_vietnamese(word)
            if _VIETNAMESE_MARKED.search(word.lower()):
                # Marked: Vietnamese for certain. The exact spelling outranks the folded one.
                if len(vietnamese) == 2:
                    readings = {vietnamese[1]: 1.0, vietnamese[0]: FOLDED_READING}
                else:
                    readings = dict.fromkeys(vietnamese, 1.0)
            elif (english := _latin_english(word)) is not None:
                # An English stop word is dropped whole: read as unmarked Vietnamese it would
                # be a syllable like "to" or "an", frequent and of no help to the match.
                readings[english] = 1.0
                for term in vietnamese:
                    readings.setdefault(term, VIETNAMESE_READING)
            if readings:
                slots.append(Slot(tuple(readings.items()), word))
    return slots
