#!/usr/bin/env bash
# treemem.sh: runs a command and reports the peak resident memory of its
# whole process tree (the command and everything it starts: go test's
# compiler and test binaries, say), sampled every half second from /proc.
#
#   scripts/treemem.sh go test -race ./...
#
# The last line on stderr is "TREEMEM peak N MiB rc=STATUS"; the exit status
# is the command's. Linux only. A process that lives less than half a second
# between samples can be missed: the figure is a lower bound, close for
# long-lived test binaries.
set -u
"$@" &
pid=$!
peak=0
while kill -0 "$pid" 2>/dev/null; do
  # The tree below pid, from every process's parent.
  tree=$(ps -eo pid=,ppid= | awk -v root="$pid" '
    { parent[$1] = $2 }
    END {
      inside[root] = 1
      for (grew = 1; grew; ) {
        grew = 0
        for (p in parent) if (!(p in inside) && (parent[p] in inside)) { inside[p] = 1; grew = 1 }
      }
      for (p in inside) print p
    }')
  sum=0
  for p in $tree; do
    kb=$(awk '/^VmRSS/ { print $2 }' "/proc/$p/status" 2>/dev/null)
    sum=$((sum + ${kb:-0}))
  done
  [ "$sum" -gt "$peak" ] && peak=$sum
  sleep 0.5
done
wait "$pid"
rc=$?
echo "TREEMEM peak $((peak / 1024)) MiB rc=$rc" >&2
exit "$rc"
