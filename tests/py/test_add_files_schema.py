"""`icemaint add-files` refuses Parquet files whose schema does not fit the table, exactly when
PyIceberg's own `add_files` does.

Every case writes one Parquet file with pyarrow, offers it to PyIceberg's `add_files` on one
table and to `icemaint add-files` on a second table with the same schema, and asserts both make
the same decision, and the decision this test expects (so a case cannot pass by both tools
changing). After a refusal the table is unchanged (same metadata location, same files on disk)
and icemaint's error is one line naming the file and the column; after an acceptance PyIceberg
reads the rows back from the table icemaint committed to.
"""
import os

import pytest

pytest.importorskip("pyiceberg.catalog.sql")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from pyiceberg.schema import Schema  # noqa: E402
from pyiceberg.types import (  # noqa: E402
    DecimalType, DoubleType, IntegerType, ListType, LongType, MapType, NestedField, StringType,
    StructType, TimestamptzType)

from txn_helpers import Db, need_cli  # noqa: E402

FLAT = Schema(NestedField(1, "id", LongType(), required=True),
              NestedField(2, "data", StringType(), required=False),
              NestedField(3, "score", DoubleType(), required=False))

# Ids as PyIceberg's create_table assigns them (level by level), so files can carry them.
NESTED = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "point", StructType(NestedField(5, "x", DoubleType(), required=True),
                                       NestedField(6, "y", DoubleType(), required=False)),
                required=False),
    NestedField(3, "tags", ListType(7, StringType(), element_required=False), required=False),
    NestedField(4, "props", MapType(8, StringType(), 9, IntegerType(), value_required=False),
                required=False),
)

TYPED = Schema(NestedField(1, "amount", DecimalType(18, 2), required=False),
               NestedField(2, "at", TimestamptzType(), required=False),
               NestedField(3, "n", IntegerType(), required=False))

ROWS = 3


def fid(n):
    return {b"PARQUET:field_id": str(n).encode()}


def col(name, typ, nullable=True, field_id=None):
    return pa.field(name, typ, nullable=nullable, metadata=fid(field_id) if field_id else None)


def values(typ):
    """ROWS values of a pyarrow type (no nulls, so non-nullable columns are fine)."""
    if pa.types.is_decimal(typ):
        import decimal
        return pa.array([decimal.Decimal(v).scaleb(-typ.scale) for v in (1, 2, 3)], typ)
    if pa.types.is_timestamp(typ):
        return pa.array([0, 1, 2], pa.int64()).cast(typ)
    if pa.types.is_integer(typ):
        return pa.array([10, 20, 30], typ)
    if pa.types.is_floating(typ):
        return pa.array([0.5, 1.5, 2.5], typ)
    if pa.types.is_string(typ):
        return pa.array(["a", "b", "c"], typ)
    if pa.types.is_struct(typ):
        return pa.array([{f.name: 1.0 for f in typ} for _ in range(ROWS)], typ)
    if pa.types.is_list(typ):
        return pa.array([[v] for v in values(typ.value_type).to_pylist()], typ)
    if pa.types.is_map(typ):
        pairs = zip(values(typ.key_type).to_pylist(), values(typ.item_type).to_pylist())
        return pa.array([[kv] for kv in pairs], typ)
    raise AssertionError(f"no sample values for {typ}")


# pyarrow writer options of some cases (the default writes the standard nested layouts).
WRITE_OPTIONS = {"nested_legacy_list_names": {"use_compliant_nested_type": False}}


def write(path, fields, **options):
    schema = pa.schema(fields)
    pq.write_table(pa.table([values(f.type) for f in fields], schema=schema), path, **options)
    return str(path)


POINT = pa.struct([pa.field("x", pa.float64(), nullable=False), pa.field("y", pa.float64())])

