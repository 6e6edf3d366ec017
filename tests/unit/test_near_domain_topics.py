"""The near-domain topics experiment's arms write what they say, into a copy, and its held-out
topics reach nothing but the test split."""

from __future__ import annotations

import csv
import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.near_domain_topics import ARMS, CANDIDATE, HELD_OUT, TOPICS, apply_arm, topics
from foundations.settings import PROJECT_ROOT
from inputs.ask_inputs import FITTED_SPLIT, HELD_OUT_SPLIT, LABELLED_SETS, load_questions
from warehouse.reference_data import LANGUAGES

SEED = Path("sql/seeds/ask_uncovered_topics.csv")


def checkout_copy(target: Path) -> Path:
    """The parts of a checkout an arm writes: the demo's labelled sets and the seeds."""
    for part in (Path("demo") / LABELLED_SETS["questions"], SEED.parent):
        shutil.copytree(PROJECT_ROOT / part, target / part)
    return target


def seed_rows(checkout: Path) -> list[dict[str, str]]:
    with (checkout / SEED).open(encoding="utf-8", newline="") as seed:
        return list(csv.DictReader(seed))


def test_the_topics_are_new_complete_and_split_by_their_slug():
    seeded = {row["topic"] for row in seed_rows(PROJECT_ROOT)}
    rows = topics(HELD_OUT) + topics(CANDIDATE)
    names = {row["topic"] for row in rows}
    assert len(names) >= 100 and not names & seeded
    for name in names:
        languages = [row["language"] for row in rows if row["topic"] == name]
        assert set(languages) == set(LANGUAGES) and all(languages.count(lang) >= 2 for lang in LANGUAGES), name
    held = {row["topic"] for row in topics(HELD_OUT)}
    assert held == {name for name in names if int(hashlib.sha256(name.encode()).hexdigest(), 16) % 5 == 0}
    questions = [row["question"] for row in rows]
    assert len(questions) == len(set(questions))
    labelled = {
        q.question
        for split in (FITTED_SPLIT, HELD_OUT_SPLIT)
        for q in load_questions(PROJECT_ROOT / "demo", split, LANGUAGES)
    }
    assert not labelled & set(questions)  # none copied from the labelled sets


@pytest.mark.parametrize("arm", ARMS)
def test_an_arm_writes_the_held_out_topics_to_the_test_split_and_the_rest_where_it_says(arm: str, tmp_path: Path):
    checkout = checkout_copy(tmp_path / "checkout")
    apply_arm(checkout, arm, say=lambda line: None)
    held, candidates = topics(HELD_OUT), topics(CANDIDATE)
    test = load_questions(checkout / "demo", HELD_OUT_SPLIT, LANGUAGES, sets=("questions",))
    dev = load_questions(checkout / "demo", FITTED_SPLIT, LANGUAGES, sets=("questions",))
    seed = {row["question"] for row in seed_rows(checkout)}
    assert {row["question"] for row in held} <= {q.question for q in test if not q.expected}
    held_questions = {row["question"] for row in held}
    assert not held_questions & seed and not held_questions & {q.question for q in dev}
    candidate_questions = {row["question"] for row in candidates}
    assert (candidate_questions <= seed) == (arm == "seed")
    assert (candidate_questions <= {q.question for q in dev if not q.expected}) == (arm == "dev")
    apply_arm(checkout, arm, say=lambda line: None)  # again: nothing twice in a split
    again = load_questions(checkout / "demo", HELD_OUT_SPLIT, LANGUAGES, sets=("questions",))
    assert len(again) == len(test)


def test_the_command_refuses_this_repository(tmp_path: Path):
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.near_domain_topics", "seed", "--checkout", str(PROJECT_ROOT)],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and "clone it first" in done.stderr
    assert TOPICS.exists()
