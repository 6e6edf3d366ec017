"""What OpenMP runtimes say they loaded with: the settings of the encoder's threads, as tests see them.

With ``OMP_DISPLAY_ENV`` true, each OpenMP runtime prints the settings it loaded with to standard
error when it loads. ``HOSTILE`` is an environment whose settings would make the encoder spin on
every core, which a process that embeds must override.
"""

from __future__ import annotations

import re

HOSTILE = {"OMP_WAIT_POLICY": "ACTIVE", "OMP_NUM_THREADS": "7", "OMP_DISPLAY_ENV": "TRUE"}


def displayed_settings(output: str) -> list[dict[str, str]]:
    """Each ``OPENMP DISPLAY ENVIRONMENT`` block of ``output``, as its variables' values."""
    blocks = re.findall(r"OPENMP DISPLAY ENVIRONMENT BEGIN(.*?)OPENMP DISPLAY ENVIRONMENT END", output, re.S)
    return [dict(re.findall(r"(OMP_\w+) = '([^']*)'", block)) for block in blocks]
