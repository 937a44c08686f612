"""All N shards of a dry-run sweep, one after another, of a 30-append local table: wall and
CPU (user+sys) of the N processes, best of 3, for each CLI given (docs/BENCHMARKS.md, "Sharded
sweeps check every range").

  ICM_CLI=BUILD/icemaint /work/main/build/venv/bin/python bench/shard_cross_range.py CLI...
"""
import os, resource, subprocess, sys, tempfile, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "py"))
from plan_helpers import Lake
from pathlib import Path
with tempfile.TemporaryDirectory() as d:
    lake = Lake(Path(d), appends=30)
    for cli in [*sys.argv[1:]]:
        for n in (1, 4, 16):
            best = None
            for rep in range(3):
                r0 = resource.getrusage(resource.RUSAGE_CHILDREN); t0 = time.time()
                for i in range(n):
                    p = subprocess.run([cli, "--config", str(lake.cfg), "--catalog", "reg", "--json", "remove-orphan-files", "ns.t", "--dry-run", "--shard", f"{i}/{n}"], capture_output=True, text=True)
                    assert p.returncode == 0, p.stderr
                wall = time.time() - t0; r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
                best = min(best or (9e9, 0), (wall, cpu))
            print(f"{cli} N={n:2d} all shards: wall {best[0]:.3f}s cpu {best[1]:.3f}s (best of 3)")
