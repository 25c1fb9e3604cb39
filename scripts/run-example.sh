#!/usr/bin/env bash
# Sets up, builds, and runs fuelc on the example graphs: verifies the
# transformer encoder block (printing its summary) and prints the canonical
# form of the MLP. Later capabilities (plan, run) extend this script.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh"
fuelc="$root/build/tools/fuelc/fuelc"
echo "== fuelc check examples/transformer/encoder_block.json"
"$fuelc" check "$root/examples/transformer/encoder_block.json"
echo
echo "== fuelc print examples/mlp/mlp.json"
"$fuelc" print "$root/examples/mlp/mlp.json"
