"""Interoperability of icemaint's SQL catalog with PyIceberg's SqlCatalog on one database.

Both directions, on SQLite and on PostgreSQL:
  * PyIceberg creates a namespace and a table and appends rows; icemaint (tests/tools/
    catalog_tool, env ICM_CATALOG_TOOL) lists and loads that table as-is, then commits a
    property change; PyIceberg reloads the table, sees the change and the metadata log, and
    still reads the same rows.
  * icemaint creates a namespace and a table; PyIceberg loads it (schema, uuid, location),
    appends rows to it; icemaint loads the new snapshot and commits on top; PyIceberg reads
    the rows back.
PostgreSQL uses the server named by ICM_PG_DSN (scripts/start-postgres.sh); without it those
cases are skipped, except under CI (env CI set), where that is a failure.
"""
import json
import os
import subprocess
import sys
import uuid

import pytest

pyiceberg_sql = pytest.importorskip("pyiceberg.catalog.sql")
pa = pytest.importorskip("pyarrow")

from pyiceberg.schema import Schema  # noqa: E402
from pyiceberg.types import LongType, NestedField, StringType  # noqa: E402

# The tool: ICM_CATALOG_TOOL, else the one in ICM_BUILD_DIR (scripts/test.sh exports it).
TOOL = os.environ.get("ICM_CATALOG_TOOL") or (
    os.path.join(os.environ["ICM_BUILD_DIR"], "tests", "tools", "catalog_tool")
    if os.environ.get("ICM_BUILD_DIR") else None)

SCHEMA_JSON = json.dumps({
    "type": "struct",
    "schema-id": 0,
    "fields": [
        {"id": 1, "name": "id", "required": False, "type": "long"},
        {"id": 2, "name": "data", "required": False, "type": "string"},
    ],
})


def backends():
    yield pytest.param("sqlite", id="sqlite")
    yield pytest.param("postgresql", id="postgresql")


@pytest.fixture(params=list(backends()))
def catalog_db(request, tmp_path):
    """(SQLAlchemy URI, warehouse URI, catalog name) of a fresh catalog."""
    if not TOOL or not os.path.exists(TOOL):
        if os.environ.get("CI"):
            pytest.fail("catalog_tool not built (ICM_CATALOG_TOOL / ICM_BUILD_DIR)")
        pytest.skip("ICM_CATALOG_TOOL does not name the built catalog_tool")
    name = "interop_" + uuid.uuid4().hex[:10]
    warehouse = "file://" + str(tmp_path / "warehouse")
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path}/catalog.db", warehouse, name
        return
    dsn = os.environ.get("ICM_PG_DSN")
    if not dsn:
        if os.environ.get("CI"):
            pytest.fail("ICM_PG_DSN is not set under CI (scripts/start-postgres.sh)")
        pytest.skip("ICM_PG_DSN not set: start a server with scripts/start-postgres.sh")
    yield dsn, warehouse, name
    # Leave the shared database clean: this catalog's rows only.
    cat = pyiceberg_sql.SqlCatalog(name, uri=_sqlalchemy_uri(dsn), warehouse=warehouse)
    for ns in cat.list_namespaces():
        for ident in cat.list_tables(ns):
            cat.drop_table(ident)
        cat.drop_namespace(ns)


def _sqlalchemy_uri(uri):
    return uri.replace("postgresql://", "postgresql+psycopg2://", 1) if uri.startswith("postgresql://") else uri


def tool(db, *args, check=True):
    uri, warehouse, name = db
    res = subprocess.run([TOOL, "--uri", uri, "--name", name, "--warehouse", warehouse, *args],
                         capture_output=True, text=True, check=False)
    if check:
        assert res.returncode == 0, res.stderr
    return res


def tool_load(db, ident):
    return json.loads(tool(db, "load", ident).stdout)


def pyiceberg(db):
    uri, warehouse, name = db
    return pyiceberg_sql.SqlCatalog(name, uri=_sqlalchemy_uri(uri), warehouse=warehouse)


ROWS = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "data": pa.array(["a", "b", "c"])})


def test_pyiceberg_table_used_by_icemaint(catalog_db):
    cat = pyiceberg(catalog_db)
    cat.create_namespace("db")
    schema = Schema(NestedField(1, "id", LongType(), required=False),
                    NestedField(2, "data", StringType(), required=False))
    table = cat.create_table("db.events", schema=schema)
    table.append(ROWS)
    table = cat.load_table("db.events")

    assert tool(catalog_db, "list-namespaces").stdout.split() == ["db"]
    assert tool(catalog_db, "list-tables", "db").stdout.split() == ["events"]
    loaded = tool_load(catalog_db, "db.events")
    assert loaded["metadata_location"] == table.metadata_location
    assert loaded["table_uuid"] == str(table.metadata.table_uuid)
    assert loaded["current_snapshot_id"] == table.metadata.current_snapshot_id
    assert loaded["snapshot_count"] == len(table.metadata.snapshots) == 1

    new_location = tool(catalog_db, "set-property", "db.events", "icemaint.touched", "yes").stdout.strip()
    again = cat.load_table("db.events")
    assert again.metadata_location == new_location
    assert again.metadata.properties["icemaint.touched"] == "yes"
    assert [e.metadata_file for e in again.metadata.metadata_log][-1] == table.metadata_location
    assert again.metadata.current_snapshot_id == table.metadata.current_snapshot_id
    assert again.scan().to_arrow().sort_by("id").equals(ROWS)

    # PyIceberg commits from its stale handle: it re-reads the current metadata (icemaint's) and
    # swaps from there, so icemaint's change survives and the lineage stays linear.
    with table.transaction() as tx:
        tx.set_properties({"stale": "1"})
    last = cat.load_table("db.events")
    assert last.metadata.properties["icemaint.touched"] == "yes"
    assert last.metadata.properties["stale"] == "1"
    assert [e.metadata_file for e in last.metadata.metadata_log][-1] == new_location
    assert tool_load(catalog_db, "db.events")["metadata_location"] == last.metadata_location


