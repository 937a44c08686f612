"""icemaint never creates a catalog database.

`icemaint --uri sqlite:////tmp/x/typo.db list-namespaces` created an empty typo.db and exited 0:
a mistyped catalog path became a new, empty catalog that every later command silently used (and
register-table recorded tables in). The rule: the SQLite file is opened without
SQLITE_OPEN_CREATE, for reading and for commits; a missing one is an error (exit 1) naming the
resolved (absolute) database path, "no such catalog database", and no file appears.
"""
import os
import subprocess

import pytest

CLI = os.environ.get("ICM_CLI")


def icm(cwd, *args):
    if not CLI or not os.path.exists(CLI):
        pytest.fail("ICM_CLI does not name the built icemaint binary")
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("PYICEBERG_")}
    env["HOME"] = str(cwd / "nohome")
    return subprocess.run([CLI, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)


COMMANDS = [
    ("list-namespaces",),
    ("list-tables", "ns"),
    ("inspect", "ns.t"),
    ("remove-orphan-files", "ns.t", "--dry-run"),
    ("set-properties", "ns.t", "a=b"),
    ("register-table", "ns.t", "/nonexistent/v1.metadata.json"),
    ("maintain", "--all", "--dry-run"),
]


@pytest.mark.parametrize("form", ["absolute_uri", "relative_uri", "config_file"])
@pytest.mark.parametrize("command", COMMANDS, ids=[c[0] for c in COMMANDS])
def test_missing_sqlite_catalog_is_an_error_and_never_created(tmp_path, form, command):
    db = tmp_path / "typo.db"
    if form == "config_file":
        cfg = tmp_path / "c.yaml"
        cfg.write_text(f"catalog:\n  c:\n    type: sql\n    uri: sqlite:///{db}\n")
        args = ("--config", str(cfg), "--catalog", "c")
    else:
        uri = f"sqlite:///{db}" if form == "absolute_uri" else "sqlite:///typo.db"
        args = ("--uri", uri, "--warehouse", f"file://{tmp_path}/wh")
    before = sorted(os.listdir(tmp_path))
    p = icm(tmp_path, *args, *command)
    assert p.returncode == 1, f"exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    assert "no such catalog database" in p.stderr, p.stderr
    assert str(db) in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert not db.exists()
    assert sorted(os.listdir(tmp_path)) == before
