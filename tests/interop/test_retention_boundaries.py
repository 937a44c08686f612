"""Retention properties at their boundaries, judged by Java
(docs/semantics.md#expiry-ref-retention).

Every `history.expire.*` table property and every per-ref retention field, at 0, 1, its largest
value and malformed, on one table metadata file with branches, a tag and unreferenced snapshots:
icemaint's decision (`expire-snapshots --dry-run --cleanup none --json` on the metadata file)
must be Java's (RemoveSnapshots on the same metadata with the same "now", run by RetentionDiff:
one JVM for every case).

* Java decides: icemaint expires the same snapshots and leaves the same refs, except for the
  documented retain_last top-up (icemaint never leaves fewer than retain_last snapshots; see
  test_expire_judges.py), applied to Java's result exactly as specified there.
* Java throws (Long.parseLong / Integer.parseInt on a property, or the metadata parser and
  SnapshotRef's builder on a per-ref field): icemaint refuses, exit 1, with one stderr line
  naming the metadata file and the property or field, and deletes nothing.
* A tag on a snapshot whose age does not fit int64 (timestamp near INT64_MIN) is kept in every
  case, as Java keeps it (its subtraction wraps to a negative age).
* The one deliberate difference: a table property Java takes but icemaint refuses like a
  malformed one: a negative value (a negative age puts the cutoff in the future, a negative
  minimum keeps nothing by count) and non-ASCII digits. Those cases assert that Java really
  accepts them, so the difference is pinned, not assumed.

"now" is the `now_ms` icemaint reports (Java's clock is fixed to it through IcmExpireControl);
timestamps are days apart, so no case depends on the milliseconds between the two runs. Exact
equality at a boundary (an age equal to the limit) is pinned in tests/unit/test_expire_decide.c.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

import javajudge

DAY = 86_400_000
INT64_MAX = 2**63 - 1
INT32_MAX = 2**31 - 1

# snapshot id -> (parent, age in days at build time)
SNAPSHOTS = {1: (None, 10), 2: (1, 6), 3: (2, 3), 4: (3, 1 / 24),  # main; 4 current
             5: (2, 5), 6: (5, 4),                                 # branch dev
             7: (3, 2), 9: (7, 7),     # branch skew: its head is older than its parent
             8: (1, 8), 10: (4, 1 / 2),                            # in no branch
             11: (None, None)}  # at ANCIENT_MS, tag "ancient": its age does not fit int64
ANCIENT_MS = -2**63 + 5
MAIN_HISTORY = (1, 2, 3, 4)  # the snapshot log: main's commits, the current one last
REFS = {"main": {"snapshot-id": 4, "type": "branch"},
        "dev": {"snapshot-id": 6, "type": "branch"},
        "skew": {"snapshot-id": 9, "type": "branch"},
        "t": {"snapshot-id": 1, "type": "tag"},
        # Java's `now - timestamp` wraps to a negative age, within any max-ref-age-ms: kept
        "ancient": {"snapshot-id": 11, "type": "tag", "max-ref-age-ms": DAY}}

AGE, MIN, REF_AGE = ("history.expire.max-snapshot-age-ms", "history.expire.min-snapshots-to-keep",
                     "history.expire.max-ref-age-ms")

# name -> (table properties, {ref: {field: value}}, CLI options, expectation)
# expectation: "java" (same decision as Java, or both refuse) or "stricter" (Java accepts,
# icemaint refuses: the documented difference).
CASES: dict[str, tuple[dict, dict, dict, str]] = {}


def _prop_cases(key: str, largest: int, overflow: int) -> None:
    short = key.rsplit(".", 1)[1]
    for label, value in (("0", "0"), ("1", "1"), ("largest", str(largest)),
                         ("empty", ""), ("not_a_number", "5d"), ("space", " 1"),
                         ("decimal", "1.0"), ("overflow", str(overflow))):
        CASES[f"property_{short}_{label}"] = ({key: value}, {}, {}, "java")
    CASES[f"property_{short}_negative"] = ({key: "-1"}, {}, {}, "stricter")
    # Java's Character.digit also takes non-ASCII digits (fullwidth "１"): icemaint does not
    CASES[f"property_{short}_fullwidth_digit"] = ({key: "\uff11"}, {}, {}, "stricter")


_prop_cases(AGE, INT64_MAX, INT64_MAX + 1)
_prop_cases(MIN, INT32_MAX, INT32_MAX + 1)
_prop_cases(REF_AGE, INT64_MAX, INT64_MAX + 1)
# the options override the properties, at their own boundaries
CASES["property_min_0_with_retain_last_2"] = ({MIN: "0"}, {}, {"retain_last": 2}, "java")
CASES["option_retain_last_largest"] = ({}, {}, {"retain_last": INT32_MAX}, "java")
CASES["option_older_than_0"] = ({AGE: "1"}, {}, {"older_than_ms": 0}, "java")


def _ref_cases(ref: str, field: str, largest: int) -> None:
    for label, value in (("0", 0), ("1", 1), ("largest", largest), ("negative", -1),
                         ("overflow", largest + 1), ("string", "1"), ("decimal", 1.0)):
        CASES[f"ref_{ref}_{field}_{label}"] = ({}, {ref: {field: value}}, {}, "java")


_ref_cases("dev", "max-ref-age-ms", INT64_MAX)
_ref_cases("dev", "max-snapshot-age-ms", INT64_MAX)
_ref_cases("dev", "min-snapshots-to-keep", INT32_MAX)
_ref_cases("t", "max-ref-age-ms", INT64_MAX)
_ref_cases("main", "max-snapshot-age-ms", INT64_MAX)
_ref_cases("main", "min-snapshots-to-keep", INT32_MAX)
# a tag cannot carry branch retention (Java's builder: "Tags do not support setting ...")
CASES["ref_t_min-snapshots-to-keep_on_a_tag"] = ({}, {"t": {"min-snapshots-to-keep": 1}}, {},
                                                 "java")


def _metadata(now_ms: int, props: dict, ref_fields: dict) -> str:
    """Format v2 metadata text for one case."""
    snaps, seq = [], 0
    for sid, (parent, age_days) in SNAPSHOTS.items():
        seq += 1
        s = {"snapshot-id": sid, "sequence-number": seq,
             "timestamp-ms": _timestamp(now_ms, sid),
             "manifest-list": f"/nonexistent/metadata/snap-{sid}.avro",
             "summary": {"operation": "append"}, "schema-id": 0}
        if parent is not None:
            s["parent-snapshot-id"] = parent
        snaps.append(s)
    refs = {name: dict(ref, **ref_fields.get(name, {})) for name, ref in REFS.items()}
    md = {"format-version": 2, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
          "location": "/nonexistent", "last-sequence-number": seq, "last-updated-ms": now_ms,
          "last-column-id": 1, "current-schema-id": 0,
          "schemas": [{"type": "struct", "schema-id": 0,
                       "fields": [{"id": 1, "name": "id", "required": False, "type": "long"}]}],
          "default-spec-id": 0, "partition-specs": [{"spec-id": 0, "fields": []}],
          "last-partition-id": 999, "default-sort-order-id": 0,
          "sort-orders": [{"order-id": 0, "fields": []}], "properties": props,
          "current-snapshot-id": 4, "refs": refs, "snapshots": snaps,
          "snapshot-log": [{"timestamp-ms": s["timestamp-ms"], "snapshot-id": s["snapshot-id"]}
                           for s in snaps if s["snapshot-id"] in MAIN_HISTORY],
          "metadata-log": []}
    return json.dumps(md)  # Python writes 2**63 and 1.0 as such: Java sees them as written


def _timestamp(now_ms: int, sid: int) -> int:
    age_days = SNAPSHOTS[sid][1]
    return ANCIENT_MS if age_days is None else now_ms - int(age_days * DAY)


def _oldest_first(now_ms: int, ids) -> list[int]:
    """icemaint's expiry order: oldest first (no two snapshots here share a timestamp)."""
    return sorted(ids, key=lambda i: _timestamp(now_ms, i))


