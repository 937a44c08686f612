"""Output that cannot fail after deleting, checksum companions, and messages, on real PyIceberg
tables through the icemaint CLI (env ICM_CLI):

  * printable output: file names that are not UTF-8 or hold control characters are swept and
    reported, in JSON with the lossless escape (`\\udcXY`, Python's surrogateescape: the test
    gets the exact bytes back with os.fsencode) and in text with `\\n`, `\\xNN`, one row per
    file; a report that cannot be printed after deletes says how many files went;
  * Hadoop checksum companions (`.NAME.crc`) are planned (kind "checksum") by the sweep and by
    expiry, so the dry run, the plan file and the report list everything a run deletes, and a
    companion of a kept file is never planned;
  * messages: every warning starts with `warning:`, an unreadable list of an expired
    snapshot is a warning, a fresh unparseable `*.metadata.json` does not block a sweep (an old
    one refuses, named), a path too long gets its reason, -q leaves only errors on stderr, and
    a cutoff in the future is explained.

Each test asserts exactly which files exist afterwards and that PyIceberg still reads every
retained snapshot.
"""
import glob
import json
import os
import re
import subprocess
import time

import pytest

pa = pytest.importorskip("pyarrow")
pytest.importorskip("pyiceberg.catalog.sql")

from safety_helpers import sql_table_of_three_appends  # noqa: E402

CLI = os.environ.get("ICM_CLI")
TEN_DAYS_S = 10 * 86400
CRC = b"crc\x00\x00\x00\x02\x00\x11\x22\x33\x44"  # Hadoop's header, then one checksum

# names a file listed under a table may have: not UTF-8, control characters, a backslash,
# valid non-ASCII text
ODD_NAMES = [b"bad\xff\xfe.parquet", b"new\nline.parquet", b"tab\there.parquet",
             b"back\\slash.parquet", b"ctl\x1b[31m.parquet", "caf\u00e9.parquet".encode()]


@pytest.fixture
def table(tmp_path):
    if not CLI or not os.path.exists(CLI):
        pytest.fail("ICM_CLI does not name the built icemaint binary")
    return sql_table_of_three_appends(tmp_path, "out")


def run(tbl, *args, stdout=subprocess.PIPE):
    """icemaint with the table's catalog; output as bytes (it may hold anything)."""
    return subprocess.run([CLI, "--config", tbl["cfg"], "--catalog", "out", *args],
                          stdout=stdout, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)


def ok(tbl, *args):
    p = run(tbl, *args)
    assert p.returncode == 0, (args, p.returncode, p.stderr)
    return p


def age_all(path, seconds=TEN_DAYS_S):
    old = time.time() - seconds
    for f in glob.glob(os.path.join(os.fsencode(path), b"**", b"*"), recursive=True):
        os.utime(f, (old, old))


def files_under(path):
    """Every file below `path`, as bytes."""
    root = os.fsencode(path)
    return {os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs}


def read_every_snapshot(tbl):
    t = tbl["cat"].load_table("ns.t")
    return {s.snapshot_id: t.scan(snapshot_id=s.snapshot_id).to_arrow().num_rows
            for s in t.metadata.snapshots}


def local(location: str) -> bytes:
    """A `file:` location from a JSON report as the exact bytes of its local path."""
    path = re.sub(r"^file:(//)?", "", location)
    return os.fsencode(path)


def text_unescape(s: bytes) -> bytes:
    """The bytes an icemaint text escape stands for (README "Output")."""
    out, i = bytearray(), 0
    while i < len(s):
        c = s[i:i + 1]
        assert c not in (b"\n", b"\r", b"\t") and (c >= b" " or c == b""), s
        if c != b"\\":
            out += c
            i += 1
            continue
        e = s[i + 1:i + 2]
        if e == b"x":
            out.append(int(s[i + 2:i + 4], 16))
            i += 4
        else:
            out += {b"\\": b"\\", b"n": b"\n", b"r": b"\r", b"t": b"\t"}[e]
            i += 2
    return bytes(out)


def stderr_lines(p):
    return [line for line in p.stderr.split(b"\n") if line]


