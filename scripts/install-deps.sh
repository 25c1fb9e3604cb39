#!/usr/bin/env bash
# Installs every build, test and benchmark dependency of fuelc from Debian packages.
# Idempotent: packages already present are skipped by apt; safe to run on every CI start.
set -euo pipefail

packages=(
  # Build.
  cmake ninja-build g++ pkg-config
  # Compiler infrastructure: LLVM/MLIR 22 (libMLIR.so, FileCheck, lit, not).
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
  # Libraries used by the core and the tools.
  libcli11-dev nlohmann-json3-dev catch2
  # SPIR-V / Vulkan (lavapipe runs compute shaders on the CPU).
  spirv-tools glslc libshaderc-dev libvulkan-dev mesa-vulkan-drivers vulkan-tools
  vulkan-validationlayers
  # ONNX import.
  libprotobuf-dev protobuf-compiler python3-onnx
  # Fuzzing: clang with libFuzzer and the sanitizer runtimes.
  clang-14 libclang-rt-14-dev
  # The runtime's Python module and its tests.
  python3-dev pybind11-dev python3-pytest
  # Test and benchmark helpers.
  python3 python3-numpy python3-jsonschema libopenblas-dev stress-ng
  # PyTorch-exported example models and their reference outputs.
  python3-torch python3-torchvision
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "install-deps: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all packages present"
fi