def test_icemaint_table_used_by_pyiceberg(catalog_db):
    tool(catalog_db, "create-namespace", "ns")
    created = tool(catalog_db, "create-table", "ns.t", SCHEMA_JSON).stdout.strip()
    assert "/ns/t/metadata/00000-" in created

    cat = pyiceberg(catalog_db)
    assert ("ns",) in cat.list_namespaces()
    assert cat.list_tables("ns") == [("ns", "t")]
    table = cat.load_table("ns.t")
    assert table.metadata_location == created
    assert [f.name for f in table.schema().fields] == ["id", "data"]
    assert table.metadata.format_version == 2
    assert table.location() == catalog_db[1] + "/ns/t"

    table.append(ROWS)  # PyIceberg commits on the table icemaint created
    loaded = tool_load(catalog_db, "ns.t")
    assert loaded["snapshot_count"] == 1
    assert loaded["metadata_location"] == cat.load_table("ns.t").metadata_location

    tool(catalog_db, "set-property", "ns.t", "owner", "icemaint")
    table = cat.load_table("ns.t")
    assert table.metadata.properties["owner"] == "icemaint"
    assert table.scan().to_arrow().sort_by("id").equals(ROWS)
    assert len(table.metadata.metadata_log) == 2


def test_icemaint_register_table_from_pyiceberg_metadata(catalog_db):
    cat = pyiceberg(catalog_db)
    cat.create_namespace("src")
    schema = Schema(NestedField(1, "id", LongType(), required=False))
    table = cat.create_table("src.orig", schema=schema)
    tool(catalog_db, "create-namespace", "dst")
    # src.orig already uses this metadata file: refused unless forced (issue #16)
    shared = tool(catalog_db, "register-table", "dst.copy", table.metadata_location, check=False)
    assert shared.returncode == 1 and "ICM_EREFUSED" in shared.stderr
    tool(catalog_db, "register-table", "dst.copy", table.metadata_location, "--force")
    copy = cat.load_table("dst.copy")
    assert copy.metadata_location == table.metadata_location
    dup = tool(catalog_db, "register-table", "dst.copy", table.metadata_location, "--force",
               check=False)
    assert dup.returncode == 1 and "ICM_EEXISTS" in dup.stderr


CONFIG_YAML = """\
default-catalog: Prod
catalog:
  prod:
    uri: sqlite:///file.db
    warehouse: file:///wh
    S3.Endpoint: http://minio:9000
  dev:
    type: hadoop
    warehouse: /wh/dev
"""

CONFIG_CASES = [
    ({}, None),
    ({"PYICEBERG_CATALOG__PROD__URI": "sqlite:///env.db"}, None),
    ({"PYICEBERG_CATALOG__PROD__S3_REGION": "eu-1",
      "PYICEBERG_CATALOG__PROD__S3__ACCESS_KEY_ID": "k"}, None),
    ({"PYICEBERG_DEFAULT_CATALOG": "dev"}, None),
    ({"PYICEBERG_CATALOG__NEW__URI": "postgresql://u@h/db"}, "new"),
    ({}, "DEV"),
]


@pytest.mark.parametrize("env,name", CONFIG_CASES)
def test_configuration_resolves_like_pyiceberg(tmp_path, env, name):
    """Same .pyiceberg.yaml and PYICEBERG_* variables: PyIceberg's Config and icemaint's
    resolver choose the same catalog name and the same properties."""
    if not TOOL or not os.path.exists(TOOL):
        pytest.skip("ICM_CATALOG_TOOL does not name the built catalog_tool")
    home = tmp_path / "home"
    home.mkdir()
    (home / ".pyiceberg.yaml").write_text(CONFIG_YAML)
    clean = {k: v for k, v in os.environ.items() if not k.upper().startswith("PYICEBERG_")}
    run_env = {**clean, "HOME": str(tmp_path / "nohome"), "PYICEBERG_HOME": str(home), **env}
    script = (
        "import json, sys\n"
        "from pyiceberg.utils.config import Config\n"
        "c = Config()\n"
        "name = sys.argv[1] if len(sys.argv) > 1 else c.get_default_catalog_name()\n"
        "print(json.dumps({'name': name, 'properties': c.get_catalog_config(name) or {}}))\n"
    )
    args = [name] if name else []
    py = subprocess.run([sys.executable, "-c", script, *args], env=run_env, cwd=tmp_path,
                        capture_output=True, text=True, check=True)
    ours = subprocess.run([TOOL, "resolve-config", *args], env=run_env, cwd=tmp_path,
                          capture_output=True, text=True, check=True)
    assert json.loads(ours.stdout) == json.loads(py.stdout)
