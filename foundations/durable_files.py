"""Files written whole or not at all, and kept once written: the one way this project replaces a file.

The content goes to a staging file beside the target, is synced to disk, and is renamed over
the target; then the folder is synced, so the new name survives a power cut too. A reader
sees the old file or the new one, never half of one. If anything fails on the way, the
staging file is removed before the error goes on; only a process killed outright can leave
one, under the name its caller chose so that it knows what to clean.
"""

from __future__ import annotations

import os
from pathlib import Path


def fsync_directory(path: Path) -> None:
    """Make the names in ``path`` (a folder) durable: a rename in it survives a power cut."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def replace_durably(path: Path, content: bytes, staging: Path, mode: int | None = None) -> None:
    """Make ``path`` hold ``content``, through ``staging`` (in the same folder); ``mode`` if given."""
    try:
        with staging.open("wb") as handle:
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            staging.chmod(mode)
        os.replace(staging, path)
    finally:
        staging.unlink(missing_ok=True)  # gone already once renamed
    fsync_directory(path.parent)