def _named(case: str) -> str:
    """What the refusal must name: the property, or the per-ref field."""
    props, ref_fields, _, _ = CASES[case]
    if props:
        return next(iter(props))
    return next(iter(next(iter(ref_fields.values()))))


@pytest.fixture(scope="module")
def runs(tmp_path_factory, icemaint_cli):
    """Per case: icemaint's exit code, stdout document and stderr; then Java's result (one
    JVM for every case, with each case's now_ms)."""
    work = tmp_path_factory.mktemp("retention")
    built_ms = int(time.time() * 1000)
    out, jobs = {}, []
    for case, (props, ref_fields, opts, _) in CASES.items():
        path = work / f"{case}.metadata.json"
        path.write_text(_metadata(built_ms, props, ref_fields))
        cmd = [str(icemaint_cli), "--json", "expire-snapshots", str(path), "--dry-run",
               "--cleanup", "none"]
        if "older_than_ms" in opts:
            cmd += ["--older-than", str(opts["older_than_ms"])]
        if "retain_last" in opts:
            cmd += ["--retain-last", str(opts["retain_last"])]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        doc = json.loads(proc.stdout) if proc.stdout.strip() else None
        now_ms = doc["now_ms"] if proc.returncode == 0 else int(time.time() * 1000)
        out[case] = dict(path=str(path), code=proc.returncode, doc=doc, err=proc.stderr,
                         now_ms=now_ms)
        jobs.append("\t".join([case, str(path), str(now_ms),
                               str(opts.get("older_than_ms", "-")),
                               str(opts.get("retain_last", "-"))]))
    jobs_file = work / "jobs.tsv"
    jobs_file.write_text("\n".join(jobs) + "\n")
    java = {d["case"]: d for d in javajudge.run("RetentionDiff", [str(jobs_file)])}
    assert set(java) == set(CASES), f"Java answered {sorted(java)}"
    for case in CASES:
        out[case]["java"] = java[case]
    return out


