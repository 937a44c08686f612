"""remove-orphan-files --inventory: an S3 Inventory report as the listing, on moto.

Each test builds the report itself in AWS's layout: a destination bucket holding
`inv/<source bucket>/<config>/data/<uuid>.csv.gz` (gzip CSV, every field quoted, keys
URL-encoded with `+` for a space and `%2B` for a plus) and
`inv/<source bucket>/<config>/<YYYY-MM-DDTHH-MMZ>/manifest.json` naming them with size and MD5.
Asserted, as exact key sets of the table location after the run:
 - old orphans in the report go; referenced files stay, the live `data/x y.parquet` among them
   while the orphan `data/x+y.parquet` goes (the `+` rule read wrongly would swap them);
 - an old orphan the report does not list stays (a report is a snapshot: absent is kept);
 - a file the report lists with another size than storage now has is kept (changed since);
 - a file the report lists but that is gone by the sweep is already_gone, not an error;
 - files of a sibling table and outside the location, listed in the report, are untouched;
 - the same with the manifest as a local path into a copy of the destination bucket;
 - refused with nothing deleted: another sourceBucket, a report older than
   --max-inventory-age; failed with one line naming the data file: a wrong MD5, a truncated
   gzip; Parquet reports are refused as not yet readable.
"""
import gzip
import hashlib
import json
import time
import urllib.parse
import uuid

import pytest

import s3_e2e as e
import s3_helpers as h
from s3_helpers import moto, s3_prefix  # noqa: F401 (fixtures)
from test_s3_orphans import add_live, cutoff_between, new_table, orphan_keys, sweep

SCHEMA = "Bucket, Key, Size, LastModifiedDate, ETag, StorageClass"


def iso_ms(dt):
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def csv_row(bucket, obj, size=None):
    enc = urllib.parse.quote_plus(obj["Key"], safe="/")
    fields = [bucket, enc, str(obj["Size"] if size is None else size),
              iso_ms(obj["LastModified"]), obj["ETag"].strip('"'), "STANDARD"]
    return ",".join('"' + f.replace('"', '""') + '"' for f in fields) + "\n"


def listing(server, prefix):
    c = h.client(server, attempts=4)
    out = []
    for page in c.get_paginator("list_objects_v2").paginate(Bucket=server.bucket, Prefix=prefix):
        out.extend(page.get("Contents", []))
    return out


class Report:
    """A report's files: data file key -> gzip bytes, and the manifest document."""

    def __init__(self, source_bucket, dest_bucket, rows, *, parts=2, created_ms=None,
                 file_format="CSV"):
        self.base = f"inv/{source_bucket}/daily"
        stamp = time.strftime("%Y-%m-%dT%H-%MZ", time.gmtime())
        self.manifest_key = f"{self.base}/{stamp}/manifest.json"
        self.data = {}
        chunks = [rows[i::parts] for i in range(parts)]
        for chunk in chunks:
            key = f"{self.base}/data/{uuid.uuid4()}.csv.gz"
            self.data[key] = gzip.compress("".join(chunk).encode())
        self.manifest = {
            "sourceBucket": source_bucket,
            "destinationBucket": f"arn:aws:s3:::{dest_bucket}",
            "version": "2016-11-30",
            "creationTimestamp": str(created_ms or int(time.time() * 1000)),
            "fileFormat": file_format,
            "fileSchema": SCHEMA,
            "files": [{"key": k, "size": len(b), "MD5checksum": hashlib.md5(b).hexdigest()}
                      for k, b in self.data.items()],
        }

    def manifest_bytes(self):
        return json.dumps(self.manifest, indent=4).encode()

    def upload(self, server, dest_bucket):
        c = h.client(server, attempts=4)
        for k, b in self.data.items():
            c.put_object(Bucket=dest_bucket, Key=k, Body=b)
        m = self.manifest_bytes()
        c.put_object(Bucket=dest_bucket, Key=self.manifest_key, Body=m)
        c.put_object(Bucket=dest_bucket, Key=self.manifest_key.replace("manifest.json",
                                                                       "manifest.checksum"),
                     Body=hashlib.md5(m).hexdigest().encode())
        return f"s3://{dest_bucket}/{self.manifest_key}"

    def write_local(self, root):
        for k, b in self.data.items():
            p = root / k
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(b)
        p = root / self.manifest_key
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(self.manifest_bytes())
        return str(p)


