"""The scripts of the six languages served: which script a word is in, and which language a
question's script points to.

The lexical analysis splits and reads words by these patterns (``ask.lexical.analysis``); the
server falls back on ``script_language`` when a client names no language it serves.
"""

from __future__ import annotations

import re
from collections import Counter

from warehouse.reference_data import DEFAULT_LANGUAGE

HAN_RANGE = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
HAN = re.compile(f"[{HAN_RANGE}]")
GREEK = re.compile(r"[\u0370-\u03ff\u1f00-\u1fff]")
ARABIC = re.compile(r"[\u0600-\u06ff\u0750-\u077f\ufb50-\ufdff\ufe70-\ufeff]")
GURMUKHI = re.compile(r"[\u0a00-\u0a7f]")
# A word: letters and digits, with the combining marks of the scripts served (Python's \w
# stops at Gurmukhi vowel signs and Arabic harakat, which are marks, not letters).
WORD = re.compile(r"[\w\u0300-\u036f\u064b-\u065f\u0670\u06d6-\u06ed\u0a00-\u0a7f]+")
# Every letter with a diacritic that Vietnamese writes. Some are Vietnamese's alone (ă â đ ê
# ô ơ ư, a hook above, a dot below); acute, grave and tilde are shared with other languages.
VIETNAMESE_LETTERS = "àáảãạăằắẳẵặâầấẩẫậèéẻẽẹêềếểễệìíỉĩịòóỏõọôồốổỗộơờớởỡợùúủũụưừứửữựỳýỷỹỵđ"
_VIETNAMESE_ONLY = re.compile(r"[ăâđêôơư\u1ea0-\u1ef9]")
_MARKED_WORD = re.compile(f"\\w*[{VIETNAMESE_LETTERS}]\\w*")
_ACCENTED_LATIN = re.compile(r"[\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f]")  # Latin-1 and Extended-A/B letters
_SCRIPTS = (("zh", HAN), ("el", GREEK), ("ar", ARABIC), ("pa", GURMUKHI))
_WORD_SCRIPTS = (("han", HAN), ("greek", GREEK), ("arabic", ARABIC), ("gurmukhi", GURMUKHI))


def script_of(word: str) -> str:
    """The script of a word, by its first character: han, greek, arabic, gurmukhi or latin."""
    first = word[0]
    for name, pattern in _WORD_SCRIPTS:
        if pattern.match(first):
            return name
    return "latin"


def script_language(text: str) -> str:
    """The language the question's script points to.

    The non-Latin script with the most characters wins (a brand name in Latin letters does
    not turn a Chinese question into an English one); Latin text with Vietnamese letters or
    tone marks is Vietnamese (``looks_vietnamese``); anything else is English.
    """
    counts = Counter({code: len(pattern.findall(text)) for code, pattern in _SCRIPTS})
    code, count = counts.most_common(1)[0]
    if count:
        return code
    return "vi" if looks_vietnamese(text) else DEFAULT_LANGUAGE


def looks_vietnamese(text: str) -> bool:
    """Latin text whose marks are all Vietnamese, with a letter only Vietnamese writes or two marked words.

    "Bình nào?" is Vietnamese; "a café mug" (one marked word) and "crème brûlée" (û is not
    Vietnamese) are not.
    """
    lower = text.lower()
    if any(c not in VIETNAMESE_LETTERS for c in _ACCENTED_LATIN.findall(lower)):
        return False
    return bool(_VIETNAMESE_ONLY.search(lower)) or len(_MARKED_WORD.findall(lower)) >= 2
