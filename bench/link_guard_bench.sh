#!/bin/bash
# bench/link_guard_bench.sh BUILD_A BUILD_B: the cost of the delete phase's last checks
# (src/maint/link_guard.c, the sweep's re-stat): a real (deleting) sweep of 100,000 orphans
# among 100,000 referenced files in 1,000 folders, with the CLI of two builds on identical
# copies of one generated tree, 3 alternating runs each (docs/BENCHMARKS.md, "Delete-phase
# checks").
set -e
A=${1:?usage: link_guard_bench.sh BUILD_A BUILD_B}; Z=${2:?usage: link_guard_bench.sh BUILD_A BUILD_B}
B=$Z/bench/bench_orphans; D=/dev/shm/icm_lgb/t0; O=/dev/shm/icm_lgb/orig
rm -rf /dev/shm/icm_lgb; mkdir -p /dev/shm/icm_lgb
nice -n 19 $B gen $D 100000 100000 >/dev/null
cp -a $D $O
CUTOFF=$(( $(date +%s) * 1000 + 3600000 ))
for i in 1 2 3; do
  for bin in "$A" "$Z"; do
    rm -rf $D; cp -a $O $D
    /usr/bin/time -f "$bin run$i: %e s wall, %U+%S s cpu, %M KB" nice -n 19 "$bin/icemaint" -q --json remove-orphan-files $D/t --force --older-than $CUTOFF --settle 0s --no-lock > /dev/shm/icm_lgb/out.json
    python3 -c "import json;d=json.load(open('/dev/shm/icm_lgb/out.json'));print('  deleted',d.get('deleted'),'kept',d.get('kept'),'failed',d.get('failed'))"
  done
done
rm -rf /dev/shm/icm_lgb
