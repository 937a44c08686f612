"""The skip policy of the Python suites (tests/tools/ci_skip_policy.py), run on a small suite of
its own in a subprocess: on a developer's machine a test that cannot run is skipped with the
reason; under CI (env CI set) the same skip, whether raised in a test, in a fixture or by
pytest.importorskip while the module is imported, fails; a skip whose reason starts "not
applicable here:" stays a skip, and an expected failure stays one."""
import os
import subprocess
import sys
from pathlib import Path

TOOLS = Path(__file__).resolve().parents[1] / "tools"

CONFTEST = (
    "import sys\n"
    f"sys.path.insert(0, {str(TOOLS)!r})\n"
    "from ci_skip_policy import pytest_make_collect_report, pytest_runtest_makereport  # noqa\n")

SUITE = (
    "import pytest\n"
    "@pytest.fixture\n"
    "def server():\n"
    "    pytest.skip('no server configured')\n"
    "def test_in_test():\n"
    "    pytest.skip('no fixtures folder')\n"
    "def test_in_fixture(server):\n"
    "    pass\n"
    "def test_premise():\n"
    "    pytest.skip('not applicable here: the pid was reused')\n"
    "@pytest.mark.xfail(reason='known', strict=True)\n"
    "def test_expected_failure():\n"
    "    assert False\n"
    "def test_runs():\n"
    "    pass\n")

MISSING_MODULE = (
    "import pytest\n"
    "pytest.importorskip('icm_no_such_module')\n"
    "def test_never():\n"
    "    pass\n")


def run(tmp_path, *names, ci):
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci:
        env["CI"] = "true"
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
                           *names], env=env, capture_output=True, text=True, cwd=tmp_path,
                          timeout=120)


def test_skips_say_why_and_fail_under_ci(tmp_path):
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_suite.py").write_text(SUITE)
    res = run(tmp_path, "test_suite.py", ci=False)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "1 passed, 3 skipped, 1 xfailed" in res.stdout, res.stdout
    for reason in ("no fixtures folder", "no server configured", "the pid was reused"):
        assert reason in res.stdout, res.stdout
    res = run(tmp_path, "test_suite.py", ci=True)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "1 failed, 1 passed, 1 skipped, 1 xfailed, 1 error" in res.stdout, res.stdout
    assert "skipped under CI (env CI is set): no fixtures folder" in res.stdout, res.stdout
    assert "skipped under CI (env CI is set): no server configured" in res.stdout, res.stdout


def test_a_module_that_cannot_be_imported_fails_under_ci(tmp_path):
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_missing.py").write_text(MISSING_MODULE)
    (tmp_path / "test_other.py").write_text("def test_other():\n    pass\n")
    res = run(tmp_path, "test_missing.py", "test_other.py", ci=False)
    assert res.returncode == 0 and "1 passed, 1 skipped" in res.stdout, res.stdout + res.stderr
    res = run(tmp_path, "test_missing.py", "test_other.py", ci=True)
    assert res.returncode != 0, res.stdout + res.stderr
    assert "skipped under CI (env CI is set): could not import 'icm_no_such_module'" in \
        res.stdout, res.stdout