def scenario(tmp_path, server, prefix):
    """A table with live files, old orphans (some the report will not list, one it lists with
    another size, one deleted after the report), a sibling table and files outside: returns
    what each test needs."""
    wh = h.S3Warehouse(tmp_path, server, prefix)
    t = new_table(wh, "ns.t")
    new_table(wh, "ns.t2", appends=1)
    root = e.key_of(t.location(), server.bucket)
    add_live(wh, server, "ns.t", f"{root}/data/x y.parquet", [7])
    old = [f"{root}/data/x+y.parquet", f"{root}/data/\u00fc-\u00f1-\u6f22.parquet",
           f"{root}/data/p=1/o 1.parquet", f"{root}/metadata/stray.avro",
           f"{root}/stray-at-root.txt"]
    absent = f"{root}/data/not-in-report.parquet"
    resized = f"{root}/data/resized.parquet"
    gone = f"{root}/data/gone.parquet"
    sibling = f"{root}2/data/orphan.parquet"
    outside = f"{prefix}elsewhere/file.bin"
    young = f"{root}/data/young.parquet"
    cutoff = cutoff_between(
        lambda: [e.put(server, k) for k in old + [absent, resized, gone, sibling, outside]],
        lambda: e.put(server, young))
    rows = []
    for obj in listing(server, prefix):
        if obj["Key"] == absent:
            continue
        rows.append(csv_row(server.bucket, obj, size=obj["Size"] + 1
                            if obj["Key"] == resized else None))
    h.client(server, attempts=4).delete_object(Bucket=server.bucket, Key=gone)
    live = {e.key_of(p, server.bucket) for p in e.reachable(wh.catalog().load_table("ns.t"))}
    assert f"{root}/data/x y.parquet" in live
    return wh, root, cutoff, rows, {"old": old, "absent": absent, "resized": resized,
                                    "gone": gone, "sibling": sibling, "outside": outside,
                                    "young": young}


def check_sweep(wh, tmp_path, server, prefix, manifest, cutoff, f):
    before = e.keys(server, prefix)
    dry = sweep(wh, tmp_path, "ns.t", "--older-than", str(cutoff), "--inventory", manifest,
                "--dry-run")
    # planned: what the report lists, old and unreferenced (the resized and the gone too: the
    # check right before each delete is what keeps or skips them)
    assert orphan_keys(dry, server.bucket) == set(f["old"]) | {f["resized"], f["gone"]}
    assert e.keys(server, prefix) == before

    doc = sweep(wh, tmp_path, "ns.t", "--older-than", str(cutoff), "--inventory", manifest)
    assert orphan_keys(doc, server.bucket, "deleted") == set(f["old"])
    assert orphan_keys(doc, server.bucket, "already_gone") == {f["gone"]}
    assert orphan_keys(doc, server.bucket, "kept") == {f["resized"]}
    after = e.keys(server, prefix)
    assert after == before - set(f["old"])
    assert {f["absent"], f["resized"], f["sibling"], f["outside"], f["young"]} <= after
    rows = h.judge_pyiceberg(wh, "ns.t")
    current = wh.catalog().load_table("ns.t").metadata.current_snapshot_id
    assert rows[current] == [0, 1, 7]


def test_inventory_on_s3_deletes_exactly_the_listed_old_orphans(tmp_path, moto, s3_prefix):  # noqa: F811
    wh, root, cutoff, rows, f = scenario(tmp_path, moto, s3_prefix)
    dest = e.new_bucket(moto)
    try:
        manifest = Report(moto.bucket, dest, rows).upload(moto, dest)
        check_sweep(wh, tmp_path, moto, s3_prefix, manifest, cutoff, f)
    finally:
        e.remove_bucket(moto, dest)


def test_inventory_from_a_local_copy_of_the_destination_bucket(tmp_path, moto, s3_prefix):  # noqa: F811
    wh, root, cutoff, rows, f = scenario(tmp_path, moto, s3_prefix)
    manifest = Report(moto.bucket, "dest-copy", rows).write_local(tmp_path / "dest-copy")
    check_sweep(wh, tmp_path, moto, s3_prefix, manifest, cutoff, f)


