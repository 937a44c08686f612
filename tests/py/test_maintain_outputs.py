"""The files `maintain` (and `health`) write besides stdout never cost the user a file.

Class: data loss by a typo. `--metrics FILE` used to be renamed over whatever FILE was
(`--metrics lake/cat.db` turned the catalog database into Prometheus text). It now follows
out_file.c's rules, as --plan-out and --log-out do: an existing FILE is replaced only when it
is an earlier metrics file (its first line is `# HELP icemaint_`), and neither FILE nor the --log-out DIR
may lie inside a table's location; all checked before the first table is touched. Also here:
journal names that fit a file name, and the sweep cutoff fixed once for the run.
Each test asserts the exit code, stdout, and which files exist afterwards (and their bytes).
"""
import json
import os
import subprocess
import time

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
        mask = os.umask(0)
        os.umask(mask)
        assert os.stat(m).st_mode & 0o777 == 0o666 & ~mask  # as a file fopen makes
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


def test_journal_name_too_long_is_bounded_and_unambiguous(tmp_path):
    """Class: a table that can never be maintained. DIR/<ns.table>.<command>.jsonl went over
    NAME_MAX for a legal 235-byte name, and the table failed on every run with --log-out."""
    cat, cfg = make_catalog(tmp_path / "lake")
    names = ["L" * 235, "L" * 234 + "M"]  # the same first 234 bytes
    strays = [add_table(cat, ("ns", n)) for n in names]
    logs = tmp_path / "logs"
    logs.mkdir()
    p, lines, summary = run(cfg, tmp_path, "--all", "--log-out", str(logs))
    assert p.returncode == 0, p.stderr
    assert [(x["table_id"], x["outcome"]) for x in lines] == [(["ns", n], "ok") for n in names]
    journals = [j for x in lines for j in x["journals"].values()]
    assert len(set(journals)) == 4
    assert sorted(os.listdir(logs)) == sorted(os.path.basename(j) for j in journals)
    for j in journals:
        name = os.path.basename(j)
        assert len(name.encode()) <= 255 and "~" in name and name.startswith("ns.LLL"), name
        assert os.path.dirname(j) == str(logs)
    for line, stray in zip(lines, strays):
        sweep = [json.loads(x) for x in
                 open(line["journals"]["remove-orphan-files"]).read().splitlines()]
        assert [x["path"] for x in sweep if x["type"] == "file"] == [f"file://{stray}"]
        assert not stray.exists()


def test_default_sweep_cutoff_fixed_once_for_every_table(tmp_path):
    """README and --help: the sweep's cutoff (default 3d) is fixed once for the whole run;
    each sweep used to compute now - 3d at its own start."""
    cat, cfg = make_catalog(tmp_path / "lake")
    strays = [add_table(cat, ("ns", n)) for n in ("a", "b", "c")]
    before = int(time.time() * 1000) - 3 * 86400 * 1000
    p, lines, summary = run(cfg, tmp_path, "ns", "--dry-run")
    after = int(time.time() * 1000) - 3 * 86400 * 1000
    assert p.returncode == 0, p.stderr
    cuts = {x["policy"]["sweep_older_than_ms"] for x in lines}
    assert len(lines) == 3 and len(cuts) == 1, cuts
    assert before <= cuts.pop() <= after
    assert all(x["sweep"]["total"] == 1 for x in lines) and all(s.exists() for s in strays)


def test_step_messages_name_their_table_and_journals_only_steps_that_ran(lake):
    """A step's warning names a file or a setting, not the table: with --parallel, lines of
    several tables interleave by step, so each step's stderr comes after a line naming its
    table and step. A skipped table (gc.enabled=false) writes no journal, and its line names
    none."""
    with lake["cat"].load_table(("ns", "a")).transaction() as tx:
        tx.set_properties({"history.expire.max-snapshot-age-ms": "1000"})
    with lake["cat"].load_table(("ns", "b")).transaction() as tx:
        tx.set_properties({"gc.enabled": "false"})
    logs = lake["root"] / "logs"
    logs.mkdir()
    p = icm(lake, "maintain", "--all", "--settle", "0s", "--parallel", "2",
            "--log-out", str(logs))
    assert p.returncode == 0, p.stderr
    lines = [json.loads(x) for x in p.stdout.splitlines()]
    by_table = {x["table"]: x for x in lines if "table" in x}
    assert by_table["ns.a"]["outcome"] == "ok"
    assert by_table["ns.b"]["outcome"] == "skipped"
    assert "journals" not in by_table["ns.b"]
    assert sorted(by_table["ns.a"]["journals"]) == ["expire-snapshots", "remove-orphan-files"]
    assert sorted(os.listdir(logs)) == sorted(
        os.path.basename(j) for j in by_table["ns.a"]["journals"].values())
    err = p.stderr.splitlines()
    warn = [i for i, x in enumerate(err) if "is not longer than the file-retention window" in x]
    assert len(warn) == 1, p.stderr
    heads = [x for x in err[:warn[0]] if x.startswith("icemaint maintain: ")]
    assert heads[-1] == "icemaint maintain: ns.a, remove-orphan-files:", p.stderr
    assert not any("ns.b" in x for x in err), p.stderr
    assert [s.exists() for s in lake["strays"]] == [False, True]  # ns.b skipped


