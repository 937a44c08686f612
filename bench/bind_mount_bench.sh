#!/bin/sh
# bench/bind_mount_bench.sh BUILD_DIR [N_REFERENCED]: what the sweep's identity rule for one
# folder at two paths costs (docs/BENCHMARKS.md, "The sweep across bind mounts"). A table of
# N_REFERENCED (default 200000) data files (bench_orphans gen), swept (dry run) with the
# listing limited to metadata/, so every data file is a reference outside the listing location:
#  off: the machine's mount table as it is (the listing's file system mounted once: nothing is
#       stat'ed);
#  on:  in a private mount namespace with one bind mount of a folder of the same file system
#       (its device then appears twice: each outside reference is stat'ed once).
# Five runs each, wall and CPU (user, sys), then the stat calls of one run of each (strace -c).
# Needs unshare (a user namespace, or root), /usr/bin/time and strace.
set -eu
build=$1
n=${2:-200000}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$build/bench/bench_orphans" gen "$dir" "$n" 1000 >/dev/null
mkdir "$dir/a" "$dir/b"
cmd="$build/icemaint remove-orphan-files $dir/t --location $dir/t/metadata --dry-run --older-than 0s --force"
for i in 1 2 3 4 5; do /usr/bin/time -f "off wall=%e user=%U sys=%S" $cmd >/dev/null; done
for i in 1 2 3 4 5; do
    unshare --map-root-user --mount sh -c \
        "mount --bind $dir/a $dir/b && /usr/bin/time -f 'on  wall=%e user=%U sys=%S' $cmd >/dev/null"
done
echo "stat calls, off:"; strace -f -c -e trace=newfstatat,statx,stat,lstat $cmd 2>&1 >/dev/null | tail -1
echo "stat calls, on:"
unshare --map-root-user --mount sh -c \
    "mount --bind $dir/a $dir/b && strace -f -c -e trace=newfstatat,statx,stat,lstat $cmd 2>&1 >/dev/null | tail -1"
uptime
