"""The dbt project in ``sql/``, its artefacts kept under ``REUSE_DATA_HOME``.

Importing this module parses the project (``dbt parse``) when its manifest is missing or was
parsed from other project files: the asset definitions are read from the manifest, whoever loads
them (`reuse-data build`, `dagster dev`, or the daemon's code server on a fresh home).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

from dagster_dbt import DbtProject

from foundations.settings import PROJECT_ROOT, load_settings
from warehouse.contract import contracted_models
from warehouse.reference_data import dbt_vars

settings = load_settings()
# profiles.yml reads the warehouse path from the environment, so dbt and Dagster agree.
os.environ["REUSE_DATA_WAREHOUSE"] = str(settings.warehouse_path)
# dbt is installed next to this interpreter; find it even when the virtualenv is not activated.
_interpreter_bin = str(Path(sys.executable).parent)
if _interpreter_bin not in os.environ.get("PATH", "").split(os.pathsep):
    os.environ["PATH"] = _interpreter_bin + os.pathsep + os.environ.get("PATH", "")


dbt_project = DbtProject(
    project_dir=PROJECT_ROOT / "sql",
    target_path=settings.dbt_target_dir,
    prepare_project_cli_args=["parse", "--quiet", *dbt_vars(settings.base_url)],
)


def published_marts() -> tuple[str, ...]:
    """The marts a release publishes, as the project's manifest lists them (``contracted_models``)."""
    return contracted_models(json.loads(dbt_project.manifest_path.read_bytes()))


def project_files(project_dir: Path) -> list[Path]:
    """The files of the dbt project (models, seeds, macros, configuration), not dbt's own output."""
    return sorted(p for p in project_dir.rglob("*") if p.is_file() and not {"target", "logs"} & set(p.parts))


def project_fingerprint(project_dir: Path) -> str:
    """A digest of every project file's path and content: equal fingerprints, equal SQL."""
    digest = hashlib.sha256()
    for path in project_files(project_dir):
        digest.update(str(path.relative_to(project_dir)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def parsed_fingerprint_path(manifest: Path) -> Path:
    """Where the fingerprint of the project a manifest was parsed from is kept, beside it."""
    return manifest.with_name("manifest.project.sha256")


def manifest_is_stale(manifest: Path, project_dir: Path) -> bool:
    """Whether dbt must parse again: no manifest yet, or one parsed from other project files.
    Compared by content, not by time: a home copied or restored (new times on old files) must
    not pass off an old manifest as current."""
    recorded = parsed_fingerprint_path(manifest)
    if not manifest.exists() or not recorded.exists():
        return True
    return recorded.read_text(encoding="utf-8").strip() != project_fingerprint(project_dir)


def prepare_manifest(report: Callable[[str], None]) -> None:
    """Parse the dbt project when its manifest is missing or stale, and record what it was parsed from."""
    if manifest_is_stale(dbt_project.manifest_path, dbt_project.project_dir):
        report(f"parsing dbt project {dbt_project.project_dir} (dbt parse)")
        fingerprint = project_fingerprint(dbt_project.project_dir)
        dbt_project.preparer.prepare(dbt_project)
        parsed_fingerprint_path(dbt_project.manifest_path).write_text(fingerprint + "\n", encoding="utf-8")


prepare_manifest(report=lambda line: print(line, flush=True))  # in order with `reuse-data build`'s progress
