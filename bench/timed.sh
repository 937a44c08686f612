# bench/timed.sh: sourced by the benchmark scripts (needs WORK set).
#
#   timed_v LABEL COMMAND...
# runs COMMAND under /usr/bin/time -v with stdout in $WORK/LABEL.out and the time report in
# $WORK/LABEL.time, and prints one line: wall seconds, user+sys CPU seconds, peak RSS in MiB.
timed_v() {
  local label=$1
  shift
  /usr/bin/time -v "$@" > "$WORK/$label.out" 2> "$WORK/$label.time"
  awk -v l="$label" -F': ' '
    /Elapsed \(wall clock\)/ { n = split($2, p, ":"); w = p[n] + (n > 1 ? p[n-1] * 60 : 0) }
    /User time/ { u = $2 } /System time/ { s = $2 }
    /Maximum resident/ { r = $2 / 1024 }
    END { printf "%-28s wall %7.2f s  cpu %7.2f s  peak RSS %7.1f MiB\n", l, w, u + s, r }' \
    "$WORK/$label.time"
}
