#!/bin/bash
# Idle RSS of the embedded stack (`pnpm start` on an empty data dir), per process.
# Usage (after `pnpm build`): perf/scripts/stack-rss.sh [repo-root] [label]
#   BASE=41000  first of the 5 ports used (write, read, projector, edge, relay = BASE+1..5)
#   IDLE=20     seconds to idle after the banner before reading VmRSS
repo=${1:-$(cd "$(dirname "$0")/../.." && pwd)}; label=${2:-stack}; base=${BASE:-41000}
dir=$(mktemp -d)
cd "$repo" || exit 1
WRITE_API_PORT=$((base+1)) READ_API_PORT=$((base+2)) PROJECTOR_PORT=$((base+3)) EDGE_PORT=$((base+4)) \
  RELAY_PORT=$((base+5)) EGGMESH_DATA_DIR=$dir node services/stack/dist/main.js > "$dir.log" 2>&1 &
sup=$!
for _ in $(seq 1 90); do grep -q "eggmesh is up\|not healthy" "$dir.log" && break; sleep 1; done
sleep "${IDLE:-20}"
total=0
for pid in $sup $(pgrep -P $sup); do
  rss=$(awk '/VmRSS/{print $2}' /proc/$pid/status)
  name=$(tr '\0' ' ' < /proc/$pid/cmdline | grep -o '[a-z-]*/dist/[a-z]*.js' | head -1)
  echo "$label $pid ${name:-?} $((rss/1024)) MiB"
  total=$((total+rss))
done
echo "$label TOTAL $((total/1024)) MiB"
kill -TERM $sup; wait $sup 2>/dev/null
rm -rf "$dir" "$dir.log"
