"""pytest hooks shared by tests/py/conftest.py and tests/interop/conftest.py: a test that cannot
run says so, and under CI it fails.

On a developer's machine a test whose server, tool, fixture or Python module is missing is
skipped, with the reason (pytest -rs lists them). Under CI (env CI set) everything a test needs is
part of the setup (.ci/run starts the servers; scripts/test.sh builds the tools and the venv), so
such a skip, whether raised in a test, a fixture or while importing a test module
(pytest.importorskip), is turned into a failure that carries the reason. A skip whose reason
starts with NOT_APPLICABLE is the test's premise not holding on this host (not a missing part of
the setup): it stays a skip under CI too.
"""
from __future__ import annotations

import os

import pytest

NOT_APPLICABLE = "not applicable here:"


def under_ci() -> bool:
    return bool(os.environ.get("CI"))


def _reason(longrepr) -> str:
    # A skip's longrepr is (path, line, "Skipped: reason").
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        text = str(longrepr[2])
        return text[len("Skipped: "):] if text.startswith("Skipped: ") else text
    return str(longrepr)


def _fails_under_ci(report) -> bool:
    return (under_ci() and report.skipped and not hasattr(report, "wasxfail")
            and not _reason(report.longrepr).startswith(NOT_APPLICABLE))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if _fails_under_ci(report):
        report.outcome = "failed"
        report.longrepr = f"skipped under CI (env CI is set): {_reason(report.longrepr)}"


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    report = outcome.get_result()
    if _fails_under_ci(report):
        report.outcome = "failed"
        report.longrepr = f"skipped under CI (env CI is set): {_reason(report.longrepr)}"
