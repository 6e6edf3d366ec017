"""Near-domain topics beyond the seed: does more of them make ask refuse better? (issue 54)

``near_domain_topics.csv`` holds 115 topics that the library does not cover and the seed
``ask_uncovered_topics`` does not have (mostly products next to the reviewed categories), each
with three questions in every language, written for this and never taken from a test set. A
fifth of them, chosen by their slug's sha256 (``part`` = ``held-out``), are never used for
anything but scoring; the rest (``candidate``) are what an arm adds to the engine's data:

- ``test``: only the held-out topics, as no-match questions of the questions' test split (the
  baseline of the other two, on the same test);
- ``seed``: ``test``, and the candidates in the seed (the uncovered-topic refusal);
- ``dev``: ``test``, and the candidates as no-match questions of the questions' dev split
  (what the decision is fitted on).

Each arm writes into a checkout's copy (``--checkout``): build it, then score it, e.g.::

    git clone . /tmp/arm && (cd /tmp/arm && make install)
    .venv/bin/python -m benchmarks.near_domain_topics seed --checkout /tmp/arm
    (cd /tmp/arm && .venv/bin/reuse-data build)

RESULTS.md ("Near-domain topics beyond the seed") has what the three arms measured.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
from collections.abc import Callable
from pathlib import Path

from inputs.ask_inputs import FITTED_SPLIT, HELD_OUT_SPLIT, LABELLED_SETS, Split
from warehouse.contract import ASK_UNCOVERED_TOPICS_SEED
from warehouse.reference_data import LANGUAGES

TOPICS = Path(__file__).with_name("near_domain_topics.csv")
ARMS = ("test", "seed", "dev")
HELD_OUT, CANDIDATE = "held-out", "candidate"
SEED_COLUMNS = ("topic", "kind", "language", "question")


def topics(part: str) -> list[dict[str, str]]:
    with TOPICS.open(encoding="utf-8", newline="") as rows:
        return [row for row in csv.DictReader(rows) if row["part"] == part]


def add_no_match_questions(checkout: Path, split: Split, rows: list[dict[str, str]]) -> int:
    """Append ``rows`` to the questions set's ``split`` as no-match questions of their topic's kind
    (near-domain or off-topic, as that set names them); how many were new to it."""
    added = 0
    for language in LANGUAGES:
        path = checkout / "demo" / LABELLED_SETS["questions"] / split / f"{language}.jsonl"
        lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        present = {json.loads(line)["question"] for line in lines}
        for row in rows:
            if row["language"] == language and row["question"] not in present:
                lines.append(
                    json.dumps({"question": row["question"], "expected": [], "kind": row["kind"]}, ensure_ascii=False)
                )
                added += 1
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return added


def add_to_seed(checkout: Path, rows: list[dict[str, str]]) -> int:
    """Add ``rows`` to the uncovered topics' seed, kept in its order (kind, topic, language)."""
    path = checkout / "sql" / "seeds" / f"{ASK_UNCOVERED_TOPICS_SEED}.csv"
    with path.open(encoding="utf-8", newline="") as seed:
        existing = list(csv.DictReader(seed))
    order = {language: index for index, language in enumerate(LANGUAGES)}
    merged = existing + [{column: row[column] for column in SEED_COLUMNS} for row in rows]
    merged.sort(key=lambda row: (row["kind"], row["topic"], order[row["language"]]))
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=SEED_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(merged)
    path.write_text(text.getvalue(), encoding="utf-8")
    return len(rows)


def apply_arm(checkout: Path, arm: str, say: Callable[[str], None] = print) -> None:
    held_out = add_no_match_questions(checkout, HELD_OUT_SPLIT, topics(HELD_OUT))
    say(f"{held_out} held-out questions added to the questions' {HELD_OUT_SPLIT} split")
    if arm == "seed":
        say(f"{add_to_seed(checkout, topics(CANDIDATE))} candidate questions added to the seed")
    elif arm == "dev":
        added = add_no_match_questions(checkout, FITTED_SPLIT, topics(CANDIDATE))
        say(f"{added} candidate questions added to the questions' {FITTED_SPLIT} split")


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.near_domain_topics",
        description="Write one arm of the near-domain topics experiment into a checkout's copy (never this "
        "one): build that copy with `reuse-data build`, then compare the decision's test figures and the "
        "sealed set's score across arms.",
    )
    parser.add_argument("arm", choices=ARMS, help="test (held-out topics only), seed or dev (see the module's doc)")
    parser.add_argument("--checkout", type=Path, required=True, help="a clone of this repository to write into")
    args = parser.parse_args()
    checkout = args.checkout.resolve()
    if checkout == Path(__file__).resolve().parents[1]:
        parser.error("--checkout is this repository: clone it first (git clone . /tmp/arm)")
    if not (checkout / "sql" / "seeds").is_dir() or not (checkout / "demo").is_dir():
        parser.error(f"{checkout} is not a checkout of reuse-data (no sql/seeds/ or demo/)")
    apply_arm(checkout, args.arm)


if __name__ == "__main__":
    main()
