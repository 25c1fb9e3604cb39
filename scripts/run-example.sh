#!/usr/bin/env bash
# The README's main command: sets up, builds, then compiles the transformer
# encoder block example for this machine's CPU and runs it. Prints the
# placement summary (devices, kernels, fused groups, memory), the route the
# runtime chose, and a check of the output against the reference
# interpreter on random inputs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
example="$root/examples/transformer/encoder_block.json"
echo "== fuelc plan $example --dim B=8 --dim T=16, then fuel-run on B=3, T=5 inputs"
/usr/bin/python3 "$root/scripts/check-example.py" "$example" "$root/build" "$work" \
  --extent 5 --bound 16
