"""set-properties refuses values Iceberg cannot read for the properties it types, hints at
misspelled names, and commits nothing when there is nothing to change (issue #18, new-user
findings).

 - `history.expire.min-snapshots-to-keep=abc`, `write.metadata.delete-after-commit.enabled=maybe`
   and the like: exit 2 naming the property and the type expected; no new metadata file, the
   catalog pointer unchanged (Java reads such an int as an error on every later read, and such
   a boolean as false: a setting silently off).
 - `history.expire.min-snapshot-to-keep=3`: set (tables carry properties of their own) with a
   warning naming the known property meant.
 - `--unset` of a property the table does not have: nothing committed, and it says so.
"""
import glob
import json
import os
import subprocess

import pytest

pa = pytest.importorskip("pyarrow")
pyiceberg_sql = pytest.importorskip("pyiceberg.catalog.sql")

CLI = os.environ.get("ICM_CLI")


@pytest.fixture
def table(tmp_path):
    if not CLI or not os.path.exists(CLI):
        pytest.fail("ICM_CLI does not name the built icemaint binary")
    wh = tmp_path / "wh"
    wh.mkdir()
    cat = pyiceberg_sql.SqlCatalog("out", uri=f"sqlite:///{wh}/cat.db", warehouse=f"file://{wh}")
    cat.create_namespace("ns")
    t = cat.create_table("ns.t", schema=pa.schema([("id", pa.int64())]),
                         properties={"keep.me": "1"})
    t.append(pa.table({"id": [1, 2]}))
    cfg = wh / ".pyiceberg.yaml"
    cfg.write_text(f"catalog:\n  out:\n    type: sql\n    uri: sqlite:///{wh}/cat.db\n"
                   f"    warehouse: file://{wh}\n")
    return {"cat": cat, "cfg": str(cfg), "md_dir": wh / "ns" / "t" / "metadata"}


def run(tbl, *args):
    return subprocess.run([CLI, "--config", tbl["cfg"], "--catalog", "out", *args],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL)


def state(tbl):
    """(catalog pointer, metadata files, properties)."""
    t = tbl["cat"].load_table("ns.t")
    return (t.metadata_location, sorted(glob.glob(str(tbl["md_dir"] / "*.metadata.json"))),
            dict(t.properties))


@pytest.mark.parametrize("arg,expected", [
    ("history.expire.min-snapshots-to-keep=abc", "not an integer"),
    ("history.expire.min-snapshots-to-keep=1.5", "not an integer"),
    ("history.expire.min-snapshots-to-keep=2147483648", "not an integer"),
    ("history.expire.min-snapshots-to-keep=-1", "negative"),
    ("history.expire.max-snapshot-age-ms=5d", "not a long integer"),
    ("history.expire.max-ref-age-ms= 100", "not a long integer"),
    ("write.metadata.delete-after-commit.enabled=maybe", "not a boolean"),
    ("gc.enabled=yes", "not a boolean"),
    ("commit.retry.num-retries=", "not an integer"),
    ("write.metadata.previous-versions-max=ten", "not an integer"),
])
def test_invalid_value_of_a_typed_property_is_refused(table, arg, expected):
    before = state(table)
    res = run(table, "set-properties", "ns.t", "ok.key=1", arg)
    assert res.returncode == 2, (res.returncode, res.stderr)
    key = arg.split("=", 1)[0]
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"icemaint: {key}: "), lines
    assert expected in lines[0]
    assert state(table) == before


@pytest.mark.parametrize("arg", [
    "history.expire.min-snapshots-to-keep=0", "history.expire.min-snapshots-to-keep=+7",
    "history.expire.max-snapshot-age-ms=9223372036854775807",
    "write.metadata.delete-after-commit.enabled=TRUE", "gc.enabled=false",
    "commit.manifest.min-count-to-merge=-5", "my.own.setting=maybe",
])
def test_valid_values_are_committed(table, arg):
    res = run(table, "set-properties", "ns.t", arg)
    assert res.returncode == 0, res.stderr
    assert res.stderr == ""
    key, value = arg.split("=", 1)
    assert state(table)[2][key] == value


def test_misspelled_known_property_warns_with_the_name_meant(table):
    res = run(table, "set-properties", "ns.t", "history.expire.min-snapshot-to-keep=3",
              "gc.enable=false")
    assert res.returncode == 0, res.stderr
    assert sorted(res.stderr.strip().splitlines()) == sorted([
        "warning: unknown table property history.expire.min-snapshot-to-keep (did you mean "
        "history.expire.min-snapshots-to-keep?)",
        "warning: unknown table property gc.enable (did you mean gc.enabled?)",
    ])
    props = state(table)[2]
    assert props["history.expire.min-snapshot-to-keep"] == "3"
    res = run(table, "-q", "set-properties", "ns.t", "gc.enable=true")
    assert res.returncode == 0 and res.stderr == ""


def test_unset_of_a_property_not_set_commits_nothing(table):
    before = state(table)
    res = run(table, "set-properties", "ns.t", "--unset", "not.there")
    assert res.returncode == 0, res.stderr
    assert "nothing to commit" in res.stdout
    assert "property not.there is not set" in res.stderr
    assert state(table) == before
    res = run(table, "--json", "set-properties", "ns.t", "--unset", "not.there")
    assert res.returncode == 0
    doc = json.loads(res.stdout)
    assert doc["committed"] is False and doc["metadata_location"] == before[0]
    assert state(table) == before
    # one that is set goes; the one that is not is named and skipped
    res = run(table, "set-properties", "ns.t", "--unset", "not.there", "--unset", "keep.me")
    assert res.returncode == 0, res.stderr
    assert "1 removed" in res.stdout and "not.there is not set" in res.stderr
    after = state(table)
    assert after[0] != before[0] and "keep.me" not in after[2]
