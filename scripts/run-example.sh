#!/usr/bin/env bash
# Sets up, builds, and runs fuelc on the example graphs: verifies the
# transformer encoder block (printing its summary) and prints the canonical
# form of the MLP, then plans the encoder block on a CPU + H200 machine.
# Later capabilities (artifacts, run) extend this script.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh"
fuelc="$root/build/tools/fuelc/fuelc"
echo "== fuelc check examples/transformer/encoder_block.json"
"$fuelc" check "$root/examples/transformer/encoder_block.json"
echo
echo "== fuelc print examples/mlp/mlp.json"
"$fuelc" print "$root/examples/mlp/mlp.json"
echo
echo "== fuelc plan examples/transformer/encoder_block.json --machine h200 --dim B=8 --dim T=128"
"$fuelc" plan "$root/examples/transformer/encoder_block.json" --machine h200 --dim B=8 --dim T=128
