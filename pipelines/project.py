"""The dbt project in ``sql/``, its artefacts kept under ``REUSE_DATA_HOME``."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from dagster_dbt import DbtProject

from reuse_data.settings import PROJECT_ROOT, load_settings

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
)
dbt_project.prepare_if_dev()
