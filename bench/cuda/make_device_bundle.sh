#!/usr/bin/env bash
# Gathers the CUDA test binaries, cuda_bench, device_run.sh and the shared libraries the binaries
# load (Abseil, Highway, OpenMP: the GPU machine has none of them) into .device-bundle/, to carry
# to a GPU machine. Left out: the C and C++ runtimes and cuBLAS, which the GPU machine's CUDA
# installation provides (libcublasLt alone is over 500 MB).
# Usage: bench/cuda/make_device_bundle.sh [BUILD_DIR]   (default build-cuda; run from the repo root)
set -euo pipefail
build="${1:-build-cuda}"
bundle=.device-bundle
rm -rf "$bundle"
mkdir -p "$bundle/lib"
binaries=("$build/tests/cuda_scorer_test" "$build/tests/cuda_tensor_scorer_test"
  "$build/bench/cuda_bench")
cp "${binaries[@]}" bench/cuda/device_run.sh "$bundle/"
ldd "${binaries[@]}" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u |
  grep -vE '/(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|libcublas|libcublasLt)\.so' |
  xargs -r cp -L -t "$bundle/lib/"
du -sh "$bundle"