def test_exclude_location_reaches_the_sweep_of_the_table_holding_it(lake):
    """A Delta table made inside ns.b's location refuses ns.b's sweep (its log's files look
    like orphans), and the refusal says to carve it out with --exclude-location; `maintain`
    takes that option too and gives it to the sweep of the table whose location holds it
    (ns.a's sweep, which it would make refuse as outside, never sees it)."""
    b_dir = lake["strays"][1].parent.parent
    events = b_dir / "events"
    (events / "_delta_log").mkdir(parents=True)
    part = events / "part-00000.parquet"
    part.write_bytes(b"p" * 64)
    (events / "_delta_log" / "00000000000000000000.json").write_text(json.dumps(
        {"add": {"path": "part-00000.parquet", "partitionValues": {}, "size": 64,
                 "modificationTime": 0, "dataChange": True}}) + "\n")
    past = time.time() - 10 * 86400
    for f in (part, events / "_delta_log" / "00000000000000000000.json"):
        os.utime(f, (past, past))
    delta = sorted(str(p) for p in events.rglob("*"))

    p = icm(lake, "maintain", "--all", "--settle", "0s")
    assert p.returncode == 5, p.stderr
    lines = {x["table"]: x for x in map(json.loads, p.stdout.splitlines()) if "table" in x}
    assert lines["ns.a"]["outcome"] == "ok" and lines["ns.b"]["outcome"] == "failed"
    assert "--exclude-location" in lines["ns.b"]["error"]["message"]
    assert [s.exists() for s in lake["strays"]] == [False, True]
    assert sorted(str(p) for p in events.rglob("*")) == delta

    p = icm(lake, "maintain", "--all", "--settle", "0s", "--exclude-location", str(events))
    assert p.returncode == 0, p.stderr
    lines = {x["table"]: x for x in map(json.loads, p.stdout.splitlines()) if "table" in x}
    assert lines["ns.b"]["outcome"] == "ok" and lines["ns.b"]["sweep"]["total"] == 1
    assert not any(s.exists() for s in lake["strays"])
    assert sorted(str(p) for p in events.rglob("*")) == delta  # the Delta table is untouched


@pytest.mark.parametrize("where", ["table_location", "namespace_folder", "through_a_link",
                                   "no_table"])
def test_data_loss_maintain_exclusion_dropped(lake, where):
    """Class: an exclusion the user gave, silently not passed on. `maintain` passed an
    --exclude-location only to a table whose location lay strictly above it by spelling: one
    equal to a table's location, or holding it, or spelled through a symbolic link, was
    dropped, and the files it named were swept. Now one at, below or above a table's location
    goes to that table's sweep, and one that concerns no table refuses the run before any
    table is maintained."""
    a_dir = lake["strays"][0].parent.parent
    b_dir = lake["strays"][1].parent.parent
    root = lake["root"]
    if where == "table_location":
        excl, kept = str(b_dir), [False, True]
    elif where == "namespace_folder":
        excl, kept = str(b_dir.parent), [True, True]
    elif where == "through_a_link":
        (root / "link").symlink_to(b_dir)
        excl, kept = str(root / "link" / "data"), None
    else:
        (root / "elsewhere").mkdir()
        excl, kept = str(root / "elsewhere"), None
    assert a_dir.parent == b_dir.parent
    p = icm(lake, "maintain", "--all", "--settle", "0s", "--exclude-location", excl)
    if kept is None:
        assert p.returncode == 5, p.stderr
        assert "--exclude-location: no table of this run" in p.stderr
        assert p.stdout == ""
        assert untouched(lake)
    else:
        assert p.returncode == 0, p.stderr
        assert [s.exists() for s in lake["strays"]] == kept
