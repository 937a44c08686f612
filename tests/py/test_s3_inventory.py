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
