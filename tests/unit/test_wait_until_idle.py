"""The serving benchmark waits for a server to stop working on abandoned requests before measuring it."""

import subprocess
import sys

from benchmarks.load import cpu_seconds, wait_until_idle

# Busy for 1.5 s of CPU, however many other processes share the cores (the suite runs beside itself), then idle.
BUSY_THEN_IDLE = "import time\nend = time.process_time() + 1.5\nwhile time.process_time() < end: pass\ntime.sleep(60)"


def test_a_busy_process_is_waited_for_until_it_goes_idle():
    process = subprocess.Popen([sys.executable, "-c", BUSY_THEN_IDLE])
    try:
        waited = wait_until_idle(process.pid, quiet=0.5, timeout=30)
        assert 1.0 <= waited < 10 and cpu_seconds(process.pid) >= 1.0
        assert wait_until_idle(process.pid, quiet=0.5, timeout=30) < 1.0  # idle now: one quiet spell
    finally:
        process.kill()
        process.wait()
