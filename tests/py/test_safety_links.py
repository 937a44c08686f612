"""Data loss through symbolic links below a table root (the link-guard class).

Listing and planning work on names; a symbolic link inside a table gives a file a second name.
`T/data/alias -> T/data` makes `T/data/alias/x` the live `T/data/x`; `A/data/bl -> B/data`
makes `A/data/bl/y` table B's live file; a folder swapped for a link while a sweep settles sends
the sweep's deletes out of the table. The rule (README, "What the maintenance commands touch"):
a local file is deleted only if the folder it lies in is, by its real path, exactly the folder
its name says below the table's real root (the root itself may be reached through a link), and
the sweep deletes a file only if it is still the one it listed (same size and mtime, still older
than the cutoff). A file failing either is kept with a `warning:` line (exit 0: the run did what
it safely could). Writers:
`add-files` records a file named through such a link by where it really is. Expiry also keeps a
planned file that a retained snapshot references under another name through a link (section 5:
the keep set compares names, so without it the expired snapshot's direct name was deleted).

Every test checks the exact set of files afterwards and that PyIceberg still scans every
retained snapshot of every table involved.
"""
import json
import os
import subprocess
import time

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pyiceberg_sql = pytest.importorskip("pyiceberg.catalog.sql")
expressions = pytest.importorskip("pyiceberg.expressions")

CLI = os.environ.get("ICM_CLI")
SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])
KEPT = "reached through a symbolic link; kept"
SECOND_NAME = "a retained snapshot references this file under another name"
SWEEP_SECOND_NAME = "the table references this file under another name"


def warned(stderr, text, path):
    """A `warning:` line on stderr names path and says text."""
    return any(l.startswith("warning: ") and text in l and path in l for l in stderr.splitlines())

pytestmark = pytest.mark.skipif(CLI is None, reason="ICM_CLI not set")


