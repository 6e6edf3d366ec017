"""The dbt project's reference lists, read from its seeds where Python needs the same list.

A seed is the one place an enumeration is written: dbt's tests check the marts against it, the
data dictionary enumerates it, and the code below reads it rather than restating it.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from warehouse.relation_keys import KEY_COMMENT
from warehouse.test_scope import TEST_SCOPE_TABLE

SEEDS_DIR = Path(__file__).resolve().parents[1] / "sql" / "seeds"


def seed_rows(seed: str) -> list[dict[str, str]]:
    """The rows of the seed ``seed``, in its order."""
    with (SEEDS_DIR / f"{seed}.csv").open(newline="", encoding="utf-8") as rows:
        return list(csv.DictReader(rows))


# The languages every translated text carries, in the order clients see them.
LANGUAGES: tuple[str, ...] = tuple(
    row["code"] for row in sorted(seed_rows("supported_languages"), key=lambda row: int(row["position"]))
)
# The language a text is in when no other is asked for, and the one every translated text has:
# the first of the seed's order.
DEFAULT_LANGUAGE = LANGUAGES[0]
# The site's sections (the first segment of a page's path), in the order the site lists them.
SECTIONS: tuple[str, ...] = tuple(row["section"] for row in seed_rows("sections"))
# What ask.json says beside its fallback page when nothing answers, by language.
ASK_FALLBACK_NOTES: dict[str, str] = {row["language"]: row["note"] for row in seed_rows("ask_fallback_notes")}


def dbt_vars(base_url: str) -> list[str]:
    """The variables of every dbt invocation, as its arguments: the public address every URL is
    made on, the languages every translated field carries (from their seed, so the list is
    written once), the table that says which rows the tests read (``warehouse.test_scope``) and
    how a table's comment holds a key (``warehouse.relation_keys``).
    The same for the parse and each build, so a build's dbt parses only what changed."""
    variables = {
        "base_url": base_url,
        "languages": list(LANGUAGES),
        "test_scope": TEST_SCOPE_TABLE,
        "key_comment": KEY_COMMENT,
    }
    return ["--vars", json.dumps(variables)]
