"""Which language an answer comes back in: ``lang``, else Accept-Language, else the question's script.

Accept-Language is read as RFC 9110 says: q-values rank the tags, ``q=0`` means "not this
one", ``*`` stands for any language the header does not name, and a region or script subtag
(``zh-CN``, ``zh-Hans``, ``zh-TW``, ``pa-Guru``, ``ar-EG``) falls back to its language. Only
when the header names nothing we serve does the script of the question decide
(``ask.lexical.script.script_language``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ask.lexical.script import script_language
from warehouse.reference_data import DEFAULT_LANGUAGE, LANGUAGES

_Q_VALUE = re.compile(r"^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$")
_TAG = re.compile(r"^(?:\*|[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*)$")


def code_of(tag: str) -> str | None:
    """The supported code a language tag falls back to (``zh-Hant-TW`` -> ``zh``), or None."""
    primary = tag.strip().lower().split("-", 1)[0]
    return primary if primary in LANGUAGES else None


@dataclass
class AcceptLanguage:
    """A parsed Accept-Language header, reduced to the languages served."""

    quality: dict[str, float] = field(default_factory=dict)  # code -> its best q among the tags naming it
    position: dict[str, int] = field(default_factory=dict)  # code -> where the header first names it
    wildcard: tuple[float, int] | None = None  # the q and position of "*", if present

    @classmethod
    def parse(cls, header: str) -> AcceptLanguage:
        """Parse leniently: a malformed entry is skipped, never an error."""
        parsed = cls()
        for position, item in enumerate(header.split(",")[:64]):
            tag, *parameters = (part.strip() for part in item.split(";"))
            if not _TAG.match(tag):
                continue
            quality = 1.0
            for parameter in parameters:
                name, _, value = parameter.partition("=")
                if name.strip().lower() == "q":
                    value = value.strip()
                    quality = float(value) if _Q_VALUE.match(value) else -1.0
            if quality < 0:
                continue
            if tag == "*":
                parsed.wildcard = (quality, position)
                continue
            code = code_of(tag)
            if code is None:
                continue
            if quality > parsed.quality.get(code, -1.0):
                parsed.quality[code] = quality
            parsed.position.setdefault(code, position)
        return parsed

    def excluded(self, code: str) -> bool:
        """True when the header refuses ``code``: q=0 on it, or on ``*`` with no tag naming it."""
        if code in self.quality:
            return self.quality[code] == 0
        return self.wildcard is not None and self.wildcard[0] == 0

    def choose(self, preferred: str) -> str | None:
        """The acceptable language ranked first, or None when the header names none we serve.

        ``*`` stands for the languages the header does not name; among those it picks
        ``preferred`` (the question's own language) first, then English, then the rest in order.
        """
        candidates = [(q, -self.position[code], code) for code, q in self.quality.items() if q > 0]
        if self.wildcard is not None and self.wildcard[0] > 0:
            unnamed = [code for code in (preferred, DEFAULT_LANGUAGE, *LANGUAGES) if code not in self.quality]
            if unnamed:
                candidates.append((self.wildcard[0], -self.wildcard[1], unnamed[0]))
        return max(candidates)[2] if candidates else None


def negotiate(accept_language: str | None, question: str) -> str:
    """The answer language when ``lang`` is not given: Accept-Language, then the script of the question.

    A language the header refuses (q=0) is not chosen from the script either: English takes
    its place, or the first language the header does not refuse.
    """
    header = AcceptLanguage.parse(accept_language or "")
    from_script = script_language(question)
    chosen = header.choose(preferred=from_script)
    if chosen is not None:
        return chosen
    for code in (from_script, DEFAULT_LANGUAGE, *LANGUAGES):
        if not header.excluded(code):
            return code
    return from_script  # every language refused: RFC 9110 lets us answer in our default anyway