def write_crc(path: bytes, body=CRC) -> bytes:
    d, n = os.path.split(path)
    crc = os.path.join(d, b"." + n + b".crc")
    with open(crc, "wb") as f:
        f.write(body)
    return crc


def plant_odd_names(tbl):
    data = os.fsencode(tbl["dir"] / "data")
    planted = set()
    for n in ODD_NAMES:
        p = os.path.join(data, n)
        with open(p, "wb") as f:
            f.write(b"stray")
        planted.add(p)
    return planted


# ---- printable output (data-loss class "output that fails after deleting") -------------------

def test_orphan_names_not_utf8_are_swept_and_reported_losslessly_in_json(table):
    """Today's main deleted these orphans and then exited 1 with "out of memory": no record of
    what it deleted."""
    planted = plant_odd_names(table)
    age_all(table["dir"])
    before_files = files_under(table["dir"])
    before = read_every_snapshot(table)
    p = run(table, "--json", "remove-orphan-files", "ns.t")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)  # one document; lone surrogates are valid JSON for Python
    assert {local(o["path"]) for o in doc["orphans"]} == planted
    assert all(o["state"] == "deleted" and o["kind"] == "data" for o in doc["orphans"])
    assert doc["deleted"] == len(planted) and doc["failed"] == 0
    # the escape is the documented one: each invalid byte 0xXY as \udcXY
    assert b'bad\\udcff\\udcfe.parquet"' in p.stdout and b"new\\nline.parquet" in p.stdout
    assert files_under(table["dir"]) == before_files - planted
    assert read_every_snapshot(table) == before


def test_orphan_names_with_control_bytes_stay_one_row_in_text(table):
    """Text output printed control characters raw: a newline split a row."""
    planted = plant_odd_names(table)
    age_all(table["dir"])
    before_files = files_under(table["dir"])
    before = read_every_snapshot(table)
    for dry in (True, False):
        p = run(table, "remove-orphan-files", "ns.t", *(["--dry-run"] if dry else []))
        assert p.returncode == 0, p.stderr
        lines = p.stdout.split(b"\n")
        assert lines[-1] == b""
        lines = lines[:-1]
        # header, one row per orphan, two summary lines
        assert len(lines) == 1 + len(planted) + 2, lines
        assert lines[0].split() == [b"KIND", b"SIZE_BYTES", b"MODIFIED", b"STATE", b"PATH"]
        rows = [re.match(rb"^(\S+) +(\S+) +(\S+) +(\S+) +(\S+)$", r) for r in lines[1:-2]]
        assert all(rows), lines
        assert {m.group(4) for m in rows} == {b"planned" if dry else b"deleted"}
        assert {local(text_unescape(m.group(5)).decode("utf-8", "surrogateescape"))
                for m in rows} == planted
        assert all(b >= 0x20 and b != 0x7f for b in p.stdout.replace(b"\n", b"")
                   if b < 0x80), "a raw control byte reached stdout"
        assert re.search(rb"data/bad\\xff\\xfe\.parquet$", p.stdout, re.M)
        assert re.search(rb"data/new\\nline\.parquet$", p.stdout, re.M)
        assert re.search(rb"data/back\\\\slash\.parquet$", p.stdout, re.M)
        want = before_files if dry else before_files - planted
        assert files_under(table["dir"]) == want
    assert read_every_snapshot(table) == before


def test_error_line_naming_a_file_with_a_newline_stays_one_line(table, tmp_path):
    bad = os.path.join(os.fsencode(tmp_path), b"no\nsuch\xff")
    for args in (["inspect", bad], ["--json", "inspect", bad]):
        p = subprocess.run([CLI, *args], capture_output=True)
        assert p.returncode == 1
        assert p.stderr == (b"icemaint: " + os.fsencode(tmp_path) +
                            b"/no\\nsuch\\xff: no such table directory or metadata file\n")
    doc = json.loads(p.stdout)
    assert local(doc["error"]["message"].split(": ")[0]) == bad


