#!/usr/bin/env python3
"""Time fastavro decoding the manifest that bench_manifest_decode wrote, for docs/BENCHMARKS.md.

Usage: fastavro_decode.py [PATH] [--runs R]   (PATH defaults to /tmp/icm_bench_manifest.avro)

Two modes, best of R runs each (process CPU seconds):
  full    - every record decoded into Python dicts (what fastavro.reader does by default);
  expiry  - with a reader schema keeping only the fields snapshot expiry needs, so fastavro's
            schema resolution skips the rest (the fairest comparison with icemaint's projection).
"""
import argparse
import time

import fastavro

EXPIRY_ENTRY = {"status", "snapshot_id", "sequence_number", "file_sequence_number", "data_file"}
EXPIRY_FILE = {"content", "file_path", "file_format", "record_count", "file_size_in_bytes",
               "referenced_data_file", "content_offset", "content_size_in_bytes"}


def expiry_schema(writer):
    entry = dict(writer)
    fields = []
    for f in writer["fields"]:
        if f["name"] not in EXPIRY_ENTRY:
            continue
        if f["name"] == "data_file":
            df = dict(f["type"])
            df["fields"] = [g for g in df["fields"] if g["name"] in EXPIRY_FILE]
            f = dict(f, type=df)
        fields.append(f)
    entry["fields"] = fields
    return entry


def run(path, reader_schema=None):
    # Process CPU time, like bench_manifest_decode: robust on a shared, busy machine.
    t0 = time.process_time()
    n = 0
    total = 0
    with open(path, "rb") as fh:
        for rec in fastavro.reader(fh, reader_schema=reader_schema):
            total += rec["data_file"]["record_count"]
            n += 1
    return time.process_time() - t0, n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("path", nargs="?", default="/tmp/icm_bench_manifest.avro")
    ap.add_argument("--runs", type=int, default=1)
    args = ap.parse_args()
    with open(args.path, "rb") as fh:
        writer = fastavro.reader(fh).writer_schema
    proj = fastavro.parse_schema(expiry_schema(writer))
    print(f"fastavro {fastavro.__version__}, file {args.path}")
    for mode, schema in (("full", None), ("expiry", proj)):
        best, n = min(run(args.path, schema) for _ in range(args.runs))
        print(f"{mode:8s} {best:9.3f} s  {n / best:12.0f} entries/s")


if __name__ == "__main__":
    main()
