#!/usr/bin/env bash
# Runs on the GPU machine, from a bundle made by make_device_bundle.sh: the CUDA tests, the
# benchmark, and the instruction mix of the compiled kernels (from cuobjdump). Logs go to $OUT.
# Usage: device_run.sh [profile]   (profile: also Nsight Compute on one SIMT launch of case (a))
set -uo pipefail
cd "$(dirname "$0")"
out="${OUT:-.}"
cublas="$(ls /usr/local/cuda/lib64/libcublas.so.13 2>/dev/null ||
  find / -name libcublas.so.13 -not -path '/proc/*' 2>/dev/null | head -1)"
export LD_LIBRARY_PATH="$PWD/lib:$(dirname "${cublas:-/usr/local/cuda/lib64/x}")"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
  --format=csv
status=0
./cuda_scorer_test --gtest_brief=1 2>&1 | tee "$out/test.log" || status=1
./cuda_bench 2>&1 | tee "$out/bench.log" || status=1
cuobjdump="$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)"
"$cuobjdump" -sass ./cuda_bench >"$out/sass.txt" 2>&1
echo "kernel instruction counts (FFMA LDS LDG MUFU local-memory):"
awk '/Function :/ {fn = $3}
     /FFMA/ {ffma[fn]++} /LDS/ {lds[fn]++} /LDG/ {ldg[fn]++} /MUFU/ {mufu[fn]++}
     /LDL|STL/ {lmem[fn]++}
     END {for (f in ffma) printf "%s %d %d %d %d %d\n", f, ffma[f], lds[f], ldg[f], mufu[f], lmem[f]}' \
  "$out/sass.txt" | grep -i simt
if [ "${1:-}" = profile ]; then
  ncu="$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)"
  timeout 300 "$ncu" --clock-control none -k regex:SimtScoreKernel -c 1 \
    --section SpeedOfLight --section Occupancy --section LaunchStats \
    --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
    --section WarpStateStats --section SchedulerStats ./cuda_bench a >"$out/ncu.txt" 2>&1
  grep -E "SimtScoreKernel|Duration|Throughput|Pipe|Issue Slots|Achieved Occupancy|Hit Rate|Registers|Warp Cycles|Eligible|Stall" \
    "$out/ncu.txt" | head -60
fi
exit $status
