"""A text in the language asked for, and the address of a page in a language: one rule for the
site's pages, the sitemaps' alternates and ask.json's fallback link."""

from __future__ import annotations

from typing import Any

from warehouse.reference_data import DEFAULT_LANGUAGE


def translated(value: Any, lang: str) -> str:
    """The ``lang`` text of a translated field ({code: text}), else its English; a plain string as it is."""
    if isinstance(value, dict):
        return value.get(lang) or value.get(DEFAULT_LANGUAGE) or ""
    return value or ""


def language_url(url: str, lang: str) -> str:
    """Where ``url`` is served in ``lang``: the default language at the address itself, any other with ``?lang=``."""
    return url + language_suffix(lang)


def language_suffix(lang: str) -> str:
    """What ``language_url`` adds to an address for ``lang``: the same for every address, so that a
    sitemap of 100,000 pages works it out once a language."""
    return "" if lang == DEFAULT_LANGUAGE else f"?lang={lang}"
