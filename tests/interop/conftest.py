"""Session fixtures for the interop harness: the shapes are built once per test session into a
temporary warehouse (SQLite catalog; also PostgreSQL when ICM_PG_DSN is set), and read once by
every judge. Tests must not modify the shared warehouse; a test that changes tables builds its
own small warehouse (see `scratch_warehouse`)."""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))

# A test that cannot run is skipped with the reason, and fails under CI.
from ci_skip_policy import pytest_make_collect_report, pytest_runtest_makereport  # noqa: E402,F401
import oracle  # noqa: E402
import shapes  # noqa: E402
from warehouse import Warehouse  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def built(tmp_path_factory) -> tuple[Warehouse, dict[str, shapes.Shape]]:
    """Every shape, built into one SQLite-backed warehouse."""
    wh = Warehouse(tmp_path_factory.mktemp("interop") / "warehouse")
    return wh, shapes.build(wh)


@pytest.fixture(scope="session")
def before(built) -> dict[str, oracle.TableState]:
    """Every judge's fingerprints of every snapshot of every built table (one Java run)."""
    wh, chosen = built
    return oracle.capture(wh, shapes.judges(chosen.values()))


@pytest.fixture(scope="session")
def pg_dsn() -> str:
    dsn = os.environ.get("ICM_PG_DSN")
    if not dsn:
        pytest.skip("ICM_PG_DSN is not set: no PostgreSQL server for the catalog")
    return dsn


@pytest.fixture
def scratch_warehouse(tmp_path) -> Warehouse:
    """An empty warehouse of the test's own, for tests that change tables."""
    return Warehouse(tmp_path / "warehouse")


@pytest.fixture(scope="session")
def pg_warehouse(pg_dsn, tmp_path_factory) -> Warehouse:
    """A warehouse whose catalog lives in PostgreSQL, under a catalog name unique to this run."""
    return Warehouse(tmp_path_factory.mktemp("interop-pg") / "warehouse", pg_dsn=pg_dsn,
                     name=f"icm_{uuid.uuid4().hex[:12]}")


@pytest.fixture(scope="session")
def icemaint_cli() -> Path:
    cli = Path(os.environ.get("ICM_CLI", REPO / "build" / "icemaint"))
    if not cli.is_file() or not os.access(cli, os.X_OK):
        pytest.skip(f"icemaint binary not found at {cli} (build it, or set ICM_CLI)")
    return cli
