"""A process that embeds sets how its encoder's threads run and wait, whatever its environment says:
each process here inherits settings that would make it spin (``tests.support.openmp.HOSTILE``)
and must load its OpenMP runtime with the project's instead."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ask.dense.threads import WAIT_POLICY, cores, use_encoder_threads
from tests.support.openmp import HOSTILE, displayed_settings


def loaded_settings(script: str) -> list[dict[str, str]]:
    """The OpenMP settings each runtime the script loaded printed, in a process with ``HOSTILE``."""
    completed = subprocess.run(
        [sys.executable, "-c", script], env={**os.environ, **HOSTILE}, capture_output=True, text=True, timeout=300
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    return displayed_settings(completed.stderr)


def test_the_encoder_loads_with_sleeping_waiters_on_every_core():
    [settings] = loaded_settings("from ask.dense.encoder import Encoder; Encoder().query('which flask keeps tea hot')")
    assert settings["OMP_WAIT_POLICY"] == WAIT_POLICY
    assert settings["OMP_NUM_THREADS"] == str(cores())


def test_a_process_may_ask_for_fewer_threads_before_its_encoder_loads():
    script = (
        "from ask.dense.threads import use_encoder_threads; use_encoder_threads(1); "
        "from ask.dense.encoder import Encoder; Encoder().query('which flask keeps tea hot')"
    )
    [settings] = loaded_settings(script)
    assert settings["OMP_WAIT_POLICY"] == WAIT_POLICY and settings["OMP_NUM_THREADS"] == "1"


def test_training_loads_pytorch_with_sleeping_waiters():
    pytest.importorskip("torch")
    every = loaded_settings("import ask.training.trainer, torch; torch.ones(64, 64) @ torch.ones(64, 64)")
    assert every and all(settings["OMP_WAIT_POLICY"] == WAIT_POLICY for settings in every)


def test_an_encoder_needs_at_least_one_thread():
    with pytest.raises(ValueError, match="at least one thread"):
        use_encoder_threads(0)
