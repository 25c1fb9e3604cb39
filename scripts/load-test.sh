#!/usr/bin/env bash
# The release test suite on a saturated machine: what a shared CI runner or a
# busy deployment host does to it. Each round runs `ctest --preset default`
# while stress-ng keeps every CPU busy and one worker cycling through 2 GiB
# of memory; the suite must pass every round (no retries).
#
#   scripts/load-test.sh [ROUNDS]   (default 3; after scripts/build.sh)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
rounds=${1:-3}
stress-ng --cpu "$(nproc)" --vm 1 --vm-bytes 2G --quiet &
stress=$!
trap 'kill "$stress" 2>/dev/null; wait "$stress" 2>/dev/null || true' EXIT
for round in $(seq "$rounds"); do
  echo "== load test round $round of $rounds (stress-ng: $(nproc) CPU workers, 2 GiB of memory)"
  start=$SECONDS
  ctest --preset default
  echo "== round $round passed in $((SECONDS - start)) s"
done
