#!/usr/bin/env bash
# Builds and runs the benchmarks, writing their tables to bench/results/.
# Each figure is reported beside a reference measured in the same run.
#
#   scripts/bench.sh [RESULT...]   e.g. scripts/bench.sh x86-conv onnx-models
#
# With RESULT names (the files of bench/results/ without .md), runs only
# those benchmarks.
set -euo pipefail
selected=" $* "
want() { [ "$selected" = "  " ] || [[ "$selected" == *" $1 "* ]]; }
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh"
results="$root/bench/results"
# OpenBLAS, the GEMM reference, at its best: Debian's 0.3.21 does not detect
# every AVX-512 CPU (Sapphire Rapids gets its slow generic kernels).
if grep -qw avx512f /proc/cpuinfo; then
  export OPENBLAS_CORETYPE=SkylakeX
fi
machine="$(nproc) x $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
# The CPU's x86-64 level (what the `host` machine plans for): figures from
# an AVX2 machine and an AVX-512 one differ.
machine+=" ($("$root/build/tools/fuelc/fuelc" targets | awk '/^host:/ {getline; print $NF; exit}' | tr -d '()'))"
header() {
  echo "# $1"
  echo
  echo "Measured $(date -u +%Y-%m-%d) on $machine, release build"
  echo "(RelWithDebInfo, -O2), one thread unless a row says otherwise. Reproduce with \`scripts/bench.sh\`."
  echo
}

if want ir-scale; then
  {
    header "Graph IR scale: parse + verify of a 1M-node graph (best of 3 runs)"
    "$root/build/bench/ir-scale-bench" 1000000 3
  } > "$results/ir-scale.md"
fi

if want plan-scale; then
  {
    header "Planning time of synthetic DAGs (fan-out and diamonds everywhere)"
    echo "Placement, candidates, copies, scheduling and memory planning; no code generation."
    echo "Reference: the seeds' greedy walk through the same pipeline, in the same run."
    echo
    "$root/build/bench/plan-scale-bench" 1000000
  } > "$results/plan-scale.md"
fi

data="$root/../shared/data/dnn-partitioning"
if [ -d "$data" ] && want dnn-partitioning; then
  {
    header "Placement on real operator graphs (msr-fiddle/dnn-partitioning)"
    echo "CPU latencies / 5, +10 us per accelerator kernel (as the data's README suggests)."
    echo "Costs in the data's units (ms). Ratios > 1: how much costlier the baseline's plan is."
    echo
    "$root/build/bench/dnn-partitioning-bench" "$data"
  } > "$results/dnn-partitioning.md"
fi
if want x86-kernels; then
  {
    header "CPU kernels and runtime: fuelc against memcpy, OpenBLAS and numpy"
    echo "Kernel times from \`fuel-run --profile\` (bandwidth, GFLOP/s); latencies are whole runs"
    echo "(\`fuel-run --bench\`, inputs read in place, outputs copied out) against numpy on the same"
    echo "weights. Every reference is measured in the same run, interleaved, medians."
    echo
    /usr/bin/python3 "$root/bench/x86_kernels.py" "$root/build" "$(mktemp -d)"
  } > "$results/x86-kernels.md"
fi
if want x86-conv; then
  {
    header "The library conv2d on every layer of ResNet-18, MobileNetV2 and SqueezeNet 1.1"
    "$root/build/bench/conv-bench"
  } > "$results/x86-conv.md"
fi
if want vulkan-lavapipe; then
  {
    header "Vulkan kernels and runtime on $(vulkaninfo --summary 2>/dev/null | grep -m1 deviceName | cut -d= -f2 | xargs)"
    echo "Kernel times from \`fuel-run --profile\` on vulkan:0 alone (inputs and outputs resident there)."
    echo "Mesa lavapipe runs SPIR-V on the CPU: regression figures for fuelc's kernels and runtime, not"
    echo "GPU figures. References measured in the same run, interleaved, medians."
    echo
    /usr/bin/python3 "$root/bench/vulkan_kernels.py" "$root/build" "$(mktemp -d)"
  } > "$results/vulkan-lavapipe.md"
