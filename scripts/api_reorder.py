#!/usr/bin/env python3
"""scripts/api_reorder.py: the mechanical half of the public API's out-parameter-first change
(docs/API.md, rule 1), kept so a branch that still calls the old signatures can be brought
over the same way: `scripts/api_reorder.py [--check] FILE...` rewrites, in C sources and
headers, every declaration, definition and call of the functions in REORDER (and renames those
in RENAME), moving arguments to the new order. Each argument keeps its exact text; the
whitespace around the argument slots stays where it was, so line breaks do not move.

A call whose argument count differs from the table's (a mention in prose like `f()`) is left
alone; one with arguments is reported, for a look by hand. Strings, character literals and
comments are skipped when splitting arguments. Exit 1 with --check when a file would change.
"""
import re
import sys

# name: new order, as indices of the old parameters
REORDER = {
    # expire.h, orphans.h, check.h, manifest.h: parsers and the maintenance entry points
    "icm_expire_snapshots": [2, 0, 1],
    "icm_orphan_sweep": [2, 0, 1],
    "icm_check_table": [4, 0, 1, 2, 3],
    "icm_expire_choose": [3, 4, 0, 1, 2],
    "icm_expire_plan_files": [4, 0, 1, 2, 3],
    "icm_expire_cleanup_parse": [1, 0],
    "icm_prefix_mismatch_parse": [1, 0],
    "icm_avro_codec_from_property": [1, 0],
    # catalog.h, sys/catalog.h
    "icm_catalog_config_resolve": [1, 2, 3, 0],
    "icm_catalog_config_own_files": [1, 2, 0],
    "icm_catalog_load_table_location": [2, 0, 1],
    "icm_catalog_namespace_exists": [2, 0, 1],
    "icm_catalog_create_table": [3, 0, 1, 2],
    "icm_catalog_write_metadata_file": [3, 0, 1, 2],
    # fileio.h
    "icm_fileio_read": [2, 3, 0, 1],
    "icm_fileio_read_range": [5, 0, 1, 2, 3, 4],
    "icm_fileio_holds": [4, 0, 1, 2, 3],
    "icm_fileio_delete_existing": [2, 0, 1],
    "icm_fileio_delete_batch": [3, 0, 1, 2],
    "icm_fileio_stat": [2, 0, 1],
    "icm_fileio_pathmap_apply": [2, 0, 1],
    "icm_fileio_pathmap_unapply": [2, 0, 1],
    "icm_fileio_resolve": [2, 0, 1],
    "icm_fileio_checksum_of": [2, 3, 0, 1],
    "icm_fileio_s3_property_unknown": [1, 0],
    "icm_location_local_path": [1, 0],
    "icm_location_canonical": [1, 0],
    "icm_location_identity": [1, 0],
    # manifest.h
    "icm_manifest_list_reader_next": [1, 0],
    "icm_manifest_reader_next": [1, 0],
    "icm_manifest_writer_finish": [1, 2, 3, 0],
    "icm_manifest_list_writer_finish": [1, 2, 0],
    # metadata.h
    "icm_table_metadata_find_current": [2, 0, 1],
    "icm_table_metadata_to_json": [1, 2, 0],
    "icm_table_metadata_to_json_gzip": [1, 2, 0],
    "icm_table_metadata_current_snapshot_id": [1, 0],
    "icm_table_metadata_next_row_id": [1, 0],
    "icm_table_metadata_schema_json": [2, 0, 1],
    "icm_table_metadata_spec_fields_json": [2, 0, 1],
    "icm_table_metadata_property_at": [2, 3, 0, 1],
    # transaction.h
    "icm_txn_new_data_file": [3, 0, 1, 2],
    "icm_txn_snapshot_id": [1, 0],
    "icm_table_property_check": [2, 0, 1],
    # update.h
    "icm_table_changes_to_json": [1, 2, 0],
    "icm_table_changes_apply": [2, 0, 1],
    "icm_table_changes_seen": [2, 0, 1],
}

# old name: new name (icm_<module>_<verb>); applied before REORDER
RENAME = {
    "icm_remove_orphan_files": "icm_orphan_sweep",
    "icm_choose_expired": "icm_expire_choose",
    "icm_set_allocator": "icm_allocator_set",
}

IDENT = re.compile(r"[A-Za-z0-9_]")


def split_args(text, start):
    """text[start] == '('. Return (end, slots): end is the index of the matching ')', slots
    the (begin, end) spans of the top-level arguments. None when unbalanced."""
    depth = 0
    i = start
    slots = []
    begin = start + 1
    n = len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            q = c
            i += 1
            while i < n and text[i] != q:
                i += 2 if text[i] == "\\" else 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                slots.append((begin, i))
                return i, slots
        elif c == "," and depth == 1:
            slots.append((begin, i))
            begin = i + 1
        i += 1
    return None


def rewrite(text, path, report):
    for old, new in RENAME.items():
        text = re.sub(r"(?<![A-Za-z0-9_])" + old + r"(?![A-Za-z0-9_])", new, text)
    out = []
    pos = 0
    pat = re.compile(r"(?<![A-Za-z0-9_])(" + "|".join(sorted(REORDER, key=len, reverse=True))
                     + r")(\s*)\(")
    while True:
        m = pat.search(text, pos)
        if m is None:
            out.append(text[pos:])
            break
        name = m.group(1)
        paren = m.end() - 1
        r = split_args(text, paren)
        if r is None:
            out.append(text[pos:m.end()])
            pos = m.end()
            continue
        end, slots = r
        order = REORDER[name]
        args = [text[b:e] for b, e in slots]
        if len(args) == 1 and args[0].strip() == "":
            args = []
        if len(args) != len(order):
            if args:
                line = text.count("\n", 0, m.start()) + 1
                report.append(f"{path}:{line}: {name} with {len(args)} arguments, not "
                              f"{len(order)}: left alone")
            out.append(text[pos:end + 1])
            pos = end + 1
            continue
        stripped = []
        for a in args:
            lead = len(a) - len(a.lstrip())
            trail = len(a) - len(a.rstrip())
            stripped.append((a[:lead], a.strip(), a[len(a) - trail:] if trail else ""))
        pieces = []
        for k, (b, e) in enumerate(slots):
            lead, _, trail = stripped[k]
            pieces.append(lead + stripped[order[k]][1] + trail)
        out.append(text[pos:paren + 1])
        out.append(",".join(pieces))
        out.append(")")
        pos = end + 1
    return "".join(out)


def main(argv):
    check = False
    if argv and argv[0] == "--check":
        check = True
        argv = argv[1:]
    report = []
    changed = []
    for path in argv:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            text = f.read()
        new = rewrite(text, path, report)
        if new != text:
            changed.append(path)
            if not check:
                with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
                    f.write(new)
    for line in report:
        print(line, file=sys.stderr)
    for path in changed:
        print(("would change " if check else "changed ") + path)
    return 1 if check and changed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
