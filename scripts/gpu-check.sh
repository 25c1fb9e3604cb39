#!/usr/bin/env bash
# GPU checks, in two halves, for a machine with an NVIDIA GPU that has the
# driver, Python, numpy and PyTorch but not fuelc's compiler toolchain (the
# `device` tool's H200):
#   scripts/gpu-check.sh prepare   here: builds, then plans into .gpu-check/
#       every op and graph case for cuda:0 (PTX) and for the GPU's Vulkan
#       device, with their inputs and expected outputs, plus the benchmark
#       artifacts, and copies fuel-run and the Vulkan loader's Debian
#       packages beside them;
#   scripts/gpu-check.sh run       there (carry .gpu-check): runs the CUDA
#       cases, the Vulkan cases (where a Vulkan driver loads) and the
#       benchmarks (bench/gpu_bench.py), printing a short table last.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/.gpu-check"
case "${1:-}" in
prepare)
  "$root/scripts/build.sh"
  build="$root/build"
  fuelc="$build/tools/fuelc/fuelc"
  rm -rf "$out" && mkdir -p "$out/bin" "$out/bench"
  strip --strip-debug -o "$out/bin/fuel-run" "$build/tools/fuel-run/fuel-run"
  py=/usr/bin/python3
  $py "$root/test/lit/reference/check-ops.py" --compiled-ptx "$fuelc" "$out/bin/fuel-run" "$out/cuda-ops" | tail -2
  $py "$root/test/lit/run/check-graphs.py" "$fuelc" "$out/bin/fuel-run" "$build/tools/fuel-ref/fuel-ref" \
    "$out/cuda-graphs" ptx | tail -2
  # The Vulkan cases on the GPU's Vulkan device: planned for the h200
  # machine's vulkan:0 (exported; lavapipe here checks them as they are).
  FUEL_EXPORT_CASES=1 FUEL_CHECK_MACHINE=h200 $py "$root/test/lit/reference/check-ops.py" \
    --compiled-vulkan "$fuelc" "$out/bin/fuel-run" "$out/vulkan-ops" | tail -2
  bench() { # NAME GRAPH DEVICE FLAGS...
    local name=$1 graph=$2 device=$3
    shift 3
    "$fuelc" plan "$graph" --machine h200 --allow-device "$device" --input-residency "$device" \
      --output-residency "$device" "$@" -o "$out/bench/$name.fplan"
  }
  $py - "$out/bench" <<'PY'
import json, sys
d = sys.argv[1]
def graph(name, inputs, nodes, outputs):
    json.dump({"format": "fuel.graph", "version": 1, "name": name,
               "inputs": [{"name": n, "dtype": "f32", "shape": s} for n, s in inputs],
               "nodes": nodes, "outputs": outputs}, open(f"{d}/{name}.json", "w"))
big = [16384, 16384]
graph("chain", [("x", big), ("y", big)],
      [{"id": "a", "op": "mul", "inputs": ["x", "y"]}, {"id": "b", "op": "add", "inputs": ["a", "x"]},
       {"id": "c", "op": "relu", "inputs": ["b"]}, {"id": "d", "op": "mul", "inputs": ["c", "y"]}], ["d"])
graph("sgemm", [("a", [4096, 4096]), ("b", [4096, 4096])],
      [{"id": "c", "op": "matmul", "inputs": ["a", "b"]}], ["c"])
graph("tiny", [("x", [1, 16])],
      [{"id": f"r{i}", "op": "neg", "inputs": [f"r{i - 1}" if i else "x"]} for i in range(200)], ["r199"])
PY
  bench chain-cuda "$out/bench/chain.json" cuda:0
  bench chain-vulkan "$out/bench/chain.json" vulkan:0
  bench sgemm-cuda "$out/bench/sgemm.json" cuda:0
  bench tiny-cuda "$out/bench/tiny.json" cuda:0 --no-fusion
  cp "$root/scripts/gpu-cases.py" "$root/bench/gpu_bench.py" "$out/bin/"
  # The device's image has the NVIDIA driver but no Vulkan loader (nor the
  # GL dispatch libraries the driver's Vulkan ICD loads): Debian's travel.
  lists=$(mktemp -d)
  apt=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 "-oDir::State::Lists=$lists")
  mkdir -p "$out/gl" "$lists/partial"
  apt-get "${apt[@]}" -qq update
  (cd "$out/gl" && apt-get "${apt[@]}" -qq download libvulkan1 libglvnd0 libegl1 libglx0 libgl1 \
    libopengl0 libgles2 2>/dev/null)
  rm -rf "$lists"
  # The `device` tool carries at most 64 MiB: thread counts do not matter
  # on a GPU, and only the cases' artifacts, inputs and expected outputs go.
  rm -rf "$out"/cuda-graphs/threads_[23]*
  find "$out" \( -name 'got*.npy' -o -name 'out*.npy' -o -name 'g.json' \) -delete
  du -sh "$out"
  ;;
run)
  [ -d "$out" ] || { echo "gpu-check: run 'scripts/gpu-check.sh prepare' first (and carry .gpu-check)" >&2; exit 2; }
  py=python3
  if ! ldconfig -p | grep -q libvulkan.so.1; then
    for deb in "$out"/gl/*.deb; do dpkg -x "$deb" /; done
    ldconfig
  fi
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
  status=0
  for suite in cuda-ops cuda-graphs vulkan-ops; do
    echo "== $suite"
    $py "$out/bin/gpu-cases.py" "$out/$suite" "$out/bin/fuel-run" | tail -15 || status=1
  done
  echo "== benchmarks"
  $py "$out/bin/gpu_bench.py" "$out/bench" "$out/bin/fuel-run" "$(mktemp -d)" || status=1
  exit $status
  ;;
*)
  echo "usage: scripts/gpu-check.sh prepare|run" >&2
  exit 2
  ;;
esac
