"""`maintain --exclude-location` on S3 (moto): the exclusion reaches the table's sweep however
the table location and the exclusion are spelled (`s3a://`, a trailing slash on either).

Class: an exclusion the user gave, silently not passed on (adversary round of session 16): a
table whose metadata records its location with a trailing slash (`s3://b/t/`, as some writers
do) never got an exclusion below it, and `maintain` swept the object the user excluded, where
`remove-orphan-files` with the same option keeps it. Each test asserts which keys exist after.
"""
import json

import pytest

import s3_e2e as e
import s3_helpers as h
from s3_helpers import moto, s3_prefix  # noqa: F401
from test_s3_orphans import cutoff_between, new_table


def _relocate_with_trailing_slash(wh, moto, t):  # noqa: F811
    """Register ns.t again from a copy of its metadata whose location ends in `/`."""
    c = h.client(moto, attempts=4)
    md_key = e.key_of(t.metadata_location, moto.bucket)
    md = json.loads(c.get_object(Bucket=moto.bucket, Key=md_key)["Body"].read())
    md["location"] = md["location"].rstrip("/") + "/"
    new_key = md_key.rsplit("/", 1)[0] + \
        "/00099-0000aaaa-0000-4000-8000-000000000099.metadata.json"
    c.put_object(Bucket=moto.bucket, Key=new_key, Body=json.dumps(md).encode())
    cat = wh.catalog()
    cat.drop_table("ns.t")
    cat.register_table("ns.t", f"s3://{moto.bucket}/{new_key}")
    return md["location"]


@pytest.mark.parametrize("spelling", ["s3", "s3a", "exclusion-slash", "location-slash"])
def test_data_loss_maintain_exclusion_dropped_on_s3(tmp_path, moto, s3_prefix,  # noqa: F811
                                                      spelling):
    wh = h.S3Warehouse(tmp_path, moto, s3_prefix)
    t = new_table(wh, "ns.t", appends=2)
    location = t.location()
    replaced = set()  # the metadata file the copy replaced: in no metadata log, an orphan too
    if spelling == "location-slash":
        replaced = {e.key_of(t.metadata_location, moto.bucket)}
        location = _relocate_with_trailing_slash(wh, moto, t)
    root = e.key_of(location, moto.bucket).rstrip("/")
    keep = f"{root}/keep/user-kept.parquet"
    orphan = f"{root}/data/real-orphan.parquet"
    cutoff_between(lambda: [e.put(moto, keep), e.put(moto, orphan)], lambda: None)
    scheme = "s3a" if spelling == "s3a" else "s3"
    excl = f"{scheme}://{moto.bucket}/{root}/keep" + ("/" if spelling == "exclusion-slash" else "")
    before = set(e.keys(moto, root + "/"))
    p = e.cat_cli(wh, "maintain", "--all", "--settle", "0s", "--older-than", "1s", "--force",
                  "--exclude-location", excl, cwd=tmp_path, check=False)
    assert p.returncode == 0, p.stderr
    assert keep in before and orphan in before
    assert set(e.keys(moto, root + "/")) == before - {orphan} - replaced
