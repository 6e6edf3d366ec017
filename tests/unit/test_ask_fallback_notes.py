"""ask.json's fallback note is a translated text like the others: one per supported language, from
its seed, and what the server says."""

from __future__ import annotations

from serve.api import routes_ask
from warehouse.reference_data import ASK_FALLBACK_NOTES, LANGUAGES, seed_rows


def test_every_supported_language_has_one_fallback_note():
    rows = seed_rows("ask_fallback_notes")
    assert [row["language"] for row in rows] == list(LANGUAGES)
    assert all(row["note"].strip() for row in rows)


def test_the_server_reads_the_notes_from_the_seed_and_keeps_no_copy_of_its_own():
    assert routes_ask.ASK_FALLBACK_NOTES is ASK_FALLBACK_NOTES
    assert not [name for name in vars(routes_ask) if "FALLBACK" in name and name != "ASK_FALLBACK_NOTES"]