def test_report_that_cannot_be_printed_after_deletes_says_what_was_deleted(table):
    """A failure while printing the final report never hides a delete."""
    planted = plant_odd_names(table)
    age_all(table["dir"])
    before_files = files_under(table["dir"])
    with open("/dev/full", "wb") as full:
        p = run(table, "--json", "remove-orphan-files", "ns.t", stdout=full)
    assert p.returncode == 1
    assert (b"the report could not be printed (cannot write to stdout), but the run went "
            b"through: %d orphan files were deleted" % len(planted)) in p.stderr
    assert files_under(table["dir"]) == before_files - planted


def test_data_file_named_with_a_control_character_is_listed_on_one_row(table):
    """`files` printed a name holding a newline raw, which split its row; --json keeps it."""
    data = os.fsencode(table["dir"] / "data")
    src = sorted(f for f in os.listdir(data) if f.endswith(b".parquet"))[0]
    odd = os.path.join(data, b"odd\tand\nname.parquet")
    with open(os.path.join(data, src), "rb") as f, open(odd, "wb") as g:
        g.write(f.read())
    ok(table, "add-files", "ns.t", odd)
    doc = json.loads(ok(table, "--json", "files", "ns.t").stdout)
    assert odd in {local(f["path"]) for f in doc["files"]}
    lines = ok(table, "files", "ns.t").stdout.split(b"\n")
    rows = [line for line in lines if line.endswith(b"odd\\tand\\nname.parquet")]
    assert len(rows) == 1 and text_unescape(rows[0].split()[-1]) == odd
    assert len(lines) == 1 + 4 + 1 + 1  # header, 4 files, summary, final newline


def test_add_files_refuses_a_name_that_is_not_utf8(table):
    """Manifests record file paths as Avro (UTF-8) strings: add-files of a name that is not
    UTF-8 committed a manifest PyIceberg could no longer decode (every scan failed). It is
    refused with one line naming the file, and the table is unchanged."""
    data = os.fsencode(table["dir"] / "data")
    src = sorted(f for f in os.listdir(data) if f.endswith(b".parquet"))[0]
    odd = os.path.join(data, b"odd\xff.parquet")
    with open(os.path.join(data, src), "rb") as f, open(odd, "wb") as g:
        g.write(f.read())
    before = files_under(table["dir"])
    p = run(table, "add-files", "ns.t", odd)
    assert p.returncode == 1, p.stderr
    assert p.stderr.count(b"\n") == 1 and b"odd\\xff.parquet" in p.stderr
    assert b"not valid UTF-8" in p.stderr
    assert files_under(table["dir"]) == before
    t = table["cat"].load_table("ns.t")
    assert len(t.scan().to_arrow()) > 0


@pytest.mark.parametrize("command", ["create-branch", "create-tag"])
def test_ref_name_that_is_not_utf8_is_refused(table, command):
    """Metadata is JSON, whose strings are UTF-8: a ref name that is not (`br\\xff`) was
    reported as "out of memory" at commit. It is refused naming the ref and what is wrong,
    exit 1 (bad input, as add-files' name that is not UTF-8), and nothing is written."""
    before = files_under(table["dir"])
    before_meta = table["cat"].load_table("ns.t").metadata_location
    p = run(table, command, "ns.t", b"br\xff")
    assert p.returncode == 1, p.stderr
    assert p.stderr == (b"icemaint: br\\xff: the ref name is not valid UTF-8 (Iceberg "
                        b"metadata records ref names as UTF-8 strings)\n")
    assert files_under(table["dir"]) == before
    t = table["cat"].load_table("ns.t")
    assert t.metadata_location == before_meta
    assert set(t.metadata.refs) == {"main"}


# ---- checksum companions are planned ---------------------------------------------------------

