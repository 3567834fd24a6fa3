#!/usr/bin/env bash
# Runs on the GPU machine, from a bundle made by make_device_bundle.sh: the CUDA tests, the
# benchmark, and the instruction mix of the compiled kernels (from cuobjdump). Logs go to $OUT.
# Usage: device_run.sh [tests|profile]   (tests: the CUDA tests only; profile: also Nsight Compute
# on one launch each of the SIMT, the 3xF16 and the 3xTF32 tensor-core kernels in case (a))
set -uo pipefail
cd "$(dirname "$0")"
[ -d lib ] || { mkdir lib && tar xzf lib.tar.gz -C lib; }
[ -x gmmscored ] || tar xzf bin.tar.gz
out="${OUT:-.}"
# The tests' data: tests/data of the checkout the bundle sits in (the path compiled into the test
# binaries is the build machine's).
export GMMSCORE_TESTDATA="${GMMSCORE_TESTDATA:-$(cd .. && pwd)/tests/data}"
export GMMSCORE_CLI="$PWD/gmmscore"  # for the tests that run the command
cublas="$(ls /usr/local/cuda/lib64/libcublas.so.13 2>/dev/null ||
  find / -name libcublas.so.13 -not -path '/proc/*' 2>/dev/null | head -1)"
export LD_LIBRARY_PATH="$PWD/lib:$(dirname "${cublas:-/usr/local/cuda/lib64/x}")"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
  --format=csv
status=0
for test in cuda_fidelity_test cuda_scorer_test cuda_tensor_scorer_test cuda_fusion_test cuda_viterbi_test \
  cuda_forward_backward_test cuda_em_stats_test server_cuda_test server_align_test \
  server_align_cli_test; do
  timeout 300 "./$test" 2>&1 | tee "$out/$test.log" | grep -vE '^\[ +(RUN|OK) +\]' || status=1
done
[ "${1:-}" = tests ] && exit $status
timeout 400 ./cuda_bench 2>&1 | tee "$out/bench.log" || status=1
cuobjdump="$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)"
"$cuobjdump" -sass ./cuda_bench >"$out/sass.txt" 2>&1
echo "kernel instruction counts (FFMA HMMA LDS LDG MUFU BAR local-memory):"
awk '/Function :/ {fn = $3; seen[fn] = 1}
     /FFMA/ {ffma[fn]++} /HMMA/ {hmma[fn]++} /LDS/ {lds[fn]++} /LDG/ {ldg[fn]++}
     /MUFU/ {mufu[fn]++} /BAR/ {bar[fn]++} /LDL|STL/ {lmem[fn]++}
     END {for (f in seen) printf "%s %d %d %d %d %d %d %d\n", f, ffma[f], hmma[f], lds[f], ldg[f],
                                 mufu[f], bar[f], lmem[f]}' \
  "$out/sass.txt" | grep -iE 'simt|ILi9ELb|ILi10ELb|F16ScoreKernelILi(9|10)E' | sort
if [ "${1:-}" = profile ]; then
  ncu="$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)"
  sections=(--section SpeedOfLight --section Occupancy --section LaunchStats
    --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis
    --section WarpStateStats --section SchedulerStats --section InstructionStats)
  # kernel:launches to skip, past the autotune's launches of the kernel (SIMT: 16 in each of the
  # kSimt and kAuto tunes; 3xF16: 64 in each of the kTensor and kAuto tunes; 3xTF32: 64 in the
  # kTensorTf32 tune):
  # the one profiled is a timed row's, in the blocking the autotune of that (profiled) process
  # picked.
  for entry in SimtScoreKernel:60 TensorF16ScoreKernelILi9E:160 TensorScoreKernelILi9ELb1E:96; do
    kernel="${entry%%:*}"
    timeout 240 "$ncu" --clock-control none --kernel-name-base mangled -k "regex:$kernel" \
      --launch-skip "${entry##*:}" -c 1 \
      "${sections[@]}" ./cuda_bench a >"$out/ncu-$kernel.txt" 2>&1
    grep -E "ScoreKernel|Duration|Throughput|Pipe|Issue Slots|Achieved Occupancy|Hit Rate" \
      "$out/ncu-$kernel.txt" | head -30
    grep -E "Registers|Warp Cycles|Eligible|Stall|Executed Ipc" "$out/ncu-$kernel.txt" | head -30
  done
fi
exit $status
