"""The files `maintain` (and `health`) write besides stdout never cost the user a file.

Class: data loss by a typo. `--metrics FILE` used to be renamed over whatever FILE was
(`--metrics lake/cat.db` turned the catalog database into Prometheus text). It now follows
out_file.c's rules, as --plan-out and --log-out do: an existing FILE is replaced only when it
is an earlier metrics file (its first line is `# HELP icemaint_`), and neither FILE nor the --log-out DIR
may lie inside a table's location; all checked before the first table is touched.
Each test asserts the exit code, stdout, and which files exist afterwards (and their bytes).
"""
import os
import subprocess

import pytest

from test_maintain_identity import CLI, add_table, make_catalog, run  # noqa: F401


@pytest.fixture
def lake(tmp_path):
    cat, cfg = make_catalog(tmp_path / "lake")
    strays = [add_table(cat, ("ns", "a")), add_table(cat, ("ns", "b"))]
    return {"cat": cat, "cfg": cfg, "root": tmp_path, "strays": strays}


def icm(lake, *args):
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("PYICEBERG_")}
    env["HOME"] = str(lake["root"])
    return subprocess.run([CLI, "--config", str(lake["cfg"]), "--catalog", "c", *args],
                          cwd=lake["root"], env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)


def untouched(lake):
    return all(s.exists() for s in lake["strays"])


def test_metrics_clobbers_no_other_file(lake):
    db = lake["root"] / "lake" / "cat.db"
    before = db.read_bytes()
    for cmd in (["maintain", "--all", "--settle", "0s"], ["health", "--all"]):
        p = icm(lake, *cmd, "--metrics", str(db))
        assert p.returncode == 5, (cmd, p.stderr)
        assert "--metrics" in p.stderr and "earlier icemaint metrics file" in p.stderr
        assert p.stdout == ""
        assert db.read_bytes() == before
        assert untouched(lake)
    assert not [f for f in os.listdir(db.parent) if ".tmp." in f]


def test_metrics_replaces_an_earlier_metrics_file(lake):
    m = lake["root"] / "m.prom"
    for cmd, first in ((["maintain", "--all", "--settle", "0s", "--dry-run"], "maintain"),
                       (["health", "--all"], "health"),
                       (["maintain", "--all", "--settle", "0s", "--dry-run"], "maintain")):
        p = icm(lake, *cmd, "--metrics", str(m))
        assert p.returncode == 0, (cmd, p.stderr)
        text = m.read_text()
        assert text.startswith(f"# HELP icemaint_{first}_")
        assert f"icemaint_{first}_exit_code 0\n" in text
    assert untouched(lake)
    assert sorted(os.listdir(lake["root"])) == ["lake", "m.prom"]  # no temporary left


def test_metrics_inside_a_table_location_is_refused_up_front(lake):
    loc = lake["strays"][1].parent  # ns.b's data folder
    m = loc / "m.prom"
    for cmd in (["maintain", "--all", "--settle", "0s"], ["health", "--all"]):
        p = icm(lake, *cmd, "--metrics", str(m))
        assert p.returncode == 5, (cmd, p.stderr)
        assert "inside the table's location" in p.stderr
        assert not m.exists()
        assert untouched(lake)  # ns.a, listed first, was not maintained either
    assert sorted(os.listdir(loc)) == sorted(["stray-old.parquet"] + [
        f for f in os.listdir(loc) if f.endswith(".parquet") and f != "stray-old.parquet"])
    p = icm(lake, "maintain", "--all", "--settle", "0s")
    assert p.returncode == 0 and not any(s.exists() for s in lake["strays"])


def test_log_out_inside_a_table_location_is_refused_up_front(lake):
    logs = lake["strays"][1].parent / "logs"  # inside ns.b
    logs.mkdir()
    p = icm(lake, "maintain", "--all", "--settle", "0s", "--log-out", str(logs))
    assert p.returncode == 5, p.stderr
    assert "--log-out" in p.stderr and "inside the table's location" in p.stderr
    assert p.stdout == "" and os.listdir(logs) == []
    assert untouched(lake)
