"""The sharded-sweep examples the project ships (docs/SHARDS.md), run for real.

examples/k8s/orphan-sweep-indexed-job.yaml: the Job is parsed (PyYAML) and its container
command run once per completion index with JOB_COMPLETION_INDEX set and the Job's own env, as
the kubelet would (the image's `icemaint` is the built CLI, first on PATH; the catalog's
.pyiceberg.yaml is the ConfigMap's content). Run as the Job runs them (parallelism 1: one
after another) the shards delete exactly what one unsharded run plans; with --dry-run added, all
at once, they report it.

examples/spark/orphan_shards.py: its driver function runs on a local SparkContext when PySpark
is installed, and always on a stand-in context whose parallelize/map/collect run each task in a
thread of its own (the task function, the subprocess and the driver's union are the example's
own code either way); the union equals one unsharded run's plan, path by path.
"""
import importlib.util
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from plan_helpers import CLI, local
from test_shards import lake_with_boundary_orphans

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[2]
JOB = ROOT / "examples" / "k8s" / "orphan-sweep-indexed-job.yaml"
SPARK_EXAMPLE = ROOT / "examples" / "spark" / "orphan_shards.py"


def new_lake(tmp_path):
    (tmp_path / "lake").mkdir()
    return lake_with_boundary_orphans(tmp_path / "lake")


def paths(doc):
    return sorted(local(o["path"]) for o in doc["orphans"])


def cluster_env(lake, tmp_path):
    """What the cluster provides besides the Job: the image's icemaint on PATH, the catalog
    config (the ConfigMap mounted at PYICEBERG_HOME) naming the lake's catalog as default."""
    bin_dir = tmp_path / "image-bin"
    bin_dir.mkdir(exist_ok=True)
    link = bin_dir / "icemaint"
    if not link.exists():
        link.symlink_to(os.path.abspath(CLI))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "PYICEBERG_"))}
    env.update({"PATH": f"{bin_dir}:{env.get('PATH', '/usr/bin:/bin')}", "HOME": str(tmp_path),
                "PYICEBERG_DEFAULT_CATALOG": "reg"})
    return env


