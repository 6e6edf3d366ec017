"""A bound on the questions waiting to be answered, by the time a new one would wait.

The encoder answers questions one batch at a time on the process's cores; a queue without a
bound makes every extra client's question later for everyone, past the timeouts answer engines
use (200 clients on one worker: 2 s each, none refused). So a question is admitted only while
the questions ahead of it would be answered within ``MAX_WAIT_SECONDS``, at the pace answers
have been leaving lately (an average of the time between consecutive answers while questions
were waiting; it slows by itself when a build trains on the same cores). Past the bound the
question is refused at once, which the server answers with 503 and ``Retry-After``: a client
asking again a second later finds the queue moved, where one kept waiting would time out.
``MAX_WAITING`` caps the count too, whatever the pace says.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

# An admitted question waits at most about this long for the ones ahead of it: under a flood
# the pace slows after admission (refusals take cores too), and 0.5 s let the accepted
# questions' p99 reach 1.3 s, past the second an answer engine allows (benchmarks/ask_load.py).
MAX_WAIT_SECONDS = 0.3
MAX_WAITING = 64  # questions being answered or waiting, whatever the pace
FIRST_PACE_SECONDS = 0.02  # seconds between answers assumed before any was timed
PACE_SMOOTHING = 0.05  # weight of the newest interval in the average (answers leave in batches of up to 8)


class QuestionsWaiting(Exception):
    """A question refused because too many are waiting: ``reason`` for the metrics, when to retry."""

    def __init__(self, reason: str, waiting: int, expected_wait: float) -> None:
        self.reason = reason  # "wait": over MAX_WAIT_SECONDS; "count": MAX_WAITING reached
        self.waiting = waiting
        self.expected_wait = expected_wait
        self.retry_after = max(1, math.ceil(expected_wait))  # whole seconds, as Retry-After takes them
        super().__init__(
            f"{waiting} questions are waiting for the ask engine (about {expected_wait:.1f} s of work); "
            f"ask again in {self.retry_after} s. Answers already given for this release are served at once."
        )


class QuestionAdmission:
    """Admits questions while they would wait under ``max_wait`` seconds; one per server process."""

    def __init__(self, max_wait: float = MAX_WAIT_SECONDS, max_waiting: int = MAX_WAITING) -> None:
        self.max_wait = max_wait
        self.max_waiting = max_waiting
        self.waiting = 0  # admitted and not yet answered
        self.pace = FIRST_PACE_SECONDS  # average seconds between consecutive answers while busy
        self._last_answer = 0.0  # when the last answer left, or the queue last became busy
        self._lock = threading.Lock()

    def expected_wait(self) -> float:
        """How long a question admitted now would wait for those ahead of it."""
        return self.waiting * self.pace

    @contextmanager
    def admitted(self) -> Iterator[None]:
        """Hold a place while a question is answered; ``QuestionsWaiting`` when none is free."""
        with self._lock:
            if self.waiting >= self.max_waiting:
                raise QuestionsWaiting("count", self.waiting, self.expected_wait())
            if self.waiting and self.expected_wait() > self.max_wait:
                raise QuestionsWaiting("wait", self.waiting, self.expected_wait())
            if not self.waiting:
                self._last_answer = time.monotonic()
            self.waiting += 1
        try:
            yield
        finally:
            with self._lock:
                now = time.monotonic()
                self.pace += PACE_SMOOTHING * ((now - self._last_answer) - self.pace)
                self._last_answer = now
                self.waiting -= 1
