"""The backup commands: `reuse-data backup DEST` and `reuse-data restore SRC [--force]`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from foundations.settings import load_settings
from reuse_data.backup import BACKUP_MANIFEST, BackupError, BackupManifest, back_up, parts, restore


def _print(line: str) -> None:
    print(line, file=sys.__stdout__, flush=True)


def _summary(manifest: BackupManifest) -> list[str]:
    """One line a part: what it holds and where it lives."""
    lines = []
    for name, source in manifest.sources.items():
        files = manifest.part_files(name)
        held = f"{len(files)} files, {sum(file.size for file in files) / 1e6:.1f} MB" if files else "nothing"
        lines.append(f"  {name:<11} {held:<24} {source}")
    return lines


def command_backup(args: argparse.Namespace) -> int:
    destination = Path(args.destination).expanduser().resolve()
    try:
        manifest = back_up(load_settings(), destination)
    except BackupError as error:
        _print(f"error: {error}")
        return 2
    _print(f"backed up {manifest.home} into {destination} ({BACKUP_MANIFEST} lists every file and its sha256):")
    for line in _summary(manifest):
        _print(line)
    return 0


def command_restore(args: argparse.Namespace) -> int:
    source = Path(args.source).expanduser().resolve()
    settings = load_settings()
    try:
        manifest = restore(settings, source, force=args.force)
    except BackupError as error:
        _print(f"error: {error}")
        return 2
    _print(f"restored the backup made of {manifest.home} at {manifest.made_at}, every file checked:")
    for part in parts(settings):
        if manifest.part_files(part.name):
            _print(f"  {part.name:<11} now in {part.source}")
    _print("testers' tokens work as they did when it was made; `reuse-data build` makes the warehouse and releases")
    return 0


def add_backup_commands(commands: argparse._SubParsersAction) -> None:
    """`backup` and `restore`, on the `reuse-data` parser."""
    backup = commands.add_parser(
        "backup",
        help="back up the intake, the questions asked and the ask models into a new folder",
        description="Copy what a build cannot make again into the new folder DEST: the intake (testers, "
        "receipts and archived sheets; its database with SQLite's online backup, so a running intake need "
        "not stop), the questions asked (REUSE_DATA_HOME/questions) and the ask models (REUSE_DATA_ASK_MODELS). "
        f"{BACKUP_MANIFEST} in it lists every file with its size and sha256; the folder appears only once "
        "complete. The warehouse and the releases are not in it: `reuse-data build` makes them from the inputs.",
    )
    backup.add_argument(
        "destination", metavar="DEST", help="a folder that does not exist yet, e.g. /backups/2026-12-07"
    )
    backup.set_defaults(handler=command_backup)

    back = commands.add_parser(
        "restore",
        help="restore a backup made by `reuse-data backup` onto this home",
        description="Check every file of the backup SRC against its manifest, then put each part it holds in "
        "place whole: the intake and the questions under REUSE_DATA_HOME, the ask models in "
        "REUSE_DATA_ASK_MODELS. A damaged backup restores nothing. A part that already holds files is "
        "replaced only with --force; stop the intake and the servers of this home first.",
    )
    back.add_argument("source", metavar="SRC", help="a backup folder (the one holding backup.json)")
    back.add_argument(
        "--force", action="store_true", help="replace the intake, questions or ask models this home already holds"
    )
    back.set_defaults(handler=command_restore)
