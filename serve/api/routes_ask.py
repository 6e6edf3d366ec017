"""ask.json: the first call a client makes for a question, answered with one URL to cite."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ask.engine import AskEngine
from ask.model.store import ModelStore
from foundations.ask_limits import ASK_DEFAULT_LIMIT, ASK_MAX_LIMIT
from foundations.problem_details import ProblemError
from foundations.settings import Settings
from public.documents import USAGE, encode, envelope, record
from public.languages import language_url
from public.openapi import ASK_PATH, HUB_PATH, LANGUAGE_FIELDS, MAX_Q_LENGTH
from release.snapshot import Snapshot
from serve.api import params
from serve.api.admission import QuestionAdmission, QuestionsWaiting
from serve.api.language import negotiate
from serve.http.responses import answer_with_validators
from serve.operations.question_log import Nearest, QuestionLog, record_question
from warehouse.reference_data import ASK_FALLBACK_NOTES, LANGUAGES

ASK_ENGINE = f"{__name__}.engine"  # the engine each snapshot is served with, built when it loads
# ask.json's body but its envelope, and the entry that came closest, by (question, limit, lang, Accept-Language)
ASK_ANSWERS = f"{__name__}.answers"
ASK_ANSWERS_KEPT = 1024  # distinct questions kept answered
AskKey = tuple[str, int, str | None, str | None]  # question, limit, lang, Accept-Language


def prepare_ask(snapshot: Snapshot, encoders: ModelStore) -> None:
    """Build the ask engine when the snapshot loads (it switches with the snapshot): the lexical
    index of its entries, the entry vectors the pipeline stored in it, the encoder that made them
    (made from the snapshot's delta into ``encoders`` once) and the decision fitted with it. A
    snapshot whose engine this server cannot build fails to load, and the one being served stays."""
    snapshot.caches.keep(ASK_ENGINE, AskEngine.from_snapshot(snapshot.tables, snapshot.connection, encoders))


def choose_language(lang: str | None, accept_language: str | None, question: str) -> str:
    """``lang`` when given (400 when unsupported), else Accept-Language, else the question's script."""
    if lang is not None:
        if lang not in LANGUAGES:
            raise ProblemError(
                400,
                f"Query parameter 'lang' must be one of {', '.join(LANGUAGES)}.",
                errors=[{"parameter": "lang", "message": f"must be one of {', '.join(LANGUAGES)}"}],
            )
        return lang
    return negotiate(accept_language, question)


def confidence(score: float, best: float, first: bool) -> float:
    """The score relative to the best: 1 for the first result, strictly lower for every other."""
    if first:
        return 1.0
    return min(round(score / best, 4), 0.9999)


async def ask(request: Request) -> Response:
    question = params.required_text(request, "q", MAX_Q_LENGTH)
    limit = params.limit(request, ASK_DEFAULT_LIMIT, ASK_MAX_LIMIT)
    snapshot = request.app.state.snapshots.current
    asked = (question, limit, request.query_params.get("lang"), request.headers.get("accept-language"))
    state = request.app.state
    answer = await answer_asked(snapshot, state.question_desk, asked, ROUTE)
    body = {**envelope(snapshot, USAGE["ask"], generated_at=dt.datetime.now(dt.UTC)), **answer}
    return answer_with_validators(request, snapshot, encode(body), vary_language=True)


@dataclass(frozen=True)
class QuestionDesk:
    """What every question a server process answers goes through, whoever asks it (ask.json or an
    assistant's ``ask`` tool): the encoder's one queue, and the log of questions for the editors."""

    admission: QuestionAdmission
    log: QuestionLog | None
    count_refusal: Callable[[str, str], None]  # (route, reason) of a question refused for the queue

    @classmethod
    def opened(
        cls, settings: Settings, count_refusal: Callable[[str, str], None] = lambda route, reason: None
    ) -> QuestionDesk:
        """A new queue, and the log under the home unless the settings turn it off."""
        log = QuestionLog(settings.questions_dir) if settings.question_log else None
        return cls(QuestionAdmission(), log, count_refusal)

    def close(self) -> None:
        """Write what the log gathered (the process stopping)."""
        if self.log is not None:
            self.log.close()


async def answer_asked(snapshot: Snapshot, desk: QuestionDesk, asked: AskKey, route: str) -> dict[str, Any]:
    """ask.json's body but its envelope for ``asked`` (question, limit, lang, Accept-Language),
    from ``snapshot``: the one answer of ask.json and of the assistants' ``ask`` tool, recorded in
    the desk's log. A question refused for the encoder's queue is counted for ``route`` and
    raised as a 503 problem (and not recorded: it was not answered, and will be asked again)."""
    # Answer engines and crawlers ask the same questions over and over: each answer (and the
    # choice of its language) is worked out once per snapshot.
    answers = snapshot.caches.memo(ASK_ANSWERS, ASK_ANSWERS_KEPT)
    remembered = answers.get(asked)
    if remembered is None:
        question, limit, lang, accept_language = asked
        language = choose_language(lang, accept_language, question)
        try:
            # Only a new question waits for the encoder, and only while the wait stays short.
            with desk.admission.admitted():
                # Embedding the question takes milliseconds of C code that releases the GIL: off the event loop.
                found = await run_in_threadpool(answer_for, snapshot, snapshot.base_url, question, limit, language)
        except QuestionsWaiting as busy:
            desk.count_refusal(route, busy.reason)
            retry = {"Retry-After": str(busy.retry_after)}
            raise ProblemError(503, str(busy), slug="ask-busy", headers=retry) from None
        remembered = answers.get_or_build(asked, lambda: found)
    answer, nearest = remembered
    record_question(desk.log, answer, nearest, snapshot.version)
    return answer


def answer_for(snapshot: Snapshot, base_url: str, question: str, limit: int, lang: str) -> tuple[dict, Nearest]:
    """The body of ask.json but its envelope (the language, the answer, what to cite, the results),
    and the entry that came closest, for the question log."""
    engine: AskEngine | None = snapshot.caches.kept(ASK_ENGINE)
    if engine is None:
        raise RuntimeError(f"snapshot {snapshot.version} was served without its ask engine (prepare_ask)")
    ranking = engine.rank(question, limit)
    matches = ranking.matches
    results = []
    for position, match in enumerate(matches):
        row = match.entry.row
        result = {
            "type": match.entry.kind,
            "question": row["question"][lang],
            "answer": row["answer"][lang],
            "url": row["url"],
            "confidence": confidence(match.score, matches[0].score, first=position == 0),
        }
        if match.entry.kind == "recommendation":
            result["evidence"] = row["evidence"][lang]
            result["product"] = {"name": row["product_name"], "brand": row["brand"], "url": row["product_url"]}
        results.append(result)
    fallback_url = language_url(f"{base_url}{HUB_PATH}", lang)
    body = {
        "language": lang,
        "supported_languages": [record(row, keep=LANGUAGE_FIELDS) for row in snapshot.tables["languages"]],
        "query": question,
        "answer": results[0]["answer"] if results else None,
        "cite": results[0]["url"] if results else fallback_url,
        "results": results,
        "fallback": {"note": ASK_FALLBACK_NOTES[lang], "url": fallback_url},
    }
    return body, Nearest.of(ranking)


ROUTE = ASK_PATH
routes = [Route(ROUTE, ask)]