# name -> (table schema, file columns, expected decision, column named in the refusal[,
# PyIceberg's decision where icemaint is deliberately stricter])
CASES = {
    "same_columns": (FLAT, [col("id", pa.int64(), False), col("data", pa.string()),
                            col("score", pa.float64())], True, None),
    "optional_column_missing": (FLAT, [col("id", pa.int64(), False)], True, None),
    "extra_column": (FLAT, [col("id", pa.int64(), False), col("extra", pa.int64())],
                     False, "extra"),
    "required_column_missing": (FLAT, [col("data", pa.string())], False, "id"),
    "required_column_optional_in_file": (FLAT, [col("id", pa.int64())], False, "id"),
    "string_for_long": (FLAT, [col("id", pa.string(), False)], False, "id"),
    "long_for_double": (FLAT, [col("id", pa.int64(), False), col("score", pa.int64())],
                        False, "score"),
    "int_promotes_to_long": (FLAT, [col("id", pa.int32(), False)], True, None),
    "float_promotes_to_double": (FLAT, [col("id", pa.int64(), False),
                                        col("score", pa.float32())], True, None),
    # Every column has a field id: PyIceberg matches types by id, but it also looks up each
    # column's statistics by its name path, so renamed and extra columns are still refused.
    "ids_same_names": (FLAT, [col("id", pa.int64(), False, 1),
                              col("data", pa.string(), True, 2)], True, None),
    "ids_other_names": (FLAT, [col("ident", pa.int64(), False, 1),
                               col("payload", pa.string(), True, 2)], False, "ident"),
    "ids_extra_column": (FLAT, [col("id", pa.int64(), False, 1),
                                col("extra", pa.int64(), True, 99)], False, "extra"),
    "ids_swapped": (FLAT, [col("id", pa.int64(), False, 2),
                           col("data", pa.string(), True, 1)], False, "id"),
    # Only some columns have ids: PyIceberg ignores them and matches by name.
    "ids_partial_falls_back_to_names": (FLAT, [col("id", pa.int64(), False, 1),
                                               col("extra", pa.int64())], False, "extra"),
    "nested_same": (NESTED, [col("id", pa.int64(), False), col("point", POINT),
                             col("tags", pa.list_(pa.string())),
                             col("props", pa.map_(pa.string(), pa.int32()))], True, None),
    "nested_list_element_type": (NESTED, [col("id", pa.int64(), False),
                                          col("tags", pa.list_(pa.int64()))],
                                 False, "tags.element"),
    "nested_struct_extra_field": (NESTED, [col("id", pa.int64(), False),
                                           col("point", pa.struct([
                                               pa.field("x", pa.float64(), nullable=False),
                                               pa.field("z", pa.float64())]))],
                                  False, "point.z"),
    "nested_struct_required_missing": (NESTED, [col("id", pa.int64(), False),
                                                col("point", pa.struct([
                                                    pa.field("y", pa.float64())]))],
                                       False, "point.x"),
    "nested_map_value_type": (NESTED, [col("id", pa.int64(), False),
                                       col("props", pa.map_(pa.string(), pa.string()))],
                              False, "props.value"),
    # With field ids on every column (list elements, map keys and values, struct fields too).
    "nested_ids_same": (NESTED, [
        col("id", pa.int64(), False, 1),
        col("point", pa.struct([pa.field("x", pa.float64(), nullable=False, metadata=fid(5)),
                                pa.field("y", pa.float64(), metadata=fid(6))]), True, 2),
        col("tags", pa.list_(pa.field("element", pa.string(), metadata=fid(7))), True, 3),
        col("props", pa.map_(pa.field("key", pa.string(), nullable=False, metadata=fid(8)),
                             pa.field("value", pa.int32(), metadata=fid(9))), True, 4)],
        True, None),
    # Stricter than PyIceberg: it accepts a list element whose id is not the table's (it finds
    # no field 7, and an optional field may be missing), but readers match elements by id.
    "nested_ids_other_element_id": (NESTED, [
        col("id", pa.int64(), False, 1),
        col("tags", pa.list_(pa.field("element", pa.string(), metadata=fid(77))), True, 3)],
        False, "tags.element", True),
    # pyarrow's legacy names (`list.item`): PyIceberg finds no statistics path for them.
    "nested_legacy_list_names": (NESTED, [col("id", pa.int64(), False),
                                          col("tags", pa.list_(pa.string()))],
                                 False, "tags"),
    "decimal_widens": (TYPED, [col("amount", pa.decimal128(9, 2))], True, None),
    "timestamptz_utc": (TYPED, [col("at", pa.timestamp("us", tz="UTC"))], True, None),
    "timestamp_nanos_in_v2": (TYPED, [col("at", pa.timestamp("ns", tz="UTC"))], False, "at"),
    "timestamp_without_zone_for_timestamptz": (TYPED, [col("at", pa.timestamp("us"))],
                                               False, "at"),
    "decimal_scale_differs": (TYPED, [col("amount", pa.decimal128(9, 3))], False, "amount"),
    # Stricter than PyIceberg: uint32 values above 2^31-1 do not fit Iceberg int.
    "uint32_for_int": (TYPED, [col("n", pa.uint32())], False, "n", True),
}


