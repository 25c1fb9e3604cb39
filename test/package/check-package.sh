#!/usr/bin/env bash
# Installs the runtime from BUILD_DIR into a temporary prefix, builds
# test/package against it with find_package(FuelRuntime), and runs the
# consumer on the MLP example (softmax rows sum to 1: 2 rows).
set -euo pipefail
build=$1 src=$2 fuelc=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$src/test/package" -B "$work/consumer" -G Ninja \
  -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/consumer" >/dev/null
"$fuelc" plan "$src/examples/mlp/mlp.json" --dim B=2 -o "$work/mlp.fplan"
"$work/consumer/consumer" "$work/mlp.fplan"
