"""Java, PyIceberg and fastavro (raw Avro plus the spec's inheritance rules, applied by
oracle.fastavro_manifests) decode every manifest list and manifest of every shape identically: entry
status, inherited snapshot ids and sequence numbers, file content, paths, sizes and counts. This
is the yardstick for manifests that icemaint writes (they must read back the same way)."""

from __future__ import annotations

import pytest

import oracle
import shapes

TABLES = [t for s in shapes.SHAPES.values() for t in s.tables]


@pytest.fixture(scope="module")
def java_dumps(built):
    wh, _ = built
    return oracle.java_manifests(wh, TABLES)


@pytest.mark.parametrize("table", TABLES)
def test_java_pyiceberg_and_fastavro_decode_manifests_alike(table, built, java_dumps):
    wh, _ = built
    t = wh.catalog().load_table(table)
    py = oracle.pyiceberg_manifests(t)
    assert sum(len(m["entries"]) for s in py for m in s["manifests"]) > 0
    assert java_dumps[table] == py
    assert oracle.fastavro_manifests(t) == py