@pytest.mark.parametrize("case", list(CASES))
def test_retention_boundary_behaves_as_java(case, runs):
    r, expectation = runs[case], CASES[case][3]
    java = r["java"]
    if "error" in java or expectation == "stricter":
        if expectation == "stricter":
            assert "error" not in java, f"Java now refuses too: {java['error']}"
        # refused: exit 1, one line naming the file and the property or field, nothing decided
        assert r["code"] == 1, f"{case}: exit {r['code']} (Java: {java})\n{r['err']}"
        lines, prefix = r["err"].strip().splitlines(), f"icemaint: {r['path']}: "
        assert len(lines) == 1 and lines[0].startswith(prefix), r["err"]
        # named in the message itself (the file's name holds the case's name too)
        assert _named(case) in lines[0][len(prefix):], f"{case}: {lines[0]!r} does not name it"
        assert r["doc"]["error"]["exit_code"] == 1 and "expired" not in r["doc"]
        return
    assert r["code"] == 0, f"{case}: exit {r['code']}, Java decided {java}\n{r['err']}"
    mine = r["doc"]
    # the documented top-up: icemaint keeps the newest of Java's expired snapshots until
    # retain_last snapshots remain
    props, _, opts, _ = CASES[case]
    retain_last = opts.get("retain_last") or int(props.get(MIN, "1"))
    missing = retain_last - len(java["retained"])
    topup = _oldest_first(r["now_ms"], java["expired"])[-missing:] if missing > 0 else []
    want_expired = sorted(set(java["expired"]) - set(topup))
    assert sorted(mine["expired"]) == want_expired, (
        f"{case}: icemaint expired {sorted(mine['expired'])}, Java {java['expired']} "
        f"(documented top-up {topup})")
    refs_left = sorted(set(REFS) - set(mine["removed_refs"]))
    assert refs_left == java["refs"], f"{case}: refs left {refs_left}, Java {java['refs']}"
    # the report states the retain-last applied, and every retained snapshot's reasons
    assert mine["retain_last"] == retain_last and mine["cutoff_ms"] == mine["older_than_ms"]
    assert [k["snapshot_id"] for k in mine["retained_reasons"]] == mine["retained"]
    assert all(k["reasons"] for k in mine["retained_reasons"])


def test_boundaries_are_not_vacuous(runs):
    """The cases reach both outcomes and the decisions differ between them: Java refuses some,
    decides others, and the decided ones do not all expire the same snapshots."""
    decided = {c: tuple(r["java"]["expired"]) for c, r in runs.items() if "error" not in r["java"]}
    refused = [c for c, r in runs.items() if "error" in r["java"]]
    assert len(refused) >= 20 and len(decided) >= 20
    assert len(set(decided.values())) >= 4
    # each property's 0, 1 and largest values lead to different decisions somewhere
    for short in ("max-snapshot-age-ms", "min-snapshots-to-keep", "max-ref-age-ms"):
        values = {decided[f"property_{short}_{v}"] for v in ("0", "1", "largest")}
        assert len(values) >= 2, short
    assert decided["property_min-snapshots-to-keep_0"] != decided["property_min-snapshots-to-keep_1"]