def test_checksum_companion_is_planned_and_deleted_with_its_orphan(table, tmp_path):
    data = os.fsencode(table["dir"] / "data")
    live = sorted(f for f in os.listdir(data) if f.endswith(b".parquet"))[0]
    live_crc = write_crc(os.path.join(data, live))        # its file is kept: so is it
    stray = os.path.join(data, b"stray.parquet")
    with open(stray, "wb") as f:
        f.write(b"stray")
    stray_crc = write_crc(stray)                          # goes with the stray
    fake = os.path.join(data, b"fake.parquet")
    with open(fake, "wb") as f:
        f.write(b"stray")
    not_a_crc = write_crc(fake, b"PAR1 not a checksum")   # not Hadoop's: never planned
    age_all(table["dir"])
    before_files = files_under(table["dir"])
    before = read_every_snapshot(table)
    plan = tmp_path / "plan.json"

    p = ok(table, "--json", "remove-orphan-files", "ns.t", "--dry-run", "--plan-out", str(plan))
    doc = json.loads(p.stdout)
    assert json.loads(plan.read_bytes()) == doc
    got = [(local(o["path"]), o["kind"], o["size_bytes"]) for o in doc["orphans"]]
    assert sorted(got) == sorted([(stray, "data", 5), (stray_crc, "checksum", len(CRC)),
                                  (fake, "data", 5)])
    i = [g[0] for g in got].index(stray_crc)
    assert got[i - 1][0] == stray  # right after its file
    assert doc["counts"]["checksum"] == 1 and doc["bytes"]["checksum"] == len(CRC)
    assert doc["total"] == 3 and doc["total_bytes"] == 10 + len(CRC)
    assert files_under(table["dir"]) == before_files

    p = ok(table, "remove-orphan-files", "ns.t", "--dry-run")
    assert re.search(rb"^checksum +%d .* planned +\S*/data/\.stray\.parquet\.crc$" % len(CRC),
                     p.stdout, re.M)
    assert b"(1 of them Hadoop checksum file beside the others)" in p.stdout

    p = ok(table, "--json", "remove-orphan-files", "ns.t")
    doc = json.loads(p.stdout)
    assert sorted((local(o["path"]), o["kind"], o["state"]) for o in doc["orphans"]) == sorted(
        [(stray, "data", "deleted"), (stray_crc, "checksum", "deleted"),
         (fake, "data", "deleted")])
    assert doc["counts"]["checksum"] == 1 and doc["deleted"] == 3
    assert files_under(table["dir"]) == before_files - {stray, stray_crc, fake}
    assert os.path.exists(live_crc) and os.path.exists(not_a_crc)
    assert read_every_snapshot(table) == before


def test_expiry_plans_the_checksums_of_the_files_it_deletes(table):
    t = table["cat"].load_table("ns.t")
    t.overwrite(pa.table({"id": [100], "s": ["new"]}, schema=table["schema"]))
    # Hadoop's file system writes a checksum beside every file it writes
    crcs = {f: write_crc(f) for f in files_under(table["dir"])}
    before_files = files_under(table["dir"])

    p = ok(table, "--json", "expire-snapshots", "ns.t", "--older-than", "2099-01-01",
           "--retain-last", "1", "--dry-run")
    dry = json.loads(p.stdout)
    planned = {local(f["path"]) for key in ("deleted_files", "deleted_manifests",
                                            "deleted_statistics_files") for f in dry[key]}
    assert any(f.endswith(b".parquet") for f in planned)
    assert any(os.path.basename(f).startswith(b"snap-") for f in planned)
    want_crcs = {crcs[f] for f in planned}
    assert {local(f["path"]) for f in dry["deleted_checksum_files"]} == want_crcs
    assert {f["kind"] for f in dry["deleted_checksum_files"]} == {"checksum"}
    assert all(f["size_bytes"] == len(CRC) for f in dry["deleted_checksum_files"])
    assert dry["counts"]["checksum"] == len(want_crcs)
    assert dry["bytes"]["checksum"] == len(CRC) * len(want_crcs)
    assert files_under(table["dir"]) == before_files

    p = ok(table, "--json", "expire-snapshots", "ns.t", "--older-than", "2099-01-01",
           "--retain-last", "1")
    doc = json.loads(p.stdout)
    assert {local(f["path"]) for f in doc["deleted_checksum_files"]} == want_crcs
    assert doc["total_deleted"] == len(planned) + len(want_crcs)
    # exactly the planned files and their checksums went; the checksums of every kept file
    # (retained data, manifests, metadata files) stayed; the commit added one metadata file
    after = files_under(table["dir"])
    added = after - before_files
    assert len(added) == 1 and next(iter(added)).endswith(b".metadata.json")
    assert after - added == before_files - planned - want_crcs
    t = table["cat"].load_table("ns.t")
    assert [s.snapshot_id for s in t.metadata.snapshots] == [t.current_snapshot().snapshot_id]
    assert read_every_snapshot(table) == {t.current_snapshot().snapshot_id: 1}


