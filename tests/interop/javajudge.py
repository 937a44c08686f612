"""Runs the Java judge (tests/interop/java) from Python.

Builds it once through scripts/setup-java.sh (which skips Maven when nothing changed) and runs one
of its main classes in a single JVM, returning the JSON lines it prints. Callers batch all their
tables into one call: JVM start-up and Iceberg class loading cost seconds, so one run per phase of
a test session keeps the harness fast on 2 cores.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = "dev.icemaint.interop"


class JavaError(RuntimeError):
    """A Java tool exited non-zero; the message carries its stderr tail."""


@functools.lru_cache(maxsize=1)
def classpath() -> str:
    """The Java judge's runtime classpath, building it first if its sources changed."""
    out = subprocess.run(
        [str(REPO / "scripts" / "setup-java.sh")], check=True, capture_output=True, text=True
    )
    return out.stdout.strip().splitlines()[-1]


def run(main: str, args: list[str], timeout_s: float = 300) -> list[dict]:
    """Runs PACKAGE.main with args; returns its stdout parsed as one JSON object per line."""
    java = os.environ.get("ICM_JAVA", "java")
    cmd = [java, "-Xss4m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", classpath(),
           f"{PACKAGE}.{main}", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-25:])
        raise JavaError(f"{main} exited {proc.returncode}:\n{tail}")
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