fi
if want overlap; then
  {
    header "Devices at once: CPU and Vulkan (lavapipe) branches of one plan, and a hand-off"
    /usr/bin/python3 "$root/bench/overlap.py" "$root/build" "$(mktemp -d)"
  } > "$results/overlap.md"
fi
# ONNX Runtime from npm (the only registry besides Debian's); --ignore-scripts
# skips its post-install download of GPU providers: the CPU one is in the package.
ort="$root/build/bench/onnxruntime"
install_ort() {
  if [ ! -d "$ort/node_modules/onnxruntime-node" ]; then
    mkdir -p "$ort"
    npm install --prefix "$ort" --ignore-scripts --no-audit --no-fund onnxruntime-node@1.30.0 >/dev/null
  fi
}
ort_version() { (cd "$ort" && node -p "require('onnxruntime-node/package.json').version"); }
if want onnx-models; then
  install_ort
  {
    header "PyTorch-exported models end to end: fuelc against ONNX Runtime and PyTorch eager"
    echo "bench/onnx_models.py (random weights, fixed seeds). fuelc: \`fuel-run --bench\`"
    echo "on an artifact planned for the \`host\` machine; ONNX Runtime $(ort_version)"
    echo "(npm onnxruntime-node, CPU provider, all graph optimizations, sequential execution); PyTorch"
    echo "$(/usr/bin/python3 -c 'import torch; print(torch.__version__)') eager under no_grad. Same thread count for all three (one-thread cells pinned to one CPU for all three), interleaved per model."
    echo
    /usr/bin/python3 "$root/bench/onnx_models.py" "$root/build" "$(mktemp -d)" "$ort"
  } > "$results/onnx-models.md"
fi
if want transformer-shapes; then
  install_ort
  {
    header "Transformer layers across shapes: fuelc against ONNX Runtime and PyTorch eager"
    echo "bench/onnx_models.py --shapes (random weights, fixed seeds): the encoder layer and the"
    echo "decoder block of widths 256-768 over sequences of 64-512 tokens, batch 1 and 8. Engines,"
    echo "versions and pinning as in [onnx-models.md](onnx-models.md)."
    echo
    /usr/bin/python3 "$root/bench/onnx_models.py" "$root/build" "$(mktemp -d)" "$ort" --shapes
  } > "$results/transformer-shapes.md"
fi
if want quantized-models; then
  install_ort
  {
    header "Quantized models (PyTorch static QDQ): fuelc against ONNX Runtime on the same file"
    echo "bench/quantized_models.py (random weights, fixed seeds, calibrated on random inputs)."
    echo "fuelc: \`fuel-run --bench\` on an artifact planned for the \`host\` machine; ONNX Runtime"
    echo "$(ort_version) (npm onnxruntime-node, CPU provider, all graph optimizations, sequential"
    echo "execution). Same thread count for both, interleaved per model."
    echo
    /usr/bin/python3 "$root/bench/quantized_models.py" "$root/build" "$(mktemp -d)" "$ort"
  } > "$results/quantized-models.md"
fi
if want soak; then
  work=$(mktemp -d)
  /usr/bin/python3 - "$root/examples/pytorch" "$work/resnet18.onnx" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import export
for name, module, x in export.models(bench=True):
    if name == "resnet18":
        export.export(module.eval(), x, sys.argv[2])
PY
  "$root/build/tools/fuelc/fuelc" plan "$work/resnet18.onnx" --machine host --dim B=1 -o "$work/resnet18.fplan"
  {
    header "Soak: ResNet-18 (batch 1, 224x224) run 10,000 times, then loaded and unloaded 200 times"
    echo "\`soak-bench\`: latency per window of 1,000 runs (drift: its median over the first window's,"
    echo "in the same run), resident memory, open descriptors and threads after each window."
    echo
    "$root/build/bench/soak-bench" "$work/resnet18.fplan" 10000 2 200
  } > "$results/soak.md"
fi
cat "$results"/*.md