def run(wh, tmp_path, *args):
    return e.cat_cli(wh, "remove-orphan-files", *args, "--force", "--settle", "0s",
                     cwd=tmp_path, check=False)


def test_inventory_refusals_delete_nothing(tmp_path, moto, s3_prefix):  # noqa: F811
    wh, root, cutoff, rows, f = scenario(tmp_path, moto, s3_prefix)
    before = e.keys(moto, s3_prefix)
    base = tmp_path / "copies"

    def local(name, **kw):
        return Report(kw.pop("source", moto.bucket), "d", rows, **kw).write_local(base / name)

    # another bucket's report
    res = run(wh, tmp_path, "ns.t", "--older-than", str(cutoff), "--inventory",
              local("other", source="another-bucket"))
    assert res.returncode == 5, res.stderr
    assert "another-bucket" in res.stderr and moto.bucket in res.stderr

    # older than --max-inventory-age (default 7 d; here 1 h)
    stale = local("stale", created_ms=int(time.time() * 1000) - 2 * 3600 * 1000)
    res = run(wh, tmp_path, "ns.t", "--older-than", str(cutoff), "--inventory", stale,
              "--max-inventory-age", "1h")
    assert res.returncode == 5, res.stderr
    assert "max-inventory-age" in res.stderr
    eight_days = local("old", created_ms=int(time.time() * 1000) - 8 * 24 * 3600 * 1000)
    res = run(wh, tmp_path, "ns.t", "--older-than", str(cutoff), "--inventory", eight_days)
    assert res.returncode == 5, res.stderr

    # a data file whose bytes are not the manifest's MD5
    rep = Report(moto.bucket, "d", rows)
    bad_key = next(iter(rep.data))
    rep.manifest["files"][0]["MD5checksum"] = "0" * 32
    bad_md5 = rep.write_local(base / "md5")
    res = run(wh, tmp_path, "ns.t", "--older-than", str(cutoff), "--inventory", bad_md5)
    assert res.returncode == 1, res.stderr
    assert "MD5" in res.stderr and bad_key.rsplit("/", 1)[1] in res.stderr

    # a truncated gzip data file (its manifest entry matching the cut bytes)
    rep = Report(moto.bucket, "d", rows)
    key = next(iter(rep.data))
    rep.data[key] = rep.data[key][:-12]
    rep.manifest["files"][0] = {"key": key, "size": len(rep.data[key]),
                                "MD5checksum": hashlib.md5(rep.data[key]).hexdigest()}
    cut = rep.write_local(base / "cut")
    res = run(wh, tmp_path, "ns.t", "--older-than", str(cutoff), "--inventory", cut)
    assert res.returncode == 1, res.stderr
    assert "truncated" in res.stderr and key.rsplit("/", 1)[1] in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr

    # Parquet reports: not read yet
    res = run(wh, tmp_path, "ns.t", "--older-than", str(cutoff), "--inventory",
              local("parquet", file_format="Parquet"))
    assert res.returncode != 0 and "Parquet" in res.stderr, res.stderr

    # --inventory with --file-list: a usage error
    res = run(wh, tmp_path, "ns.t", "--inventory", bad_md5, "--file-list", bad_md5)
    assert res.returncode == 2, res.stderr

    assert e.keys(moto, s3_prefix) == before


# ---- the report is trusted for its data rows as candidates only (adversary adv1, finding 1) ----

def nested_scenario(tmp_path, server, prefix):
    """A table with one old orphan at R/sub/data/old.parquet and a stray old orphan at R/data;
    returns (wh, root, cutoff, old, stray)."""
    from test_s3_orphans import parquet_bytes
    wh = h.S3Warehouse(tmp_path, server, prefix)
    t = new_table(wh, "ns.t")
    root = e.key_of(t.location(), server.bucket)
    old = f"{root}/sub/data/old.parquet"
    stray = f"{root}/data/stray.parquet"
    cutoff = cutoff_between(lambda: (e.put(server, old, parquet_bytes([42])),
                                     e.put(server, stray)), lambda: None)
    return wh, root, cutoff, old, stray