# ---- clear refusals and messages -------------------------------------------------------------

def _break_first_manifest_list(tbl) -> bytes:
    t = tbl["cat"].load_table("ns.t")
    ml = local(t.metadata.snapshots[0].manifest_list)
    with open(ml, "wb") as f:
        f.write(b"Obj\x01 this is no longer an Avro file")
    return ml


def test_unreadable_list_of_an_expired_snapshot_is_a_warning(table):
    ml = _break_first_manifest_list(table)
    before_files = files_under(table["dir"])
    t = table["cat"].load_table("ns.t")
    first = t.metadata.snapshots[0].snapshot_id
    p = ok(table, "expire-snapshots", "ns.t", "--snapshot-id", str(first))
    lines = stderr_lines(p)
    assert lines, "the unreadable list must be reported"
    assert all(line.startswith(b"warning: ") for line in lines), lines
    assert any(ml in line and b"(unreadable)" in line for line in lines), lines
    assert os.path.exists(ml)  # kept: the only record of what it names
    # the new metadata file is all that was added; nothing was deleted
    after = files_under(table["dir"])
    assert before_files <= after and all(f.endswith(b".metadata.json")
                                         for f in after - before_files)
    assert first not in read_every_snapshot(table)


def test_bad_avro_magic_is_escaped_once(table):
    """A manifest list that does not start with Avro's magic bytes is named with the bytes it
    should start with, escaped once (`Obj\\x01`); the message said `Obj\\\\x01`, escaped
    twice, in text and in the JSON error document."""
    t = table["cat"].load_table("ns.t")
    ml_uri = t.current_snapshot().manifest_list
    with open(local(ml_uri), "wb") as f:
        f.write(b"PAR1 this is not an Avro file")
    want = (ml_uri.encode() +
            b": not a valid Avro container: missing the magic bytes Obj\\x01")
    p = run(table, "manifests", "ns.t")
    assert p.returncode == 1
    assert p.stderr == b"icemaint: " + want + b"\n"
    p = run(table, "--json", "manifests", "ns.t")
    assert p.returncode == 1
    assert p.stderr == b"icemaint: " + want + b"\n"
    assert json.loads(p.stdout)["error"]["message"].encode() == want


def test_unreadable_manifest_of_a_retained_snapshot_is_an_error(table):
    """README: a manifest of a *retained* snapshot that cannot be read holds back the deletes
    that could depend on it (every data and delete file) and exits 1. The run said so only as
    `warning: FILE: ... (unreadable)` and a closing line naming no file; now the error line
    names the manifest and a retained snapshot that references it."""
    from pyiceberg.expressions import EqualTo
    t = table["cat"].load_table("ns.t")
    t.delete(EqualTo("s", "r1"))  # drops one whole data file: a candidate once expired
    t = table["cat"].load_table("ns.t")
    cur = t.current_snapshot()
    retained = {local(m.manifest_path) for m in cur.manifests(t.io)} | {local(cur.manifest_list)}
    bad_uri = cur.manifests(t.io)[0].manifest_path
    with open(local(bad_uri), "wb") as f:
        f.write(b"Obj\x01 this is no longer an Avro file")
    data = {f for f in files_under(table["dir"]) if f.endswith(b".parquet")}
    before_files = files_under(table["dir"])
    # --no-verify: verification (sizes compared) would refuse first, exit 5, on the damaged
    # manifest's length; this test is about the unreadable-manifest path behind it
    p = run(table, "expire-snapshots", "ns.t", "--older-than", "2099-01-01", "--retain-last", "1",
            "--no-verify")
    assert p.returncode == 1, p.stderr
    lines = stderr_lines(p)
    want = (b"icemaint: " + bad_uri.encode() + b": manifest of retained snapshot %d cannot be "
            b"read: " % cur.snapshot_id)
    errors = [line for line in lines if line.startswith(want)]
    assert len(errors) == 1, lines
    # nor any manifest: a retained manifest that cannot be read leaves its list row's counts
    # unchecked, so the list may lie about what it keeps (adversary round 8, finding 4)
    assert errors[0].endswith(b"; no manifest, data or delete file is deleted (unreadable)"), \
        errors
    assert not any(line.startswith(b"warning: ") and bad_uri.encode() in line for line in lines)
    after = files_under(table["dir"])
    assert data <= after  # every data file is still there
    assert retained <= after
    gone = before_files - after
    assert gone and all(os.path.basename(f).startswith(b"snap-") for f in gone)  # expired lists


