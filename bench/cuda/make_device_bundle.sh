#!/usr/bin/env bash
# Gathers what runs on a GPU machine into .device-bundle/, to carry there: the CUDA tests (the
# daemon's, and the Align RPC's and `align --server`'s on the GPU),
# cuda_bench, cuda_launch_bench, em_bench, gmmscored and gmmscore, the scripts that run them
# (device_run.sh, device_e2e.sh), and the shared libraries the binaries load (Abseil, Highway,
# OpenMP, gRPC, protobuf, OpenBLAS, ...: the GPU machine has none of them). The binaries
# (stripped) and the libraries are packed in bin.tar.gz and lib.tar.gz to stay under the carry
# limit; the scripts unpack them. Left out: the C and C++ runtimes, the NVIDIA driver and cuBLAS,
# which the GPU machine's CUDA installation provides (libcublasLt alone is over 500 MB).
# Usage: bench/cuda/make_device_bundle.sh [BUILD_DIR]   (default build; a relative BUILD_DIR is
# taken from the current directory; the bundle goes to the repo root's .device-bundle/)
set -euo pipefail
build="$(realpath "${1:-build}")"
cd "$(dirname "$0")/../.."
[ -x "$build/bench/cuda_bench" ] || { echo "make_device_bundle.sh: no CUDA build in $build" >&2; exit 1; }
bundle=.device-bundle
rm -rf "$bundle"
mkdir -p "$bundle/lib"
binaries=("$build/tests/cuda_fidelity_test" "$build/tests/cuda_scorer_test" "$build/tests/cuda_tensor_scorer_test"
  "$build/tests/cuda_fusion_test" "$build/tests/cuda_viterbi_test" "$build/tests/server_cuda_test"
  "$build/tests/cuda_em_stats_test" "$build/tests/server_align_test"
  "$build/tests/server_align_cli_test"
  "$build/tests/cuda_forward_backward_test"
  "$build/bench/cuda_bench" "$build/bench/cuda_launch_bench" "$build/bench/cuda_align_bench"
  "$build/bench/em_bench"
  "$build/server/gmmscored" "$build/tools/gmmscore")
cp bench/cuda/device_run.sh bench/cuda/device_e2e.sh bench/cuda/stage_latency.py \
  bench/cuda/device_train_gmm.sh "$bundle/"
mkdir -p "$bundle/bin"
cp "${binaries[@]}" "$bundle/bin/"
strip --strip-unneeded "$bundle"/bin/*  # symbol tables: a third of each binary
# Loaded when first needed (util/shared_library.h), so not in ldd's list: libsndfile (audio) and
# OpenBLAS (the bench's BLAS peer), with what they load.
lazy=()
for soname in libsndfile.so.1 libopenblas.so.0; do
  # awk reads to the end: a reader that stops early kills ldconfig with SIGPIPE (under pipefail,
  # a silent exit), as its list outgrows a pipe's buffer.
  path=$(ldconfig -p | awk -v n="$soname" '$1 == n && path == "" {path = $NF} END {print path}')
  [ -n "$path" ] || { echo "make_device_bundle.sh: $soname is not installed" >&2; exit 1; }
  lazy+=("$path")
done
{ ldd "${binaries[@]}" "${lazy[@]}" | awk '$2 == "=>" && $3 ~ /^\// {print $3}'; printf '%s\n' "${lazy[@]}"; } |
  sort -u |
  grep -vE '/(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|libcuda|libnvidia[^/]*|libcublas|libcublasLt)\.so' |
  xargs -r cp -L -t "$bundle/lib/"
tar czf "$bundle/lib.tar.gz" -C "$bundle/lib" .
tar czf "$bundle/bin.tar.gz" -C "$bundle/bin" .
rm -rf "${bundle:?}/lib" "${bundle:?}/bin"
du -sh "$bundle"
