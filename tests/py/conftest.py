"""pytest configuration of tests/py: a test that cannot run is skipped with the reason, and
fails under CI (tests/tools/ci_skip_policy.py)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))

from ci_skip_policy import pytest_make_collect_report, pytest_runtest_makereport  # noqa: E402,F401
