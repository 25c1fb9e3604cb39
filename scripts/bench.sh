#!/usr/bin/env bash
# Builds and runs the benchmarks, writing their tables to bench/results/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh"
out="$root/bench/results/ir-scale.md"
{
  echo "# Graph IR scale: parse + verify of a 1M-node graph"
  echo
  echo "Measured $(date -u +%Y-%m-%d) on $(nproc) x $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs),"
  echo "release build (RelWithDebInfo, -O2), best of 3 runs. Reproduce with \`scripts/bench.sh\`."
  echo
  "$root/build/bench/ir-scale-bench" 1000000 3
} > "$out"
cat "$out"
