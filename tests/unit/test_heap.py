"""What a load freed goes back to the operating system (``foundations.heap``)."""

from __future__ import annotations

import subprocess
import sys

FREED = """
from foundations.heap import give_back_free_memory

def resident_mb():
    return int(next(line for line in open("/proc/self/status") if line.startswith("VmRSS")).split()[1]) / 1024

whole = bytearray(b"\x01") * (20 * 2**20)  # read at once and dropped: glibc keeps smaller blocks on its heap after
del whole
parts = [bytearray(b"\x01") * 2**20 for _ in range(100)]  # written: resident
kept = bytearray(2**16)  # what the load keeps, above what it dropped: the heap cannot shrink past it
del parts
before = resident_mb()
give_back_free_memory()
print(round(before - resident_mb()))
"""


def test_the_memory_a_load_freed_is_given_back():
    completed = subprocess.run([sys.executable, "-c", FREED], capture_output=True, text=True, timeout=60, check=True)
    assert int(completed.stdout) >= 50, completed.stdout
