"""dataset.json and datapackage.json as the tools researchers use read them, from a running server:
mlcroissant loads the Croissant description and reads every record set from the served files;
frictionless validates the data package against the served files, keys and types included."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from types import ModuleType

import duckdb
import pytest

from public.table_descriptions import UndescribedColumn, describe_table
from release.local_store import SNAPSHOT_FILE, current_version, release_path, rows_of
from tests.api.conftest import BASE_URL
from tests.support.harness import Server, distributed_tables
from warehouse.contract import DATA_DICTIONARY_TABLE
from warehouse.reference_data import seed_rows


def on_this_server(document: dict, server: Server) -> dict:
    """``document`` with the release's addresses pointed at this test's server (the demo's base
    URL is not the loopback port the server listens on)."""
    return json.loads(json.dumps(document).replace(BASE_URL, f"http://{server.host}:{server.port}"))


@pytest.fixture(scope="module")
def mlcroissant(tmp_path_factory, monkeypatch_module) -> ModuleType:
    """mlcroissant with its download cache under the test's directory (it reads the variable once, on import)."""
    monkeypatch_module.setenv("CROISSANT_CACHE", str(tmp_path_factory.mktemp("croissant-cache")))
    return importlib.import_module("mlcroissant")


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


@pytest.fixture(scope="module")
def dataset(server: Server) -> dict:
    return server.get("/api/public/dataset.json").json()


@pytest.fixture(scope="module")
def parquet_columns(server: Server) -> dict[str, list[str]]:
    """The columns of each table's Parquet distribution, as the file holds them."""
    snapshot = release_path(server.store, current_version(server.store))
    downloads = snapshot / "api/public/downloads"
    return {
        table: duckdb.sql(f"SELECT * FROM '{downloads / f'{table}.parquet'}' LIMIT 0").columns
        for table in distributed_tables()
    }


def test_dataset_json_is_croissant_1_0_with_a_record_set_per_table(dataset: dict, parquet_columns: dict):
    assert dataset["conformsTo"] == "http://mlcommons.org/croissant/1.0"
    record_sets = {record_set["name"]: record_set for record_set in dataset["recordSet"]}
    assert set(record_sets) == set(distributed_tables())
    for table, columns in parquet_columns.items():
        fields = record_sets[table]["field"]
        assert [field["name"] for field in fields] == list(columns), table
        assert all(field["description"] for field in fields), table
    assert record_sets["products"]["key"] == {"@id": "products/product_slug"}
    files = {entry["@id"]: entry for entry in dataset["distribution"]}
    assert files["api/public/downloads/products.parquet"]["encodingFormat"] == "application/x-parquet"
    assert all(len(entry["sha256"]) == 64 for entry in files.values())


def test_mlcroissant_loads_the_dataset_and_reads_every_record_set_from_the_server(
    mlcroissant: ModuleType, dataset: dict, server: Server, tmp_path: Path
):
    described = tmp_path / "dataset.json"
    described.write_text(json.dumps(on_this_server(dataset, server)))
    loaded = mlcroissant.Dataset(jsonld=str(described))  # validates it: errors raise, warnings are logged
    assert not loaded.metadata.ctx.issues.errors
    for record_set in dataset["recordSet"]:
        name = record_set["name"]
        first = next(iter(loaded.records(record_set=name)))
        # Each column is read: as itself, or (a repeated record of records) as its members.
        fields = {field["@id"] for field in record_set["field"]}
        assert {key if key in fields else key.rsplit("/", 1)[0] for key in first} == fields, name
    product = next(iter(loaded.records(record_set="products")))
    assert product["products/category_name"]["products/category_name/en"]  # a translated struct, per language
    assert isinstance(product["products/pros"], list)  # a repeated field
    pending = [
        row for row in loaded.records(record_set="bench_measurements") if row["bench_measurements/status"] == b"pending"
    ]
    assert pending and all(row["bench_measurements/value"] is None for row in pending)  # null, never a number


def test_frictionless_validates_the_data_package_against_the_served_files(server: Server):
    import frictionless

    address = f"http://{server.host}:{server.port}/api/public/datapackage.json"
    package = server.get("/api/public/datapackage.json").json()
    names = {resource["name"] for resource in package["resources"]}
    assert names == {*distributed_tables(), "bench_measurements-csv"}
    report = frictionless.validate(address)  # every file fetched from the server, hashed and checked row by row
    assert report.valid, report.flatten(["resourceName", "rowNumber", "fieldName", "type", "note"])[:20]
    assert report.stats["tasks"] == len(names)
    schema = {resource["name"]: resource["schema"] for resource in package["resources"]}
    assert schema["bench_measurements"]["primaryKey"] == ["measurement_id"]
    assert {"fields": ["product_slug"], "reference": {"resource": "products", "fields": ["product_slug"]}} in schema[
        "bench_measurements"
    ]["foreignKeys"]
    # The constraints dbt's tests prove, checked on every row above: a status from its seed, never null.
    fields = {field["name"]: field for field in schema["bench_measurements"]["fields"]}
    statuses = [row["status"] for row in seed_rows("slot_statuses")]
    assert fields["status"]["constraints"] == {"required": True, "enum": statuses}
    assert "constraints" not in fields["value"]  # null while pending


def test_frictionless_finds_files_that_do_not_match_the_package(server: Server, tmp_path: Path):
    """The validation can fail: the package downloaded beside its files, as a researcher keeps it,
    with a CSV's hash and a Parquet file's row count that no longer match what was served."""
    import frictionless

    package = server.get("/api/public/datapackage.json").json()
    kept = {"languages", "bench_measurements-csv"}
    package["resources"] = [r for r in package["resources"] if r["name"] in kept]
    for resource in package["resources"]:
        target = tmp_path / resource["path"]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(server.get(f"/api/public/{resource['path']}").body)
        resource["schema"].pop("foreignKeys", None)  # their tables are not downloaded here
    (tmp_path / "datapackage.json").write_text(json.dumps(package))
    assert frictionless.validate(str(tmp_path / "datapackage.json")).valid

    by_name = {r["name"]: r for r in package["resources"]}
    by_name["bench_measurements-csv"]["hash"] = "sha256:" + "0" * 64
    by_name["languages"]["rows"] += 1
    (tmp_path / "datapackage.json").write_text(json.dumps(package))
    report = frictionless.validate(str(tmp_path / "datapackage.json"))
    found = {(task.name, error.type) for task in report.tasks for error in task.errors}
    assert found == {("bench_measurements-csv", "hash-count"), ("languages", "row-count")}


def test_a_distributed_column_the_dictionary_does_not_describe_fails_the_publish(server: Server):
    snapshot = release_path(server.store, current_version(server.store)) / SNAPSHOT_FILE
    with duckdb.connect(str(snapshot), read_only=True) as connection:
        dictionary = rows_of(connection, f"SELECT * FROM {DATA_DICTIONARY_TABLE} WHERE table_name = 'languages'")
        described = describe_table(connection, "languages", "SELECT * FROM languages", dictionary)
        assert [c.name for c in described.columns][:2] == ["code", "name"] and described.primary_key == "code"
        with pytest.raises(UndescribedColumn, match="column surprise of the languages distribution is not described"):
            describe_table(connection, "languages", "SELECT *, 1 AS surprise FROM languages", dictionary)
        assert connection.execute(f"SELECT count(*) FROM {DATA_DICTIONARY_TABLE} WHERE NOT is_public").fetchone()[0]
