#!/usr/bin/env bash
# Installs dependencies (if missing), configures and builds fuelc in build/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
cmake --preset default -S "$root" >/dev/null
cmake --build --preset default
