#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with clang (ASan + UBSan) in build-fuzz and runs each
# for SECONDS seconds (default 60) from its seed corpus fuzz/corpus/<target>/. Fails on any
# crash, leak, sanitizer report, timeout or out-of-memory, printing the reproducer's path.
#   scripts/fuzz.sh [SECONDS] [TARGET...]      (e.g. scripts/fuzz.sh 7: about a minute in all)
# Environment: BUILD_DIR (build-fuzz; or a tree configured with -DGMMSCORE_FUZZ=ON), JOBS (build jobs, 1), FUZZ_ARGS (more libFuzzer flags).
# Reproduce a finding: build-fuzz/fuzz/fuzz_<target> <reproducer>
# Run one by hand with a scratch folder first, build-fuzz/fuzz/fuzz_<target> SCRATCH
# fuzz/corpus/<target>: libFuzzer writes the inputs it finds into its first corpus folder.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
build=${BUILD_DIR:-build-fuzz}

command -v clang++-14 >/dev/null ||
  { echo "fuzz.sh: needs clang: apt-get install -y clang libclang-rt-14-dev" >&2; exit 2; }
# A tree configured for fuzzing already (scripts/sanitize.sh asan's build-asan, as CI uses it) is
# used as it is. Otherwise: every library built with the fuzzer's coverage and the sanitizers;
# Werror off, since clang warns where gcc does not. No CUDA (nvcc takes no -fsanitize), no tests.
if ! grep -qs '^GMMSCORE_FUZZ:BOOL=ON$' "$build/CMakeCache.txt"; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
    -DGMMSCORE_FUZZ=ON -DGMMSCORE_SANITIZE=address,undefined -DGMMSCORE_CUDA=OFF \
    -DGMMSCORE_WERROR=OFF -DBUILD_TESTING=OFF >/dev/null
fi
cmake --build "$build" --target fuzzers -j "${JOBS:-1}"

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=($(ls fuzz/corpus))
fi
# UB stops the run like a crash; leaks are reported at the end of the input that leaked. Set
# UBSAN_OPTIONS yourself to add suppressions=FILE while a known report waits for its fix.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
failed=()
for t in "${targets[@]}"; do
  work="$build/fuzz/corpus/$t"        # what a run adds to the seeds (the tree stays clean)
  artifacts="$build/fuzz/artifacts/$t/"
  log="$build/fuzz/$t.log"
  mkdir -p "$work" "$artifacts"
  echo "== $t: ${seconds}s"
  # -timeout: an input that takes longer is a finding; -rss_limit_mb: so is one that needs more.
  if "$build/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=2048 \
       -print_final_stats=1 -artifact_prefix="$artifacts" ${FUZZ_ARGS:-} \
       "$work" "fuzz/corpus/$t" >"$log" 2>&1; then
    # The last status line (#RUNS cov: N ft: N corp: N exec/s: N) and the totals.
    grep -E '^#[0-9]+' "$log" | tail -1
    grep -E 'stat::number_of_executed_units|stat::average_exec_per_sec' "$log" | tr '\n' ' '
    echo
  else
    echo "FAILED: $t (log $log)"
    grep -E '^==[0-9]+==ERROR|runtime error|SUMMARY' "$log" | head -5 || true
    grep -E 'Test unit written to' "$log" || true
    failed+=("$t")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz.sh: findings in: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz.sh: no findings in ${#targets[@]} targets"
