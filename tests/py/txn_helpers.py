"""Shared helpers of the transaction cross-checks (test_txn_pyiceberg.py, test_txn_race.py).

The icemaint CLI is taken from ICM_CLI, else ICM_BUILD_DIR/icemaint. A PyIceberg SqlCatalog on
SQLite and the CLI (through --uri/--warehouse/--catalog) share one catalog database.
"""
import os
import subprocess
import uuid

import pytest

CLI = os.environ.get("ICM_CLI") or (
    os.path.join(os.environ["ICM_BUILD_DIR"], "icemaint") if os.environ.get("ICM_BUILD_DIR") else None)


def need_cli():
    """The CLI path; skip (or fail under CI) when it is missing or lacks the txn commands."""
    ok = CLI and os.path.exists(CLI) and subprocess.run(
        [CLI, "add-files", "--help"], capture_output=True).returncode == 0
    if not ok:
        if os.environ.get("CI"):
            pytest.fail(f"icemaint CLI with add-files not found (ICM_CLI={CLI})")
        pytest.skip("ICM_CLI / ICM_BUILD_DIR do not name a CLI with the transaction commands")
    return CLI


class Db:
    """One SQLite catalog database with a warehouse directory."""

    def __init__(self, tmp_path):
        self.uri = f"sqlite:///{tmp_path}/catalog.db"
        self.warehouse = "file://" + str(tmp_path / "warehouse")
        self.name = "txn_" + uuid.uuid4().hex[:8]

    def catalog(self):
        from pyiceberg.catalog.sql import SqlCatalog
        return SqlCatalog(self.name, uri=self.uri, warehouse=self.warehouse)

    def cli(self, *args, check=True):
        res = subprocess.run([need_cli(), "--uri", self.uri, "--warehouse", self.warehouse,
                              "--catalog", self.name, *args], capture_output=True, text=True)
        if check and res.returncode != 0:
            raise AssertionError(f"icemaint {' '.join(args)} -> {res.returncode}: {res.stderr}")
        return res


def write_parquet(path, ids, with_field_ids=False):
    """A Parquet file with columns id (long) and data (string), as another engine writes it."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    fields = [pa.field("id", pa.int64()), pa.field("data", pa.string())]
    if with_field_ids:
        fields = [f.with_metadata({b"PARQUET:field_id": str(i + 1).encode()})
                  for i, f in enumerate(fields)]
    table = pa.table([pa.array(ids, pa.int64()), pa.array([f"r{i}" for i in ids])],
                     schema=pa.schema(fields))
    pq.write_table(table, path)
    return str(path)


def referenced_files(table):
    """Every manifest list, manifest and live data file any snapshot of `table` references."""
    io = table.io
    out = set()
    for snap in table.metadata.snapshots:
        out.add(snap.manifest_list)
        for mf in snap.manifests(io):
            out.add(mf.manifest_path)
            for entry in mf.fetch_manifest_entry(io, discard_deleted=True):
                out.add(entry.data_file.file_path)
    return out


def local(path):
    return path[len("file://"):] if path.startswith("file://") else path
