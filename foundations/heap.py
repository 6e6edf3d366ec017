"""Giving the memory a load freed back to the operating system.

Loading a release (its tables, the ask engine's index and vectors, the encoder's tokenizer) builds
and drops a great many small objects. The C allocator keeps what they freed for later use, so a
server would hold tens of megabytes it no longer uses for as long as it runs: about 20 MB after the
encoder alone loads. glibc gives it back on request (``malloc_trim``); elsewhere this does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from collections.abc import Callable


@functools.cache
def _trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to ask for
        return None


def give_back_free_memory() -> None:
    """Return the heap's free pages to the operating system, where the C library can."""
    trim = _trim()
    if trim is not None:
        trim(0)