def test_quiet_leaves_only_errors_on_stderr(table):
    ml = _break_first_manifest_list(table)
    first = table["cat"].load_table("ns.t").metadata.snapshots[0].snapshot_id
    p = ok(table, "-q", "expire-snapshots", "ns.t", "--snapshot-id", str(first))
    assert p.stderr == b"" and b"expired 1 snapshot" in p.stdout
    assert os.path.exists(ml)
    # the result of a transaction is stdout's, -q or not
    p = ok(table, "-q", "set-properties", "ns.t", "k=v")
    assert p.stderr == b"" and b"ns.t: committed" in p.stdout
    # an error still reaches stderr under -q
    p = run(table, "-q", "inspect", "/nonexistent/table")
    assert p.returncode == 1 and p.stderr.startswith(b"icemaint: /nonexistent/table: ")


@pytest.mark.parametrize("age", ["fresh", "old"])
def test_unparseable_metadata_json_blocks_a_sweep_only_when_old(table, age):
    """A crashed writer's fresh, unparseable metadata file is a write in flight (never a
    candidate): it must not block the sweep. An old one refuses, naming it."""
    md = table["dir"] / "metadata"
    stray = table["dir"] / "data" / "stray.parquet"
    stray.write_bytes(b"stray")
    age_all(table["dir"])
    crashed = md / "00099-0f0f0f0f-crashed.metadata.json"
    crashed.write_bytes(b'{"format-version": 2, "table-uu')  # cut off mid-write
    if age == "old":
        age_all(crashed.parent)
    before_files = files_under(table["dir"])
    before = read_every_snapshot(table)
    p = run(table, "remove-orphan-files", "ns.t")
    if age == "fresh":
        assert p.returncode == 0, p.stderr
        assert files_under(table["dir"]) == before_files - {os.fsencode(stray)}
    else:
        assert p.returncode == 5
        assert str(crashed).encode() in p.stderr
        assert b"cannot read this metadata file" in p.stderr
        assert files_under(table["dir"]) == before_files
    assert crashed.exists()
    assert read_every_snapshot(table) == before


def test_path_longer_than_the_os_allows_gets_its_reason(table, tmp_path):
    long_path = str(tmp_path / ("a" * 300) / "metadata.json")
    for cmd in (["inspect", long_path], ["files", long_path]):
        p = subprocess.run([CLI, *cmd], capture_output=True)
        assert p.returncode == 1
        assert len(p.stderr.split(b"\n")) == 2
        assert p.stderr.startswith(b"icemaint: " + long_path.encode() + b": ")
        assert b"File name too long" in p.stderr


def test_cutoff_in_the_future_reads_sensibly(table):
    stray = table["dir"] / "data" / "stray.parquet"
    stray.write_bytes(b"stray")
    before_files = files_under(table["dir"])
    before = read_every_snapshot(table)
    p = run(table, "remove-orphan-files", "ns.t", "--older-than", "2099-01-01")
    assert p.returncode == 5
    assert b"in the future" in p.stderr
    assert not re.search(rb"-\d", p.stderr), p.stderr  # no negative ages
    assert files_under(table["dir"]) == before_files
    p = ok(table, "expire-snapshots", "ns.t", "--older-than", "2099-01-01", "--dry-run")
    lines = stderr_lines(p)
    assert lines == [b"warning: the cutoff 2099-01-01T00:00:00.000Z is in the future "
                     b"(after now): every snapshot is older than it, so only --retain-last "
                     b"(history.expire.min-snapshots-to-keep), refs and the current snapshot "
                     b"keep snapshots"], lines
    assert files_under(table["dir"]) == before_files
    assert read_every_snapshot(table) == before