def listing(root):
    out = set()
    for d, _, names in os.walk(root):
        out.update(os.path.join(d, n) for n in names)
    return out


@pytest.mark.parametrize("case", sorted(CASES))
def test_add_files_schema_decision_matches_pyiceberg(tmp_path, case):
    need_cli()
    schema, fields, accept, column, *pyiceberg = CASES[case]
    db = Db(tmp_path)
    cat = db.catalog()
    cat.create_namespace("ns")
    ours = cat.create_table("ns.t", schema)
    theirs = cat.create_table("ns.p", schema)
    (tmp_path / "incoming").mkdir()
    f = write(tmp_path / "incoming" / f"{case}.parquet", fields, **WRITE_OPTIONS.get(case, {}))

    try:
        theirs.add_files([f])
        pyiceberg_accepts = True
    except Exception:  # ValueError, or pyarrow conversion errors: all are refusals
        pyiceberg_accepts = False
    expected = pyiceberg[0] if pyiceberg else accept
    assert pyiceberg_accepts == expected, "PyIceberg's decision changed; re-check the rule"

    warehouse = str(tmp_path / "warehouse")
    before_files = listing(warehouse)
    before_md = cat.load_table("ns.t").metadata_location
    res = db.cli("add-files", "ns.t", f, check=False)
    assert (res.returncode == 0) == accept, res.stderr

    t = db.catalog().load_table("ns.t")
    if accept:
        assert t.metadata_location != ours.metadata_location
        assert t.scan().to_arrow().num_rows == ROWS
        assert t.current_snapshot().summary["added-records"] == str(ROWS)
    else:
        assert t.metadata_location == before_md
        assert listing(warehouse) == before_files
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1, res.stderr
        assert f in lines[0] and f"column '{column}'" in lines[0], lines[0]


def test_one_refused_file_refuses_the_whole_command(tmp_path):
    """add-files with a fitting and a non-fitting file commits neither."""
    need_cli()
    db = Db(tmp_path)
    cat = db.catalog()
    cat.create_namespace("ns")
    cat.create_table("ns.t", FLAT)
    (tmp_path / "incoming").mkdir()
    good = write(tmp_path / "incoming" / "good.parquet", [col("id", pa.int64(), False)])
    bad = write(tmp_path / "incoming" / "bad.parquet", [col("id", pa.string(), False)])
    warehouse = str(tmp_path / "warehouse")
    before_files = listing(warehouse)
    before_md = cat.load_table("ns.t").metadata_location
    res = db.cli("add-files", "ns.t", good, bad, check=False)
    assert res.returncode != 0
    assert bad in res.stderr and "column 'id'" in res.stderr
    t = db.catalog().load_table("ns.t")
    assert t.metadata_location == before_md
    assert t.current_snapshot() is None
    assert listing(warehouse) == before_files
