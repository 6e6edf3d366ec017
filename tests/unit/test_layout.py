"""The packages import one another only along the flow: foundations under everything, the
inputs, the warehouse and its releases, the public API, the pipeline that drives them, the
intake beside them, and the command line on top. An import against that order fails here,
naming the module, rather than in a reviewer's reading."""

from __future__ import annotations

import ast
from pathlib import Path

from foundations.settings import PROJECT_ROOT

# Package -> the packages of ours it may import. What is not listed may not be imported.
MAY_IMPORT: dict[str, set[str]] = {
    "foundations": set(),
    "inputs": {"foundations"},
    "warehouse": {"foundations", "inputs"},
    "ask": {"foundations", "inputs", "warehouse"},
    "serve": {"foundations", "warehouse", "ask"},
    "intake": {"foundations", "inputs", "warehouse"},
    "pipelines": {"foundations", "inputs", "warehouse", "ask", "serve", "intake"},
    "reuse_data": {"foundations", "inputs", "warehouse", "ask", "serve", "intake", "pipelines"},
}
OURS = {*MAY_IMPORT, "tests", "benchmarks"}


def imports_of(source: Path) -> set[str]:
    """The top-level packages of ours a module imports, wherever in the module it does."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found & OURS


def test_each_package_imports_only_what_lies_under_it():
    wrong = [
        f"{source.relative_to(PROJECT_ROOT)} imports {other}"
        for package, allowed in MAY_IMPORT.items()
        for source in sorted((PROJECT_ROOT / package).rglob("*.py"))
        for other in sorted(imports_of(source) - allowed - {package})
    ]
    assert not wrong, "imports against the layering:\n" + "\n".join(wrong)


def names_a_path_under(source: Path, folders: tuple[str, ...]) -> bool:
    text = source.read_text(encoding="utf-8")
    return any(f'"{folder}/' in text or f"'{folder}/" in text for folder in folders)


def test_production_code_reads_nothing_under_tests_or_benchmarks():
    wrong = [
        str(source.relative_to(PROJECT_ROOT))
        for package in MAY_IMPORT
        for source in sorted((PROJECT_ROOT / package).rglob("*.py"))
        if names_a_path_under(source, ("tests", "benchmarks"))
    ]
    assert not wrong, "production modules naming a path under tests/ or benchmarks/: " + ", ".join(wrong)


def test_the_layering_covers_every_package():
    packages = {path.parent.name for path in PROJECT_ROOT.glob("*/__init__.py")} - {"tests", "benchmarks"}
    assert packages == set(MAY_IMPORT)
