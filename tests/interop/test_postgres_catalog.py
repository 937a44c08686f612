"""The same harness with the catalog in PostgreSQL (ICM_PG_DSN, e.g.
postgresql://user:password@127.0.0.1:5432/db, as scripts/start-postgres.sh prints): PyIceberg,
Java and icemaint share the catalog tables there too. Two shapes, one per writer, keep it quick.
Skipped, saying so, when ICM_PG_DSN is not set."""

from __future__ import annotations

import json
import subprocess

import pytest

import oracle
import shapes

PG_SHAPES = ["append_history", "java_pos_deletes"]


@pytest.fixture(scope="module")
def pg_built(pg_warehouse):
    return pg_warehouse, shapes.build(pg_warehouse, PG_SHAPES)


def test_shapes_build_and_read_alike_with_a_postgres_catalog(pg_built):
    wh, built = pg_built
    judges = shapes.judges(built.values())
    states = oracle.capture(wh, judges)
    for shape in built.values():
        for table in shape.tables:
            st = states[table]
            assert set(st.fingerprints) == set(shape.judges)
            rows = tuple(st.fingerprints["java"][sid].rows for sid in st.snapshot_ids)
            assert rows == shape.expected_rows[table.split(".", 1)[1]]
    oracle.check_after(states, wh, judges)


def test_icemaint_resolves_postgres_catalog_names(pg_built, icemaint_cli):
    wh, built = pg_built
    cat = wh.catalog()
    for table in shapes.judges(built.values()):
        proc = subprocess.run([str(icemaint_cli), "--json", *wh.icemaint_args(), "inspect", table],
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["metadata_location"] == \
            cat.load_table(table).metadata_location
