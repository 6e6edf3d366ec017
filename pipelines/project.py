"""The dbt project in ``sql/``, for one set of settings: its profile, its artefacts and the dbt it runs.

Nothing happens at import. ``dbt_project(settings)`` writes the project's profile from the
settings (``dbt_profile``: the build warehouse and DuckDB's memory cap, under the home, so dbt and
Dagster agree without a variable passed between them) and parses the project (``dbt parse``)
when its manifest is missing or was parsed from other project files: the asset definitions are
read from the manifest, whoever loads them (`reuse-data build`, `dagster dev`, or the daemon's
code server on a fresh home).
"""

from __future__ import annotations

import importlib.metadata
import json
import sys
from collections.abc import Callable
from functools import cached_property
from pathlib import Path

from dagster_dbt import DbtCliResource, DbtProject
from packaging.version import Version

from foundations.content_keys import KeyFile, tree_key
from foundations.durable_files import replace_durably
from foundations.settings import PROJECT_ROOT, Settings
from warehouse.contract import contracted_models
from warehouse.reference_data import dbt_vars

DBT_PROJECT_DIR = PROJECT_ROOT / "sql"
PROFILE = "reuse_data"  # dbt_project.yml's profile
DBT_THREADS = 2
DBT_STEP = "dbt_models"  # the step of `dbt build` in a run: what the build's progress names
# dbt-core as installed next to this interpreter, pinned in requirements.lock: found without PATH.
DBT_EXECUTABLE = Path(sys.executable).parent / "dbt"


class InstalledDbtResource(DbtCliResource):
    """dagster-dbt's dbt CLI, running the dbt installed next to this interpreter.

    Its version is that package's: dagster-dbt would otherwise run `dbt --version` in a process
    of its own at every build to find out (1.6 s of each build).
    """

    @cached_property
    def _cli_version(self) -> Version:
        return Version(importlib.metadata.version("dbt-core"))


def installed_dbt(project: DbtProject) -> InstalledDbtResource:
    return InstalledDbtResource(project_dir=project, dbt_executable=str(DBT_EXECUTABLE))


def dbt_profile(settings: Settings) -> str:
    """The profile dbt builds the warehouse with: the file under the home, DuckDB's memory capped.

    DuckDB's default is 80 % of RAM; under a cap it spills big sorts and joins to disk instead
    (10M readings: 4.4 GB -> 3.2 GB peak for about 10 % more time)."""
    output = {
        "type": "duckdb",
        "path": str(settings.warehouse_path),
        "threads": DBT_THREADS,
        "settings": {"memory_limit": settings.duckdb_memory_limit},
    }
    profile = {PROFILE: {"target": "warehouse", "outputs": {"warehouse": output}}}
    return "# Written by reuse-data from its settings (pipelines/project.py); edits are overwritten.\n" + json.dumps(
        profile, indent=2
    )


def write_profile(settings: Settings) -> Path:
    """The folder of the profile of ``settings``, written there unless it already holds it."""
    folder = settings.dbt_profiles_dir
    path, text = folder / "profiles.yml", dbt_profile(settings)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        folder.mkdir(parents=True, exist_ok=True)
        replace_durably(path, text.encode(), folder / ".profiles.yml.staging")
    return folder


def dbt_project(settings: Settings, report: Callable[[str], None] = print) -> DbtProject:
    """The dbt project as ``settings`` build it: its profile written, its manifest parsed when stale."""
    project = DbtProject(
        project_dir=DBT_PROJECT_DIR, target_path=settings.dbt_target_dir, profiles_dir=write_profile(settings)
    )
    prepare_manifest(project, settings, report)
    return project


def published_marts(project: DbtProject) -> tuple[str, ...]:
    """The marts a release publishes, as the project's manifest lists them (``contracted_models``)."""
    return contracted_models(json.loads(project.manifest_path.read_bytes()))


def project_files(project_dir: Path) -> list[Path]:
    """The files of the dbt project (models, seeds, macros, configuration), not dbt's own output."""
    return sorted(p for p in project_dir.rglob("*") if p.is_file() and not {"target", "logs"} & set(p.parts))


def project_key(project_dir: Path = DBT_PROJECT_DIR) -> str:
    """The key of every project file's path and content: equal keys, equal SQL."""
    return tree_key(project_dir, project_files(project_dir))


def parsed_from(manifest: Path) -> KeyFile:
    """Where the key of the project a manifest was parsed from is kept, beside it."""
    return KeyFile(manifest, "project-key")


def manifest_is_stale(manifest: Path, project_dir: Path) -> bool:
    """Whether dbt must parse again: no manifest yet, or one parsed from other project files.
    Compared by content, not by time: a home copied or restored (new times on old files) must
    not pass off an old manifest as current."""
    recorded = parsed_from(manifest).read()
    return not manifest.exists() or recorded is None or recorded != project_key(project_dir)


def prepare_manifest(project: DbtProject, settings: Settings, report: Callable[[str], None]) -> None:
    """Parse the dbt project when its manifest is missing or stale, and record what it was parsed from."""
    if manifest_is_stale(project.manifest_path, project.project_dir):
        report(f"parsing dbt project {project.project_dir} (dbt parse)")
        key = project_key(project.project_dir)
        arguments = ["parse", "--quiet", *dbt_vars(settings.base_url)]
        installed_dbt(project).cli(arguments, target_path=project.target_path).wait()
        parsed_from(project.manifest_path).write(key)
