#!/usr/bin/env bash
# Installs the runtime from BUILD_DIR into a temporary prefix, builds
# test/package against it with find_package(FuelRuntime), and runs the
# consumers (C++ and C) on the MLP example (softmax rows sum to 1: 2 rows).
set -euo pipefail
build=$1 src=$2 fuelc=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
# The runtime executes the artifact's lowered program: it installs (and
# links) no compiler library, no IR, no importer.
libs=$(cd "$work/prefix" && ls lib*/libFuel*.a | xargs -n1 basename | sort | tr '\n' ' ')
if [ "$libs" != "libFuelArtifact.a libFuelRuntime.a libFuelSupport.a " ]; then
  echo "check-package: the runtime installs $libs" >&2
  exit 1
fi
cmake -S "$src/test/package" -B "$work/consumer" -G Ninja \
  -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/consumer" >/dev/null
"$fuelc" plan "$src/examples/mlp/mlp.json" --dim B=2 -o "$work/mlp.fplan"
"$work/consumer/consumer" "$work/mlp.fplan"
c=$("$work/consumer/c-consumer" "$work/mlp.fplan")
echo "$c"
[ "$c" = "c: output [2, 10] sum 2" ]
