"""The whole-rewrite check of bench-scale tells a release that holds what a rewrite holds from one
that does not: a Parquet file cut into other row groups holds the same rows, and the documents that
list its digest (then the manifest, which lists theirs) say the same but for those digests; any
other difference is one."""

import json
from pathlib import Path

import duckdb

from benchmarks.whole_rewrite import compare_releases


def release(folder: Path, row_group_rows: int, texts: dict[str, str]) -> Path:
    """A release folder: a Parquet file of the same 4,096 rows cut every ``row_group_rows``, the
    documents that list its digest, and ``texts``."""
    downloads = folder / "api/public/downloads"
    downloads.mkdir(parents=True)
    parquet = downloads / "claims.parquet"
    duckdb.execute(
        f"COPY (SELECT range AS n, md5(range::VARCHAR) AS text FROM range(4096)) TO '{parquet}' "
        f"(FORMAT parquet, ROW_GROUP_SIZE {row_group_rows})"
    )
    digest = str(hash(parquet.read_bytes()))
    dataset = {"distribution": [{"@id": "api/public/downloads/claims.parquet", "sha256": digest}]}
    (folder / "api/public/dataset.json").write_text(json.dumps(dataset))
    for path, text in texts.items():
        (folder / path).write_text(text)
    files = [
        {"path": path, "sha256": str(hash((folder / path).read_bytes()))}
        for path in ("api/public/dataset.json", "api/public/downloads/claims.parquet", *texts)
    ]
    (folder / "manifest.json").write_text(json.dumps({"version": "v1", "files": files}))
    return folder


def test_the_same_rows_in_other_row_groups_and_the_digests_that_follow_are_no_difference(tmp_path: Path):
    made = release(tmp_path / "made", 2048, {"llms.txt": "the same"})
    whole = release(tmp_path / "whole", 4096, {"llms.txt": "the same"})
    comparison = compare_releases(made, whole)
    assert comparison.different == []
    assert comparison.same_bytes == ["llms.txt"]
    assert comparison.same_rows == ["api/public/dataset.json", "api/public/downloads/claims.parquet", "manifest.json"]


def test_another_text_is_a_difference_and_so_is_the_manifest_that_lists_it(tmp_path: Path):
    made = release(tmp_path / "made", 2048, {"llms.txt": "made"})
    whole = release(tmp_path / "whole", 2048, {"llms.txt": "rewritten"})
    assert compare_releases(made, whole).different == ["llms.txt", "manifest.json"]
