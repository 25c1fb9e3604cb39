#!/usr/bin/env bash
# Builds fuelc and runs every test: the README's test command and what
# .ci/run executes on a clean clone.
#   1. Release build (GCC): Catch2 unit tests and the lit suite.
#   2. Sanitizer build (clang, ASan + UBSan): the same tests again, plus the
#      libFuzzer targets for FUEL_FUZZ_SECONDS (default 45) each.
#   3. ThreadSanitizer build of the runtime alone: the concurrency tests,
#      on artifacts the release build's fuelc plans.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/install-deps.sh

echo "== release build: unit and lit tests"
cmake --preset default >/dev/null
cmake --build --preset default
ctest --preset default

echo "== sanitizer build (ASan + UBSan): unit, lit and fuzz tests"
cmake --preset sanitize -DFUEL_FUZZ_SECONDS="${FUEL_FUZZ_SECONDS:-45}" >/dev/null
cmake --build --preset sanitize
ctest --preset sanitize

echo "== thread sanitizer build: the runtime used from several threads"
cmake --preset tsan >/dev/null
cmake --build --preset tsan
ctest --preset tsan
