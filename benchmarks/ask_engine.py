"""The ask engine's quality and speed, side by side with a flat BM25 baseline in the same run.

Quality: the labelled questions of ``tests/ask_eval/`` (per language and overall: top-1
accuracy, MRR@5, no-match false-positive and false-negative rates; the no-match thresholds
are calibrated on the same questions, so the held-out columns show them calibrated on half
and scored on the other half). Speed: in-process
search latency, p50 and p99, over the same questions, at the size of the current snapshot
and at ``--entries`` (default 20,000) synthetic entries made from it.

The baseline is the same analysis with the refinements off (``serve.ask.index.FLAT``):
every field weighs the same, no boost for bench evidence, no typo correction.

    python benchmarks/ask_engine.py [--entries 20000] [--rounds 5] [--record]

Reads the snapshot ``CURRENT`` names under ``REUSE_DATA_HOME`` (``make bench-ask`` builds it).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.results import machine, record  # noqa: E402
from reuse_data.settings import load_settings  # noqa: E402
from serve.ask.evaluation import (  # noqa: E402
    TARGET_FALSE_POSITIVE_RATE,
    TARGET_TOP1_OVERALL,
    TARGET_TOP1_PER_LANGUAGE,
    Scores,
    calibrate_min_scores,
    cross_validated,
    latencies_ms,
    load_questions,
    percentile,
    rankings,
    run,
    score,
)
from serve.ask.index import FLAT, TUNED, AskIndex, Tuning  # noqa: E402
from serve.snapshot import load_snapshot  # noqa: E402
from warehouse.snapshots import current_version  # noqa: E402

SYLLABLES = ("ka", "lo", "mer", "vin", "tor", "sa", "qui", "dra", "nel", "bo", "zu", "fen", "ri", "hal", "pe")


def invented_name(number: int) -> str:
    """A brand-like word per number (Kalomer, Vintorsa...), so the synthetic vocabulary grows."""
    syllables = []
    while True:
        number, digit = divmod(number, len(SYLLABLES))
        syllables.append(SYLLABLES[digit])
        if number == 0:
            break
    return "".join(syllables).capitalize()


def synthetic_tables(tables: Mapping[str, list[dict[str, Any]]], size: int) -> tuple[list[dict], list[dict]]:
    """``size`` entries: the snapshot's own, then copies under invented product and brand names."""
    recommendations, answers = tables["recommendations"], tables["answers"]
    originals = [("r", row) for row in recommendations] + [("a", row) for row in answers]
    out_recommendations, out_answers = list(recommendations), list(answers)
    for number in range(size - len(originals)):
        kind, row = originals[number % len(originals)]
        brand, model = invented_name(number), invented_name(number * 7 + 3)
        copy = dict(row, question={k: f"{v} {brand} {model}" for k, v in row["question"].items()})
        if kind == "r":
            out_recommendations.append(dict(copy, brand=brand, product_name=f"{brand} {model}"))
        else:
            out_answers.append(copy)
    return out_recommendations, out_answers


def build(tables: Mapping[str, list[dict[str, Any]]], tuning: Tuning, size: int | None = None) -> AskIndex:
    recommendations, answers = (
        synthetic_tables(tables, size) if size else (tables["recommendations"], tables["answers"])
    )
    return AskIndex.from_tables(recommendations, answers, tables["categories"], tuning)


def quality_table(tuned: list[Scores], held_out: list[Scores], flat: list[Scores]) -> str:
    lines = [
        "| language | questions (answerable + unrelated) | top-1 | MRR@5 | false positives | false negatives "
        "| held-out top-1 | held-out false positives | baseline top-1 | baseline MRR@5 | baseline false positives |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for ours, unseen, base in zip(tuned, held_out, flat, strict=True):
        lines.append(
            f"| {ours.label} | {ours.answerable} + {ours.unrelated} | {ours.top1:.3f} | {ours.mrr:.3f} "
            f"| {ours.false_positive_rate:.3f} | {ours.false_negative_rate:.3f} "
            f"| {unseen.top1:.3f} | {unseen.false_positive_rate:.3f} "
            f"| {base.top1:.3f} | {base.mrr:.3f} | {base.false_positive_rate:.3f} |"
        )
    return "\n".join(lines)


def latency_rows(tables: Mapping[str, list[dict[str, Any]]], questions: list[str], entries: int, rounds: int) -> str:
    lines = [
        "| index | entries | build (s) | p50 (ms) | p99 (ms) | baseline p50 (ms) | baseline p99 (ms) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for label, size in (("demo snapshot", None), ("synthetic", entries)):
        started = time.perf_counter()
        tuned = build(tables, TUNED, size)
        built = time.perf_counter() - started
        flat = build(tables, FLAT, size)
        ours, base = latencies_ms(tuned, questions, rounds), latencies_ms(flat, questions, rounds)
        figures = [percentile(ours, 0.5), percentile(ours, 0.99), percentile(base, 0.5), percentile(base, 0.99)]
        cells = [label, str(len(tuned.entries)), f"{built:.1f}", *(f"{f:.2f}" for f in figures)]
        lines.append("| " + " | ".join(cells) + " |")
        print(f"  timed {label} ({len(tuned.entries)} entries)", file=sys.stderr)
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=int, default=20_000, help="size of the synthetic index (default 20000)")
    parser.add_argument("--rounds", type=int, default=5, help="passes over the questions when timing (default 5)")
    parser.add_argument("--record", action="store_true", help="append the results to benchmarks/RESULTS.md")
    args = parser.parse_args()

    store = load_settings().snapshots_dir
    version = current_version(store)
    if version is None:
        sys.exit(f"no published snapshot under {store}: run `make build` (or `make bench-ask`) first")
    tables = load_snapshot(store, version).tables
    questions = load_questions()
    print(f"snapshot {version}: scoring {len(questions)} labelled questions", file=sys.stderr)
    tuned_index = build(tables, TUNED)
    tuned = score(run(tuned_index, questions))
    ranked = rankings(tuned_index, questions)
    held_out = cross_validated(ranked, TUNED.sure_coverage)
    calibrated = calibrate_min_scores(ranked, TUNED.sure_coverage)
    flat = score(run(build(tables, FLAT), questions))
    report = "\n\n".join(
        [
            f"Machine: {machine()}. Snapshot {version}. "
            f"Command: `python benchmarks/ask_engine.py --entries {args.entries}`.",
            quality_table(tuned, held_out, flat),
            "No-match score thresholds, per language of the question: shipped in `TUNED` "
            f"{dict(TUNED.min_score)}; calibrated on this run {calibrated}. The held-out columns "
            "calibrate them on half of each language's questions and score the other half (two folds).",
            latency_rows(tables, [q.question for q in questions], args.entries, args.rounds),
        ]
    )
    overall = tuned[-1]
    verdict = (
        f"Targets: top-1 >= {TARGET_TOP1_OVERALL} overall ({overall.top1:.3f}) and >= {TARGET_TOP1_PER_LANGUAGE} "
        f"in every language (lowest {min(s.top1 for s in tuned[:-1]):.3f}); false positives <= "
        f"{TARGET_FALSE_POSITIVE_RATE} ({overall.false_positive_rate:.3f})."
    )
    print(report + "\n\n" + verdict)
    if args.record:
        print(f"appended to {record('Ask engine', report + chr(10) * 2 + verdict)}", file=sys.stderr)


if __name__ == "__main__":
    main()