def job_pods(lake, tmp_path):
    """The Job's container command and env per completion index (the table and config folder
    pointed at the test's lake, as a cluster operator sets them)."""
    job = yaml.safe_load(JOB.read_text())
    assert job["kind"] == "Job" and job["spec"]["completionMode"] == "Indexed"
    container = job["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e["value"] for e in container["env"]}
    n = job["spec"]["completions"]
    assert int(env["ICEMAINT_SHARDS"]) == n, "completions must equal ICEMAINT_SHARDS"
    assert "--shard" in " ".join(container["command"])
    base = cluster_env(lake, tmp_path)
    base.update(env)
    base.update({"ICEMAINT_TABLE": "ns.t", "PYICEBERG_HOME": str(lake.wh)})
    return job, container["command"], base, n


def run_pod(command, env, index):
    return subprocess.Popen(command, env={**env, "JOB_COMPLETION_INDEX": str(index)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL)


def finish(proc, index, n):
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, f"pod {index}: {err}"
    doc = json.loads(out)
    assert doc["shard"] == f"{index}/{n}"
    return doc


def test_k8s_indexed_job_deletes_what_one_run_plans(tmp_path):
    lake, orphans = new_lake(tmp_path)
    job, command, env, n = job_pods(lake, tmp_path)
    assert n >= 2
    whole = json.loads(lake.icm("--json", "remove-orphan-files", "ns.t", "--dry-run").stdout)
    assert paths(whole) == orphans
    expected = sorted(set(lake.files()) - set(orphans))
    assert job["spec"]["parallelism"] == 1  # deleting shards share the table lease
    docs = [finish(run_pod(command, env, i), i, n) for i in range(n)]
    deleted = sorted(local(o["path"]) for d in docs for o in d["orphans"]
                     if o["state"] == "deleted")
    assert deleted == orphans
    assert lake.files() == expected


def test_k8s_indexed_job_dry_run_shards_at_once(tmp_path):
    lake, orphans = new_lake(tmp_path)
    _, command, env, n = job_pods(lake, tmp_path)
    assert command[:2] == ["sh", "-c"]
    dry = command[:2] + [command[2] + " --dry-run"]
    before = lake.files()
    procs = [run_pod(dry, env, i) for i in range(n)]
    docs = [finish(p, i, n) for i, p in enumerate(procs)]
    union = [p for d in docs for p in paths(d)]
    assert sorted(union) == orphans and len(union) == len(set(union))
    assert lake.files() == before


def load_spark_example():
    spec = importlib.util.spec_from_file_location("orphan_shards", SPARK_EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class StandInContext:
    """parallelize(range(n), n).map(f).collect(): f of each element, each in a thread of its
    own (as N Spark tasks run at once), results in partition order."""

    def parallelize(self, items, slices):
        assert slices == len(list(items))
        return _StandInRDD(list(items))


class _StandInRDD:
    def __init__(self, items, fn=None):
        self.items, self.fn = items, fn

    def map(self, fn):
        return _StandInRDD(self.items, fn)

    def collect(self):
        with ThreadPoolExecutor(max_workers=len(self.items)) as pool:
            return list(pool.map(self.fn, self.items))


def spark_env(lake, tmp_path, monkeypatch):
    for k, v in cluster_env(lake, tmp_path).items():
        monkeypatch.setenv(k, v)
    for k in [k for k in os.environ if k.startswith(("AWS_", "PYICEBERG_"))]:
        monkeypatch.delenv(k)
    monkeypatch.setenv("PYICEBERG_HOME", str(lake.wh))
    monkeypatch.setenv("PYICEBERG_DEFAULT_CATALOG", "reg")
    monkeypatch.setenv("ICEMAINT", os.path.abspath(CLI))


@pytest.mark.parametrize("n", [1, 3, 5])
def test_spark_example_tasks_on_a_stand_in_context(tmp_path, monkeypatch, n):
    lake, orphans = new_lake(tmp_path)
    spark_env(lake, tmp_path, monkeypatch)
    whole = json.loads(lake.icm("--json", "remove-orphan-files", "ns.t", "--dry-run").stdout)
    before = lake.files()
    mod = load_spark_example()
    report = mod.sweep_report(StandInContext(), "ns.t", n)
    assert sorted(local(o["path"]) for o in report["orphans"]) == paths(whole) == orphans
    assert report["listed"] == whole["listed"] and report["shards"] == n
    assert report["planned_from"] == whole["planned_from"]
    assert lake.files() == before  # a report: nothing deleted


def test_spark_example_union_refuses_mixed_metadata():
    mod = load_spark_example()
    a = {"shard": "0/2", "planned_from": "m1", "orphans": [], "listed": 1, "table": "t"}
    b = {"shard": "1/2", "planned_from": "m2", "orphans": [], "listed": 1, "table": "t"}
    with pytest.raises(ValueError, match="different metadata"):
        mod.union([a, b])
    with pytest.raises(ValueError, match="shards"):
        mod.union([a, dict(a)])


def test_spark_example_on_a_local_spark_context(tmp_path, monkeypatch):
    if importlib.util.find_spec("pyspark") is None:
        # Asked for (ICM_WITH_PYSPARK=1, as .ci/run does): missing is a setup failure, which
        # fails under CI; not asked for: the premise does not hold on this host.
        wanted = os.environ.get("ICM_WITH_PYSPARK") == "1"
        pytest.skip(("" if wanted else "not applicable here: ") +
                    "PySpark is not installed in this venv (opt-in: ICM_WITH_PYSPARK=1 "
                    "scripts/setup-python.sh; about 2 minutes and 491 MB); the stand-in test "
                    "runs the same task and union code")
    lake, orphans = new_lake(tmp_path)
    spark_env(lake, tmp_path, monkeypatch)
    monkeypatch.setenv("PYSPARK_PYTHON", sys.executable)
    before = lake.files()
    from pyspark import SparkContext
    mod = load_spark_example()
    sc = SparkContext("local[3]", "icemaint-shards-test")
    try:
        report = mod.sweep_report(sc, "ns.t", 3)
    finally:
        sc.stop()
    assert sorted(local(o["path"]) for o in report["orphans"]) == orphans
    assert lake.files() == before
