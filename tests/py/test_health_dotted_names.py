"""`icemaint health --all` loads each table by its namespace levels and name, never by the
dotted name (issue #21): in a SQLite catalog, table `b.t` of namespace `a` and table `t` of
namespace `a.b` are both "a.b.t" when joined with dots, and loading that string gives the second
table twice. Each report must name its own table (table_id, namespace) with that table's own
figures, and the Prometheus file must keep the two apart."""
import json
import sqlite3

import pyarrow as pa

from safety_helpers import icm, sql_table_of_three_appends
from test_health import check_prometheus


def test_all_tells_dotted_table_and_namespace_apart(tmp_path):
    env = sql_table_of_three_appends(tmp_path, "cat")
    cat, schema = env["cat"], env["schema"]
    cat.create_namespace("a")
    cat.create_namespace("a.b")
    # `a`.`b.t`: one snapshot of 1 row; `a.b`.`t`: two snapshots of 2 and 3 rows
    one = cat.create_table("a.x", schema=schema)
    one.append(pa.table({"id": [1], "s": ["one"]}, schema=schema))
    two = cat.create_table("a.b.t", schema=schema)
    two.append(pa.table({"id": [1, 2], "s": ["two"] * 2}, schema=schema))
    two.append(pa.table({"id": [3, 4, 5], "s": ["two"] * 3}, schema=schema))
    one_md = cat.load_table("a.x").metadata_location
    two_md = cat.load_table("a.b.t").metadata_location
    with sqlite3.connect(env["wh"] / "cat.db") as db:  # the catalog allows a dot in a name
        n = db.execute("UPDATE iceberg_tables SET table_name = 'b.t' WHERE table_namespace = 'a'"
                       " AND table_name = 'x'").rowcount
        assert n == 1
    metrics = env["wh"] / "health.prom"
    p = icm(env["wh"], env["cfg"], "--catalog", "cat", "--json", "health", "--all",
            "--metrics", str(metrics))
    assert p.returncode == 0, p.stderr
    lines = [json.loads(x) for x in p.stdout.splitlines()]
    assert lines[-1]["summary"]["tables"] == 3 and lines[-1]["summary"]["failed"] == 0
    by = {json.dumps(d["table_id"]): d for d in lines[:-1]}
    assert set(by) == {'["ns", "t"]', '["a", "b.t"]', '["a", "b", "t"]'}
    a_bt, ab_t = by['["a", "b.t"]'], by['["a", "b", "t"]']
    assert a_bt["namespace"] == "a" and ab_t["namespace"] == "a.b"
    assert a_bt["metadata_location"] == one_md and ab_t["metadata_location"] == two_md
    assert a_bt["snapshots"]["count"] == 1 and ab_t["snapshots"]["count"] == 2
    assert a_bt["referenced"]["all_snapshots"]["data_files"] == 1
    assert ab_t["referenced"]["all_snapshots"]["data_files"] == 2
    s = check_prometheus(metrics.read_text())
    assert ('namespace="a",table="a.b.t"', 1.0) in s["icemaint_health_snapshots"]
    assert ('namespace="a.b",table="a.b.t"', 2.0) in s["icemaint_health_snapshots"]