def adopt_in_nested_table(tmp_path, server, prefix, root, old):
    """Another catalog makes a table at R/sub that takes `old` as its live data file."""
    wh2 = h.S3Warehouse(tmp_path, server, prefix, name="other")
    cat2 = wh2.catalog()
    cat2.create_namespace_if_not_exists("o")
    n = cat2.create_table("o.nested", h._schema(), location=f"s3://{server.bucket}/{root}/sub")
    n.add_files([f"s3://{server.bucket}/{old}"])
    assert cat2.load_table("o.nested").scan().to_arrow().num_rows == 1
    return cat2


def file_list_of(tmp_path, server, prefix, name="files.tsv", skip=()):
    """The bucket prefix as a --file-list (path, size, mtime ms): a snapshot like a report."""
    p = tmp_path / name
    with open(p, "w") as f:
        for o in listing(server, prefix):
            if any(s in o["Key"] for s in skip):
                continue
            f.write(f"s3://{server.bucket}/{o['Key']}\t{o['Size']}\t"
                    f"{int(o['LastModified'].timestamp() * 1000)}\n")
    return str(p)


def test_data_loss_inventory_nested_table_made_after_the_report(tmp_path, moto, s3_prefix):  # noqa: F811
    wh, root, cutoff, old, stray = nested_scenario(tmp_path, moto, s3_prefix)
    manifest = Report(moto.bucket, "d", [csv_row(moto.bucket, o)
                                         for o in listing(moto, s3_prefix)]
                      ).write_local(tmp_path / "copy")
    flist = file_list_of(tmp_path, moto, s3_prefix)
    cat2 = adopt_in_nested_table(tmp_path, moto, s3_prefix, root, old)
    before = e.keys(moto, s3_prefix)
    for source in (["--inventory", manifest], ["--file-list", flist]):
        res = run(wh, tmp_path, "ns.t", "--older-than", str(cutoff), *source)
        assert res.returncode == 5, (source, res.stderr)
        assert "another table's metadata" in res.stderr and f"{root}/sub" in res.stderr
        assert e.keys(moto, s3_prefix) == before
    assert cat2.load_table("o.nested").scan().to_arrow().num_rows == 1


def test_data_loss_inventory_nested_table_whose_metadata_rows_the_report_omits(tmp_path, moto, s3_prefix):  # noqa: F811
    wh, root, cutoff, old, stray = nested_scenario(tmp_path, moto, s3_prefix)
    adopt_in_nested_table(tmp_path, moto, s3_prefix, root, old)
    rows = [csv_row(moto.bucket, o) for o in listing(moto, s3_prefix)
            if f"{root}/sub/metadata/" not in o["Key"]]
    manifest = Report(moto.bucket, "d", rows).write_local(tmp_path / "copy")
    flist = file_list_of(tmp_path, moto, s3_prefix, skip=(f"{root}/sub/metadata/",))
    before = e.keys(moto, s3_prefix)
    for source in (["--inventory", manifest], ["--file-list", flist]):
        res = run(wh, tmp_path, "ns.t", "--older-than", str(cutoff), *source)
        assert res.returncode == 5, (source, res.stderr)
        assert "another table's metadata" in res.stderr
        assert e.keys(moto, s3_prefix) == before
    # carved out with --exclude-location, the rest is swept and the nested table's file stays
    res = run(wh, tmp_path, "ns.t", "--older-than", str(cutoff), "--inventory", manifest,
              "--exclude-location", f"s3://{moto.bucket}/{root}/sub")
    assert res.returncode == 0, res.stderr
    assert e.keys(moto, s3_prefix) == before - {stray}


def test_data_loss_inventory_other_format_log_made_after_the_report(tmp_path, moto, s3_prefix):  # noqa: F811
    wh = h.S3Warehouse(tmp_path, moto, s3_prefix)
    t = new_table(wh, "ns.t")
    root = e.key_of(t.location(), moto.bucket)
    part = f"{root}/delta/part-00000.parquet"
    cutoff = cutoff_between(lambda: e.put(moto, part), lambda: None)
    manifest = Report(moto.bucket, "d", [csv_row(moto.bucket, o)
                                         for o in listing(moto, s3_prefix)]
                      ).write_local(tmp_path / "copy")
    flist = file_list_of(tmp_path, moto, s3_prefix)
    for marker in ("_delta_log/00000000000000000000.json", ".hoodie/hoodie.properties"):
        e.put(moto, f"{root}/delta/{marker}", b"{}\n")
        before = e.keys(moto, s3_prefix)
        for source in (["--inventory", manifest], ["--file-list", flist]):
            res = run(wh, tmp_path, "ns.t", "--older-than", str(cutoff), *source)
            assert res.returncode == 5, (marker, source, res.stderr)
            assert marker.split("/")[0] in res.stderr and f"{root}/delta" in res.stderr
            assert e.keys(moto, s3_prefix) == before
        h.client(moto, attempts=4).delete_object(Bucket=moto.bucket, Key=f"{root}/delta/{marker}")


