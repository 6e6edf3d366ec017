"""What keeping the questions costs an answer: the question log's writer, and an ask served from the memo.

Two measurements, in this process (no network, so that the log's share is not lost in noise):

- the writer alone: ``record_question`` for ``--records`` answers inside a running event loop,
  as the server calls it (the records gathered and appended in batches to a day file), in
  records per second and µs per record;
- ask.json answered from the memo, through the whole app, with the log off and on, in µs per
  request (best of ``--rounds``): the difference is what a request pays for its record.

    python -m benchmarks.question_log [--records 200000] [--requests 20000] [--rounds 5] [--record]

Reads the release ``CURRENT`` names under ``REUSE_DATA_HOME`` (``reuse-data build`` makes one);
the records go to a temporary folder, never to the home's questions.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import tempfile
import time
from pathlib import Path

from benchmarks.results import add_record_option, machine, markdown_table, report
from foundations.settings import load_settings
from public.openapi import ASK_PATH
from serve.app import create_app
from serve.operations.question_log import Nearest, QuestionLog, record_question
from tests.support.asgi import get_scope

QUESTION = "which flask fits a bike bottle cage"
ANSWER = {"query": QUESTION, "language": "en", "results": []}
NEAREST = Nearest("https://example.org/guides/best-insulated-bottles", 0.31, "below_threshold")


async def writer_cost(folder: Path, records: int) -> tuple[float, int]:
    """Seconds to record ``records`` answers, and the lines written."""
    log = QuestionLog(folder)
    started = time.perf_counter()
    for _ in range(records):
        record_question(log, ANSWER, NEAREST, "20261126T000000000Z")
    log.close()
    seconds = time.perf_counter() - started
    lines = sum(path.read_bytes().count(b"\n") for path in folder.glob("*.jsonl"))
    return seconds, lines


async def memo_ask_cost(folder: Path, requests: int, rounds: int) -> dict[str, float]:
    """µs per ask.json answered from the memo, best of ``rounds``, with the log off and on."""
    # The access log off (its lines would go to standard output), and the question log set per round below.
    app = create_app(dataclasses.replace(load_settings(), access_log=False, question_log=False))
    scope = get_scope(ASK_PATH, f"q={QUESTION.replace(' ', '+')}&lang=en".encode(), {"host": "127.0.0.1"})
    statuses: list[int] = []

    async def receive() -> dict:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict) -> None:
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    desk = app.state.question_desk
    logs = {"log off": None, "log on": QuestionLog(folder)}
    best = dict.fromkeys(logs, float("inf"))
    async with app.router.lifespan_context(app):
        await app(scope, receive, send)  # the answer is worked out once, then served from the memo
        for _ in range(rounds):
            for label, log in logs.items():
                app.state.question_desk = dataclasses.replace(desk, log=log)
                started = time.perf_counter()
                for _ in range(requests):
                    await app(dict(scope), receive, send)
                best[label] = min(best[label], (time.perf_counter() - started) / requests * 1e6)
    logs["log on"].close()
    recorded = sum(path.read_bytes().count(b"\n") for path in folder.glob("*.jsonl"))
    if recorded != requests * rounds:
        raise SystemExit(f"the log on recorded {recorded} questions for {requests * rounds} answers: it was not in use")
    if set(statuses) != {200}:
        raise SystemExit(f"ask.json answered {sorted(set(statuses))}, not only 200: is a release published?")
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=200_000, help="records written by the writer alone")
    parser.add_argument("--requests", type=int, default=20_000, help="ask.json requests a round")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of requests, the best kept")
    add_record_option(parser)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="question-log-") as work:
        seconds, lines = asyncio.run(writer_cost(Path(work) / "writer", args.records))
        if lines != args.records:
            raise SystemExit(f"the writer wrote {lines} lines for {args.records} records")
        asked = asyncio.run(memo_ask_cost(Path(work) / "asks", args.requests, args.rounds))
    writer = markdown_table(
        ["the writer alone", "records", "records/s", "µs per record"],
        [
            [
                "record_question, batched appends",
                args.records,
                f"{args.records / seconds:,.0f}",
                f"{seconds / args.records * 1e6:.2f}",
            ]
        ],
    )
    off = asked["log off"]
    requests = markdown_table(
        ["ask.json from the memo, in process", "µs per request (best of rounds)", "µs added"],
        [[label, f"{value:.2f}", f"{value - off:+.2f}"] for label, value in asked.items()],
    )
    body = f"{machine()}; {args.requests:,} requests a round, {args.rounds} rounds\n\n{writer}\n\n{requests}"
    report("Question log: the writer, and ask.json from the memo with and without it", body, args.record)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
