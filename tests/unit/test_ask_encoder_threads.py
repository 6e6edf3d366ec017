"""A process that embeds sets how its encoder's threads run and wait, whatever its environment says:
each process here inherits settings that would make it spin (``tests.support.openmp.HOSTILE``)
and must load its OpenMP runtime with the project's instead."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ask.encoder_threads import WAIT_POLICY, threads_per_process, use_encoder_threads
from tests.support.openmp import HOSTILE, displayed_settings


def loaded_settings(script: str) -> list[dict[str, str]]:
    """The OpenMP settings each runtime the script loaded printed, in a process with ``HOSTILE``."""
    completed = subprocess.run(
        [sys.executable, "-c", script], env={**os.environ, **HOSTILE}, capture_output=True, text=True, timeout=300
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    return displayed_settings(completed.stderr)


def test_the_encoder_loads_with_sleeping_waiters_on_every_core():
    [settings] = loaded_settings("from ask.encoder import Encoder; Encoder().query('which flask keeps tea hot')")
    assert settings["OMP_WAIT_POLICY"] == WAIT_POLICY
    assert settings["OMP_NUM_THREADS"] == str(threads_per_process(1))


def test_a_server_worker_takes_its_share_of_the_cores():
    script = (
        "from ask.encoder_threads import use_encoder_threads; use_encoder_threads(1); "
        "from ask.encoder import Encoder; Encoder().query('which flask keeps tea hot')"
    )
    [settings] = loaded_settings(script)
    assert settings["OMP_WAIT_POLICY"] == WAIT_POLICY and settings["OMP_NUM_THREADS"] == "1"


def test_training_loads_pytorch_with_sleeping_waiters():
    pytest.importorskip("torch")
    every = loaded_settings("import ask.training.trainer, torch; torch.ones(64, 64) @ torch.ones(64, 64)")
    assert every and all(settings["OMP_WAIT_POLICY"] == WAIT_POLICY for settings in every)


def test_threads_are_the_cores_shared_out_at_least_one():
    cores = len(os.sched_getaffinity(0))
    assert threads_per_process(1) == cores
    assert threads_per_process(cores) == 1
    assert threads_per_process(cores * 4) == 1
    with pytest.raises(ValueError, match="at least one thread"):
        use_encoder_threads(0)