# ---- one candidate per file (adversary adv1, finding 6) ----

def test_wrong_result_inventory_duplicate_rows_are_one_candidate(tmp_path, moto, s3_prefix):  # noqa: F811
    wh = h.S3Warehouse(tmp_path, moto, s3_prefix)
    t = new_table(wh, "ns.t")
    root = e.key_of(t.location(), moto.bucket)
    dup = f"{root}/data/dup.parquet"
    conflict = f"{root}/data/conflict.parquet"
    cutoff = cutoff_between(lambda: (e.put(moto, dup), e.put(moto, conflict)), lambda: None)
    objs = {o["Key"]: o for o in listing(moto, s3_prefix)}
    rows = [csv_row(moto.bucket, o) for o in objs.values()]
    rows += [csv_row(moto.bucket, objs[dup]), csv_row(moto.bucket, objs[dup]),
             csv_row(moto.bucket, objs[conflict], size=objs[conflict]["Size"] + 1)]
    manifest = Report(moto.bucket, "d", rows, parts=2).write_local(tmp_path / "copy")
    before = e.keys(moto, s3_prefix)

    dry = sweep(wh, tmp_path, "ns.t", "--older-than", str(cutoff), "--inventory", manifest,
                "--dry-run")
    assert [e.key_of(o["path"], moto.bucket) for o in dry["orphans"]] == [dup]
    assert dry["total"] == 1 and dry["total_bytes"] == objs[dup]["Size"]
    assert any(conflict in w and "more than once with different sizes" in w
               for w in dry["warnings"]), dry["warnings"]

    # --max-delete counts files, not rows: one file, allowed by a limit of 1
    doc = sweep(wh, tmp_path, "ns.t", "--older-than", str(cutoff), "--inventory", manifest,
                "--max-delete", "1")
    assert doc["total"] == 1 and doc["deleted"] == 1, doc
    assert orphan_keys(doc, moto.bucket, "deleted") == {dup}
    assert e.keys(moto, s3_prefix) == before - {dup}
    assert conflict in e.keys(moto, s3_prefix)


def test_wrong_result_file_list_duplicate_lines_are_one_candidate(tmp_path, moto, s3_prefix):  # noqa: F811
    wh = h.S3Warehouse(tmp_path, moto, s3_prefix)
    t = new_table(wh, "ns.t")
    root = e.key_of(t.location(), moto.bucket)
    dup = f"{root}/data/dup.parquet"
    conflict = f"{root}/data/conflict.parquet"
    cutoff = cutoff_between(lambda: (e.put(moto, dup), e.put(moto, conflict)), lambda: None)
    flist = file_list_of(tmp_path, moto, s3_prefix)
    objs = {o["Key"]: o for o in listing(moto, s3_prefix)}
    with open(flist, "a") as f:
        f.write(f"s3://{moto.bucket}/{dup}\t{objs[dup]['Size']}\t"
                f"{int(objs[dup]['LastModified'].timestamp() * 1000)}\n")
        f.write(f"s3://{moto.bucket}/{conflict}\t{objs[conflict]['Size']}\t\n")  # unknown age
    before = e.keys(moto, s3_prefix)
    doc = sweep(wh, tmp_path, "ns.t", "--older-than", str(cutoff), "--file-list", flist,
                "--max-delete", "1")
    assert doc["total"] == 1 and doc["deleted"] == 1, doc
    assert orphan_keys(doc, moto.bucket, "deleted") == {dup}
    assert any(conflict in w and "too recent" in w for w in doc["warnings"]), doc["warnings"]
    assert e.keys(moto, s3_prefix) == before - {dup}