class Warehouse:
    """A SQLite catalog over a warehouse folder, with the configuration the CLI reads."""

    def __init__(self, root):
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.config = root / "pyiceberg.yaml"
        uri, wh = f"sqlite:///{root}/cat.db", f"file://{root}"
        self.config.write_text(f"catalog:\n  default:\n    uri: {uri}\n    warehouse: {wh}\n")
        self.cat = pyiceberg_sql.SqlCatalog("default", uri=uri, warehouse=wh)
        self.cat.create_namespace("ns")

    def table(self, name, appends):
        t = self.cat.create_table(f"ns.{name}", schema=SCHEMA)
        for i in range(appends):
            t.append(pa.table({"id": [i], "v": [f"{name}{i}"]}, schema=SCHEMA))
        return self.root / "ns" / name

    def load(self, name):
        return self.cat.load_table(f"ns.{name}")

    def cli(self, *args):
        return subprocess.run([CLI, "--config", str(self.config), *args], cwd=self.root,
                              capture_output=True, text=True, timeout=120)

    def cli_start(self, *args):
        return subprocess.Popen([CLI, "--config", str(self.config), *args], cwd=self.root,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def write_parquet(path, v):
    pq.write_table(pa.table({"id": [1], "v": [v]}, schema=SCHEMA), str(path))


def age(*roots):
    old = time.time() - 10 * 86400
    for root in roots:
        for d, _dirs, names in os.walk(root):
            for n in names:
                os.utime(os.path.join(d, n), (old, old), follow_symlinks=False)


def files_under(root):
    """Every file and link below root by the name it has there (links not followed); the
    lease a running command holds is not a table file."""
    out = set()
    for d, dirs, names in os.walk(root):
        out.update(os.path.join(d, n) for n in names if n != ".icemaint-lease")
        out.update(os.path.join(d, n) for n in dirs if os.path.islink(os.path.join(d, n)))
    return out


def scan_every_snapshot(table):
    """PyIceberg reads every retained snapshot (a missing file fails the scan)."""
    rows = {}
    for snap in table.metadata.snapshots:
        rows[snap.snapshot_id] = table.scan(snapshot_id=snap.snapshot_id).to_arrow().num_rows
    return rows


def local(p):
    for prefix in ("file://", "file:"):
        if p.startswith(prefix):
            return p[len(prefix):]
    return p


def live_files(table):
    return {local(t.file.file_path) for t in table.scan().plan_files()}


# ---- 1: expiry, a name only expired snapshots reach is a live file's second name ----------

def test_expire_second_name_through_link_keeps_live_file(tmp_path):
    w = Warehouse(tmp_path)
    t_dir = w.table("t", 1)
    os.symlink(t_dir / "data", t_dir / "data" / "alias")
    write_parquet(t_dir / "data" / "x1.parquet", "x1")
    t = w.load("t")
    t.add_files([str(t_dir / "data" / "alias" / "x1.parquet")])
    w.load("t").delete(expressions.EqualTo("v", "x1"))
    w.load("t").add_files([str(t_dir / "data" / "x1.parquet")])
    time.sleep(1.2)
    before = files_under(tmp_path)
    r = w.cli("expire-snapshots", "ns.t", "--retain-last", "1", "--older-than", "1s")
    after = files_under(tmp_path)
    gone = before - after
    # only metadata of the expired snapshots went; the live file and its link stay
    assert str(t_dir / "data" / "x1.parquet") in after
    assert str(t_dir / "data" / "alias") in after
    assert gone and all(p.startswith(str(t_dir / "metadata")) for p in gone), gone
    t = w.load("t")
    assert live_files(t) >= {str(t_dir / "data" / "x1.parquet")}
    assert all(n >= 1 for n in scan_every_snapshot(t).values())
    # and the command said so: the plan keeps the second name of a retained file (the link
    # guard would have kept it at the delete)
    assert r.returncode == 0, r.stderr
    assert warned(r.stderr, SECOND_NAME, "data/alias/x1.parquet")


# ---- 2: expiry, a link inside table a leads to table b's live file -----------------------

def test_expire_through_link_keeps_other_tables_file(tmp_path):
    w = Warehouse(tmp_path)
    a_dir = w.table("a", 1)
    b_dir = w.table("b", 1)
    (b_file,) = live_files(w.load("b"))
    os.symlink(b_dir / "data", a_dir / "data" / "bl")
    via = str(a_dir / "data" / "bl" / os.path.basename(b_file))
    w.load("a").add_files([via])
    w.load("a").delete(expressions.EqualTo("v", "b0"))
    time.sleep(1.2)
    before_b = files_under(b_dir)
    before = files_under(tmp_path)
    r = w.cli("expire-snapshots", "ns.a", "--retain-last", "1", "--older-than", "1s")
    assert files_under(b_dir) == before_b
    gone = before - files_under(tmp_path)
    assert gone and all(p.startswith(str(a_dir / "metadata")) for p in gone), gone
    assert scan_every_snapshot(w.load("b")) and all(
        n == 1 for n in scan_every_snapshot(w.load("b")).values())
    scan_every_snapshot(w.load("a"))
    # and the command said so: the name leads into b's data folder, so expiry's hold on other
    # catalog tables' places (compared by where they really are) keeps it before the link guard
    assert r.returncode == 0, r.stderr
    assert warned(r.stderr, "another catalog table may use it (table ns.b", via), r.stderr


# ---- 3: the sweep's file list names files through linked folders ------------------------

def file_list(path, table_dir, extra):
    lines = [f"{p}\t1\t1700000000000" for p in sorted(files_under(table_dir))
             if not os.path.islink(p)]
    lines += [f"{p}\t900\t1700000000000" for p in extra]
    path.write_text("\n".join(lines) + "\n")


def test_file_list_alias_of_live_file_is_kept(tmp_path):
    w = Warehouse(tmp_path)
    t_dir = w.table("t", 2)
    os.symlink(t_dir / "data", t_dir / "data" / "alias")
    live = sorted(live_files(w.load("t")))
    age(tmp_path)
    via = str(t_dir / "data" / "alias" / os.path.basename(live[0]))
    file_list(tmp_path / "inv.tsv", t_dir, [via])
    before = files_under(tmp_path)
    # the dry run says what the real run keeps
    dry = w.cli("--json", "remove-orphan-files", "ns.t", "--file-list",
                str(tmp_path / "inv.tsv"), "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert [(o["path"], o["state"]) for o in json.loads(dry.stdout)["orphans"]] == [(via, "kept")]
    r = w.cli("remove-orphan-files", "ns.t", "--file-list", str(tmp_path / "inv.tsv"),
              "--settle", "0s")
    assert files_under(tmp_path) == before
    assert all(n >= 1 for n in scan_every_snapshot(w.load("t")).values())
    # and the command said so
    assert r.returncode == 0, r.stderr
    assert warned(r.stderr, KEPT, via)

def test_file_list_through_linked_folder_keeps_other_tables_file(tmp_path):
    w = Warehouse(tmp_path)
    a_dir = w.table("a", 1)
    b_dir = w.table("b", 1)
    os.symlink(b_dir / "data", a_dir / "data" / "bdata")
    (b_file,) = live_files(w.load("b"))
    age(tmp_path)
    via = str(a_dir / "data" / "bdata" / os.path.basename(b_file))
    file_list(tmp_path / "inv.tsv", a_dir, [via])
    before = files_under(tmp_path)
    r = w.cli("remove-orphan-files", "ns.a", "--file-list", str(tmp_path / "inv.tsv"),
              "--settle", "0s")
    assert files_under(tmp_path) == before
    assert scan_every_snapshot(w.load("b")) == {
        s.snapshot_id: 1 for s in w.load("b").metadata.snapshots}
    scan_every_snapshot(w.load("a"))
    # and the command said so
    assert r.returncode == 0, r.stderr
    assert warned(r.stderr, KEPT, via)


# ---- 4: the sweep's settle window: a folder swapped for a link, a file replaced ----------

def test_sweep_folder_swapped_for_link_during_settle(tmp_path):
    w = Warehouse(tmp_path / "wh")
    t_dir = w.table("t", 1)
    (t_dir / "data" / "stage").mkdir()
    (t_dir / "data" / "stage" / "o.bin").write_text("junk")
    (t_dir / "data" / "orphan.bin").write_text("orphan")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "o.bin").write_text("PRECIOUS")
    age(tmp_path)
    p = w.cli_start("remove-orphan-files", "ns.t", "--settle", "3s")
    time.sleep(1.5)
    os.rename(t_dir / "data" / "stage", t_dir / "data" / "stage.old")
    os.symlink(outside, t_dir / "data" / "stage")
    before = files_under(tmp_path)
    _out, err = p.communicate(timeout=120)
    # the plain orphan went; nothing else did
    assert files_under(tmp_path) == before - {str(t_dir / "data" / "orphan.bin")}
    assert (outside / "o.bin").read_text() == "PRECIOUS"
    assert all(n == 1 for n in scan_every_snapshot(w.load("t")).values())
    # and the command said so
    assert p.returncode == 0, err
    assert warned(err, KEPT, "data/stage/o.bin")

def test_sweep_file_replaced_during_settle_is_kept(tmp_path):
    w = Warehouse(tmp_path)
    t_dir = w.table("t", 1)
    staging = t_dir / "data" / "staging.parquet"
    staging.write_text("old")
    (t_dir / "data" / "orphan.bin").write_text("orphan")
    age(tmp_path)
    p = w.cli_start("remove-orphan-files", "ns.t", "--settle", "3s")
    time.sleep(1.5)
    (t_dir / "data" / "staging.tmp").write_text("NEW-WRITER-FILE")
    os.rename(t_dir / "data" / "staging.tmp", staging)
    before = files_under(tmp_path)
    _out, err = p.communicate(timeout=120)
    assert files_under(tmp_path) == before - {str(t_dir / "data" / "orphan.bin")}
    assert staging.read_text() == "NEW-WRITER-FILE"
    assert all(n == 1 for n in scan_every_snapshot(w.load("t")).values())
    # and the command said so
    assert p.returncode == 0, err
    assert warned(err, "changed since it was listed", "staging.parquet")


# ---- writers: add-files through a link records where the file really is -------------------

def test_add_files_through_link_records_real_name(tmp_path):
    w = Warehouse(tmp_path)
    t_dir = w.table("t", 1)
    b_dir = w.table("b", 1)
    os.symlink(t_dir / "data", t_dir / "data" / "alias")
    os.symlink(b_dir / "data", t_dir / "data" / "bl")
    write_parquet(t_dir / "data" / "x1.parquet", "x1")
    (b_file,) = live_files(w.load("b"))
    r = w.cli("add-files", "ns.t", str(t_dir / "data" / "alias" / "x1.parquet"),
              str(t_dir / "data" / "bl" / os.path.basename(b_file)))
    assert r.returncode == 0, r.stderr
    t = w.load("t")
    names = live_files(t)
    assert str(t_dir / "data" / "x1.parquet") in names
    assert os.path.realpath(b_file) in {os.path.realpath(n) for n in names}
    assert not any("/alias/" in n or "/bl/" in n for n in names), names
    assert all(n >= 1 for n in scan_every_snapshot(t).values())


# ---- 5: expiry, one file under two names: a retained snapshot reaches it through a link ----
#
# The class: a snapshot expiry deletes a file that a retained snapshot still reads, because the
# retained snapshot names it through a symbolic link and an expired snapshot names it another
# way (directly, or through another link). The keep set compares names and the link guard only
# looks at the name being deleted, so the direct name looked unreferenced. The rule: a planned
# local file whose real path (every link resolved) is the real path of a file a retained
# snapshot references is kept, named as a warning; the dry run's plan leaves it out too.
# Each case: one append (live throughout); snapshot E adds the file under `expired_name` and an
# orphan data/orphan-g.parquet; a delete drops both; snapshot R adds the file under
# `retained_name`. Expiring all but R deletes the orphan and the metadata only the expired
# snapshots reached, and nothing else.

def expire_one_file_two_names(tmp_path, make):
    w = Warehouse(tmp_path / "wh")
    t_dir = w.table("t", 1)
    real, expired_name, retained_name = make(tmp_path, t_dir)
    write_parquet(real, "f")
    orphan = t_dir / "data" / "orphan-g.parquet"
    # (another size than f: a file outside the table that a retained snapshot references
    # keeps every candidate of its size, since one damaged entry may have been that file's)
    write_parquet(orphan, "g" * 40)
    w.load("t").add_files([str(expired_name), str(orphan)])
    w.load("t").delete(expressions.In("v", {"f", "g" * 40}))
    w.load("t").add_files([str(retained_name)])
    time.sleep(1.2)
    args = ("expire-snapshots", "ns.t", "--retain-last", "1", "--older-than", "1s")
    dry = w.cli("--json", *args, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    before = files_under(tmp_path)
    r = w.cli(*args)
    after = files_under(tmp_path)
    t = w.load("t")
    assert len(t.metadata.snapshots) == 1
    # exactly the orphan and the lists and manifests no retained snapshot references went
    kept_md = {local(s.manifest_list) for s in t.metadata.snapshots}
    kept_md |= {local(m.manifest_path) for s in t.metadata.snapshots for m in s.manifests(t.io)}
    md_gone = {p for p in before if p.startswith(str(t_dir / "metadata") + "/")
               and p.endswith(".avro") and p not in kept_md}
    assert md_gone, "the expired snapshots' lists and manifests"
    assert before - after == {str(orphan)} | md_gone, sorted(before - after)
    assert os.path.exists(real) and os.path.exists(local(str(retained_name)))
    # the retained snapshot reads the file (and the first append's)
    assert scan_every_snapshot(t) == {t.metadata.current_snapshot_id: 2}
    assert r.returncode == 0, r.stderr
    # the dry run planned exactly what the real run deleted
    plan = json.loads(dry.stdout)
    planned = {local(f["path"]) for k in ("deleted_files", "deleted_manifests",
                                         "deleted_statistics_files", "deleted_checksum_files")
               for f in plan[k]}
    assert {os.path.realpath(p) for p in planned} == \
        {os.path.realpath(p) for p in {str(orphan)} | md_gone}, sorted(planned)
    return r, expired_name


def test_expiry_keeps_file_a_retained_snapshot_names_through_a_link(tmp_path):
    def make(_tmp, t_dir):
        (t_dir / "data" / "real").mkdir()
        os.symlink("real", t_dir / "data" / "lnk")
        return (t_dir / "data" / "real" / "f.parquet", t_dir / "data" / "real" / "f.parquet",
                t_dir / "data" / "lnk" / "f.parquet")
    r, expired_name = expire_one_file_two_names(tmp_path, make)
    assert warned(r.stderr, SECOND_NAME, str(expired_name)), r.stderr


def test_expiry_keeps_file_an_expired_snapshot_names_through_a_link(tmp_path):
    def make(_tmp, t_dir):
        (t_dir / "data" / "real").mkdir()
        os.symlink("real", t_dir / "data" / "lnk")
        return (t_dir / "data" / "real" / "f.parquet", t_dir / "data" / "lnk" / "f.parquet",
                t_dir / "data" / "real" / "f.parquet")
    r, expired_name = expire_one_file_two_names(tmp_path, make)
    assert warned(r.stderr, SECOND_NAME, str(expired_name)), r.stderr


def test_expiry_keeps_file_a_retained_snapshot_names_through_a_link_and_dotdot(tmp_path):
    # data/lnk/.. is data/real (the kernel's `..` after a link), not data (the name's); a
    # `file:` URI, as PyIceberg's reader then opens it through the kernel
    def make(_tmp, t_dir):
        (t_dir / "data" / "real" / "sub").mkdir(parents=True)
        os.symlink("real/sub", t_dir / "data" / "lnk")
        return (t_dir / "data" / "real" / "f.parquet", t_dir / "data" / "real" / "f.parquet",
                "file://" + str(t_dir / "data" / "lnk") + "/../f.parquet")
    r, expired_name = expire_one_file_two_names(tmp_path, make)
    assert warned(r.stderr, SECOND_NAME, str(expired_name)), r.stderr


def test_expiry_keeps_file_a_retained_snapshot_names_through_a_linked_folder_higher_up(
        tmp_path):
    # the link is a folder of the table location above the file's folder: t/d2 -> data
    def make(_tmp, t_dir):
        (t_dir / "data" / "real").mkdir()
        os.symlink("data", t_dir / "d2")
        return (t_dir / "data" / "real" / "f.parquet", t_dir / "data" / "real" / "f.parquet",
                t_dir / "d2" / "real" / "f.parquet")
    r, expired_name = expire_one_file_two_names(tmp_path, make)
    assert warned(r.stderr, SECOND_NAME, str(expired_name)), r.stderr


def test_expiry_keeps_file_a_retained_snapshot_names_through_a_file_link(tmp_path):
    # data/a.parquet -> b.parquet: the retained snapshot reads b.parquet through a.parquet
    def make(_tmp, t_dir):
        os.symlink("b.parquet", t_dir / "data" / "a.parquet")
        return (t_dir / "data" / "b.parquet", t_dir / "data" / "b.parquet",
                t_dir / "data" / "a.parquet")
    r, expired_name = expire_one_file_two_names(tmp_path, make)
    assert warned(r.stderr, SECOND_NAME, str(expired_name)), r.stderr


def test_expiry_keeps_file_a_retained_snapshot_names_through_a_link_outside_the_table(tmp_path):
    # the retained name lies outside the table (a link there into the table's data folder)
    def make(tmp, t_dir):
        os.symlink(t_dir / "data", tmp / "outside-link")
        return (t_dir / "data" / "f.parquet", t_dir / "data" / "f.parquet",
                tmp / "outside-link" / "f.parquet")
    r, expired_name = expire_one_file_two_names(tmp_path, make)
    assert warned(r.stderr, SECOND_NAME, str(expired_name)), r.stderr


# ---- 6: the sweep, one file under two names: a retained snapshot reaches it through a link ---
#
# The class: the orphan sweep deletes a file that a retained snapshot still reads, because the
# snapshot names it through a symbolic link inside the table, and the listing (which never
# follows links below the listed folder) shows it under its real name only, which the keep set
# did not hold. The rule: when a link lies below the table's roots, every referenced local file
# is resolved and the keep set also holds the name the listing gives its real path; a listed
# file whose real path is a referenced file's (a link to it, say) is kept too.
# Each case: one append; the file added under `name`; a real orphan data/orphan-g.parquet,
# which the sweep deletes, and nothing else; the dry run plans exactly that.

def sweep_one_file_two_names(tmp_path, make):
    w = Warehouse(tmp_path / "wh")
    t_dir = w.table("t", 1)
    real, name = make(t_dir)
    write_parquet(real, "f")
    orphan = t_dir / "data" / "orphan-g.parquet"
    write_parquet(orphan, "g")
    w.load("t").add_files([str(name)])
    age(tmp_path)
    args = ("remove-orphan-files", "ns.t", "--older-than", "5d")
    dry = w.cli("--json", *args, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    before = files_under(tmp_path)
    r = w.cli(*args)
    after = files_under(tmp_path)
    assert r.returncode == 0, r.stderr
    # exactly the orphan went: the real file, its link and every other table file stay
    assert before - after == {str(orphan)}, sorted(before - after)
    assert os.path.exists(real) and os.path.exists(local(str(name)))
    # the dry run planned exactly what the real run deleted
    planned = {local(o["path"]) for o in json.loads(dry.stdout)["orphans"]
               if o["state"] == "planned"}
    assert planned == {str(orphan)}, sorted(planned)
    t = w.load("t")
    assert all(n >= 1 for n in scan_every_snapshot(t).values())
    assert scan_every_snapshot(t)[t.metadata.current_snapshot_id] == 2
    return r


def test_sweep_keeps_file_a_retained_snapshot_names_through_a_file_link(tmp_path):
    # data/a.parquet -> b.parquet: the snapshot reads b.parquet through a.parquet
    def make(t_dir):
        os.symlink("b.parquet", t_dir / "data" / "a.parquet")
        return t_dir / "data" / "b.parquet", t_dir / "data" / "a.parquet"
    sweep_one_file_two_names(tmp_path, make)


def test_sweep_keeps_file_a_retained_snapshot_names_through_a_folder_link(tmp_path):
    # data/lnk -> real: the listing shows the file as data/real/f.parquet only
    def make(t_dir):
        (t_dir / "data" / "real").mkdir()
        os.symlink("real", t_dir / "data" / "lnk")
        return t_dir / "data" / "real" / "f.parquet", t_dir / "data" / "lnk" / "f.parquet"
    sweep_one_file_two_names(tmp_path, make)


def test_sweep_keeps_file_a_retained_snapshot_names_through_a_link_and_dotdot(tmp_path):
    # data/lnk/.. is data/real (the kernel's `..` after a link), not data (the name's)
    def make(t_dir):
        (t_dir / "data" / "real" / "sub").mkdir(parents=True)
        os.symlink("real/sub", t_dir / "data" / "lnk")
        return (t_dir / "data" / "real" / "f.parquet",
                "file://" + str(t_dir / "data" / "lnk") + "/../f.parquet")
    sweep_one_file_two_names(tmp_path, make)


def test_sweep_keeps_file_a_retained_snapshot_names_through_a_linked_folder_higher_up(tmp_path):
    # the link is a folder of the table location above the file's folder: t/d2 -> data
    def make(t_dir):
        (t_dir / "data" / "real").mkdir()
        os.symlink("data", t_dir / "d2")
        return t_dir / "data" / "real" / "f.parquet", t_dir / "d2" / "real" / "f.parquet"
    sweep_one_file_two_names(tmp_path, make)


def test_sweep_keeps_a_link_to_a_file_a_retained_snapshot_names(tmp_path):
    # the snapshot names b.parquet; the listing shows the link a.parquet -> b.parquet as the
    # file too: it is the same file, kept (and never deleted through the link's name)
    def make(t_dir):
        os.symlink("b.parquet", t_dir / "data" / "a.parquet")
        return t_dir / "data" / "b.parquet", t_dir / "data" / "b.parquet"
    r = sweep_one_file_two_names(tmp_path, make)
    assert any(l.startswith("warning: ") and "a.parquet" in l and SWEEP_SECOND_NAME in l
               for l in r.stderr.splitlines()), r.stderr


def test_sweep_deletes_a_real_orphan_beside_a_link(tmp_path):
    # a link below the root (link mode: every reference resolved) keeps only what the table
    # references under some name: the real orphan beside it still goes
    def make(t_dir):
        (t_dir / "data" / "real").mkdir()
        os.symlink("real", t_dir / "data" / "lnk")
        return t_dir / "data" / "real" / "f.parquet", t_dir / "data" / "real" / "f.parquet"
    sweep_one_file_two_names(tmp_path, make)


def test_sweep_keeps_every_candidate_when_a_reference_through_a_link_cannot_be_resolved(
        tmp_path):
    # data/lnk becomes a link loop after the file was added through it: where the referenced
    # file is cannot be told, so it may be any listed file: nothing is deleted, and every
    # candidate is named in a warning (with or without the presence check)
    w = Warehouse(tmp_path / "wh")
    t_dir = w.table("t", 1)
    (t_dir / "data" / "real").mkdir()
    os.symlink("real", t_dir / "data" / "lnk")
    real = t_dir / "data" / "real" / "f.parquet"
    write_parquet(real, "f")
    orphan = t_dir / "data" / "orphan-g.parquet"
    write_parquet(orphan, "g")
    w.load("t").add_files([str(t_dir / "data" / "lnk" / "f.parquet")])
    os.remove(t_dir / "data" / "lnk")
    os.symlink("lnk", t_dir / "data" / "lnk")
    age(tmp_path)
    before = files_under(tmp_path)
    for extra in ((), ("--no-verify",)):
        args = ("remove-orphan-files", "ns.t", "--older-than", "5d", *extra)
        dry = w.cli("--json", *args, "--dry-run")
        assert dry.returncode == 0, dry.stderr
        assert [o for o in json.loads(dry.stdout)["orphans"] if o["state"] == "planned"] == []
        r = w.cli(*args)
        assert files_under(tmp_path) == before
        assert r.returncode == 0, r.stderr
        for kept in (orphan, real):
            assert warned(r.stderr, "cannot be told", str(kept)), r.stderr
