#!/usr/bin/env bash
# Usage: run-fuzzer.sh FUZZER SECONDS WORKDIR
# Runs a libFuzzer target for a bounded time on a seed corpus made of the
# example graphs, the test machine files and every JSON file embedded in the
# lit tests (graphs and machines alike: each target takes what it parses). Fails on any
# crash, sanitizer report, leak or input slower than 10 s.
set -euo pipefail
fuzzer=$(realpath "$1") seconds=$2 work=$3
src=${FUEL_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
split_file=/usr/lib/llvm-22/bin/split-file

rm -rf "$work" && mkdir -p "$work/seeds" "$work/corpus" "$work/split"
cp "$src"/examples/*/*.json "$src"/test/lit/plan/*.json "$work/seeds/"
n=0
for t in "$src"/test/lit/*/*.test; do
  grep -q '^#--- ' "$t" || continue
  n=$((n + 1))
  "$split_file" --no-leading-lines "$t" "$work/split/$n" 2>/dev/null || continue
  for f in "$work/split/$n"/*.json; do
    [ -f "$f" ] && cp "$f" "$work/seeds/$n-$(basename "$f")"
  done
done
# Artifacts of the examples and their plan sections, for the artifact
# reader and the runtime (which loads seeds/mlp.fplan as its base).
fuelc="$src/build/tools/fuelc/fuelc"
if [ -x "$fuelc" ]; then
  for g in "$src"/examples/*/*.json; do
    name=$(basename "$g" .json)
    "$fuelc" plan "$g" --dim B=4 --dim T=4 -o "$work/seeds/$name.fplan" >/dev/null 2>&1 || true
    "$fuelc" plan "$g" --dim B=4 --dim T=4 --emit plan-json > "$work/seeds/$name.plan.json" 2>/dev/null || true
    "$fuelc" inspect "$work/seeds/$name.fplan" --section program > "$work/seeds/$name.program.json" 2>/dev/null || true
  done
  # The program of an in-place concat (buffers that are slices of another).
  "$fuelc" plan "$src/test/lit/plan/in-place-concat.test.json" --dim B=1 \
    -o "$work/seeds/in-place-concat.fplan" >/dev/null 2>&1 &&
    "$fuelc" inspect "$work/seeds/in-place-concat.fplan" --section program \
      > "$work/seeds/in-place-concat.program.json" || true
  # A SPIR-V kernel section (generated kernels and the library sgemm).
  "$fuelc" plan "$src/examples/mlp/mlp.json" --machine ci --dim B=4 --pin act=vulkan:0 \
    --pin fc2=vulkan:0 -o "$work/mlp-vulkan.fplan" >/dev/null 2>&1 &&
    "$fuelc" inspect "$work/mlp-vulkan.fplan" --section kernels.spirv > "$work/seeds/mlp.spirv.json" || true
fi
# ONNX models, for the ONNX importer.
for script in "$src"/test/lit/onnx/make-*.py; do
  /usr/bin/python3 "$script" "$work/seeds" >/dev/null 2>&1 || true
done
echo "run-fuzzer: $(ls "$work/seeds" | wc -l) seed inputs, ${seconds}s"
cd "$work"
# A fixed seed keeps CI runs close to reproducible (coverage that depends
# on timing or addresses still steers them apart; runs by hand may vary it).
status=0
"$fuzzer" -seed="${FUEL_FUZZ_SEED:-1}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 \
  -max_len=65536 -print_final_stats=1 corpus seeds 2>&1 | tee fuzzer.log || status=$?
[ "$status" -eq 0 ] && exit 0
# The report sits amid thousands of progress lines, which a CI log cut to its
# head and tail drops: repeat it last, with the input that failed.
echo "run-fuzzer: $(basename "$fuzzer") failed (exit code $status); its report:"
grep -v -E '^#[0-9]+[[:space:]]|NEW_FUNC' fuzzer.log |
  sed -n '/ERROR\|ALARM\|^rejected input\|^print -> parse\|deadly signal/,$p' | head -n 60
for input in crash-* leak-* timeout-* oom-* slow-unit-*; do
  [ -f "$input" ] || continue
  echo "run-fuzzer: $input, $(wc -c < "$input") bytes (base64 of its first 3 KiB):"
  head -c 3072 "$input" | base64 -w 100
done
exit "$status"
