#!/usr/bin/env bash
# Usage: make-fuzz-seeds.sh SEEDS
# Writes the fuzzers' seed corpus into SEEDS: the example graphs, the test
# machine files, every JSON file embedded in the lit tests (graphs and
# machines alike: each target takes what it parses), artifacts of the examples
# and their sections, and the ONNX models of the lit tests. Built once per
# test run and shared by every fuzz test (run-fuzzer.sh).
set -euo pipefail
seeds=$(realpath -m "$1") split=$(realpath -m "$1").split
src=${FUEL_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
split_file=/usr/lib/llvm-22/bin/split-file

rm -rf "$seeds" && mkdir -p "$seeds" "$split"
cp "$src"/examples/*/*.json "$src"/test/lit/plan/*.json "$seeds/"
n=0
for t in "$src"/test/lit/*/*.test; do
  grep -q '^#--- ' "$t" || continue
  n=$((n + 1))
  "$split_file" --no-leading-lines "$t" "$split/$n" 2>/dev/null || continue
  for f in "$split/$n"/*.json; do
    [ -f "$f" ] && cp "$f" "$seeds/$n-$(basename "$f")"
  done
done
# Artifacts of the examples and their plan sections, for the artifact
# reader and the runtime (which loads seeds/mlp.fplan as its base).
fuelc="$src/build/tools/fuelc/fuelc"
if [ -x "$fuelc" ]; then
  for g in "$src"/examples/*/*.json; do
    name=$(basename "$g" .json)
    "$fuelc" plan "$g" --dim B=4 --dim T=4 -o "$seeds/$name.fplan" >/dev/null 2>&1 || true
    "$fuelc" plan "$g" --dim B=4 --dim T=4 --emit plan-json > "$seeds/$name.plan.json" 2>/dev/null || true
    "$fuelc" inspect "$seeds/$name.fplan" --section program > "$seeds/$name.program.json" 2>/dev/null || true
  done
  # The program of an in-place concat (buffers that are slices of another).
  "$fuelc" plan "$src/test/lit/plan/in-place-concat.test.json" --dim B=1 \
    -o "$seeds/in-place-concat.fplan" >/dev/null 2>&1 &&
    "$fuelc" inspect "$seeds/in-place-concat.fplan" --section program \
      > "$seeds/in-place-concat.program.json" || true
  # A SPIR-V kernel section (generated kernels and the library sgemm).
  "$fuelc" plan "$src/examples/mlp/mlp.json" --machine ci --dim B=4 --pin act=vulkan:0 \
    --pin fc2=vulkan:0 -o "$split/mlp-vulkan.fplan" >/dev/null 2>&1 &&
    "$fuelc" inspect "$split/mlp-vulkan.fplan" --section kernels.spirv > "$seeds/mlp.spirv.json" || true
fi
# ONNX models, for the ONNX importer.
for script in "$src"/test/lit/onnx/make-*.py; do
  /usr/bin/python3 "$script" "$seeds" >/dev/null 2>&1 || true
done
rm -rf "$split"
echo "make-fuzz-seeds: $(ls "$seeds" | wc -l) seed inputs in $seeds"
