#!/usr/bin/env bash
# Sanitizer builds (CMake option GMMSCORE_SANITIZE), each in its own build tree, without CUDA:
#   asan  build-asan: ASan + UBSan, the whole test suite; with clang, the fuzz targets too
#         (scripts/fuzz.sh BUILD_DIR=build-asan runs them from this tree, building nothing more)
#   tsan  build-tsan: TSan, the daemon's tests (only their targets are built, less those that run
#         the gmmscore command: ServerCliTest and ServerAlignCliTest)
#   scripts/sanitize.sh [asan|tsan]...       (default: both, one after the other)
# Sanitized code is compiled at -O1 with line tables only: the reports keep their file:line
# stacks, and the builds take far less time than at -O2 -g (UBSan's checks slow the optimizer).
# Fails if a test fails or any process (tests, and the gmmscored / gmmscore they start) made a
# sanitizer report; the reports are kept in BUILD/sanitizer-reports/ and their first lines
# printed. TSan's suppressions (scripts/tsan.supp) say what it cannot check with Debian's gRPC.
# Environment: CC/CXX (default: ASan with clang-14 where installed, since clang compiles code with
# UBSan's checks several times faster than gcc and builds the fuzz targets; TSan with gcc, whose
# libstdc++ and libgomp scripts/tsan.supp is written for), JOBS (build jobs, 1), CTEST_JOBS (1).
set -euo pipefail
cd "$(dirname "$0")/.."

# run_build DIR SANITIZERS TARGETS CTEST_ARGS...: configure, build TARGETS (all when empty), test,
# then collect the reports. (Called in an || list, where set -e does not act: each step returns
# on failure itself.)
run_build() {
  local dir=$1 sanitize=$2 targets=$3
  shift 3
  local cc=${CC:-gcc} cxx=${CXX:-g++} debug=-g1
  if [ -z "${CXX:-}" ] && [ "$sanitize" = address,undefined ] && command -v clang++-14 >/dev/null; then
    cc=clang-14 cxx=clang++-14
  fi
  # clang links with lld where it is installed: a sanitized test executable links in 0.7 s, not
  # GNU ld's 1.7 s.
  local link=()
  if [[ $cxx == clang* ]]; then
    debug=-gline-tables-only
    if command -v ld.lld >/dev/null; then
      link=(-DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld -DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=lld)
    fi
  fi
  # libgomp is not built with TSan either: it cannot see the join at the end of a parallel
  # region, so under TSan the CPU scorer runs its OpenMP regions on the calling thread.
  local omp=()
  if [ "$sanitize" = thread ]; then omp=(OMP_THREAD_LIMIT=1); fi
  # No CUDA (nvcc takes no -fsanitize); Werror off, since sanitizers make compilers warn more.
  # With clang, the ASan tree also builds the fuzz targets (libFuzzer's coverage on every library).
  local fuzz=OFF
  if [ "$sanitize" = address,undefined ] && [[ $cxx == clang* ]]; then fuzz=ON; fi
  # The TSan tree builds without precompiled headers (cmake/precompiled_headers.cmake), so that a
  # file that forgot an #include fails somewhere in CI.
  local pch=ON
  if [ "$sanitize" = thread ]; then pch=OFF; fi
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 $debug -DNDEBUG" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 $debug -DNDEBUG" -DGMMSCORE_FUZZ=$fuzz -DGMMSCORE_PCH=$pch \
    "${link[@]}" -DGMMSCORE_SANITIZE="$sanitize" -DGMMSCORE_CUDA=OFF -DGMMSCORE_WERROR=OFF \
    >/dev/null || return 1
  if [ "$targets" = daemon-tests ]; then
    # The daemon's test executables, but for those that run the gmmscore command (*_cli_test:
    # the whole command line would be built for them; they run under ASan and in the plain tree).
    targets=$(ninja -C "$dir" -t targets all |
      sed -nE 's/^(server_[a-z0-9_]+_test): phony$/\1/p' | grep -v '_cli_test$')
  fi
  cmake --build "$dir" -j "${JOBS:-1}" ${targets:+--target $targets} || return 1
  local reports=$PWD/$dir/sanitizer-reports log=$PWD/$dir/ctest.log
  rm -rf "$reports" && mkdir -p "$reports"
  # ASan, LSan and TSan write each process's reports to a file of its own (log_path), so that one
  # made by a child process (gmmscored, gmmscore) under a test that passes anyway is not lost.
  # GCC's UBSan ignores log_path and writes to stderr: its reports are taken from the log. UB and
  # ASan errors stop the process; TSan reports every race it sees and exits 66.
  local common="log_path=$reports/report:print_stacktrace=1"
  local status=0
  echo "== $dir: ctest $* (all output in $log)"
  env "${omp[@]}" ASAN_OPTIONS="$common:detect_leaks=1" \
  UBSAN_OPTIONS="$common:halt_on_error=1" \
  TSAN_OPTIONS="$common:second_deadlock_stack=1:suppressions=$PWD/scripts/tsan.supp" \
    ctest --test-dir "$dir" -V -j "${CTEST_JOBS:-1}" "$@" >"$log" 2>&1 || status=1
  local summary  # from ctest's "N% tests passed" line to the end
  summary=$(grep -n 'tests passed' "$log" | tail -1 | cut -d: -f1)
  tail -n +"${summary:-$(wc -l <"$log")}" "$log"
  grep -E 'runtime error:' "$log" >"$reports/ubsan-from-log" || rm "$reports/ubsan-from-log"
  if compgen -G "$reports/*" >/dev/null; then
    echo "== $dir: sanitizer reports ($reports):"
    for r in "$reports"/*; do
      echo "-- $r"
      grep -m1 -E 'ERROR|WARNING|runtime error' "$r" || head -3 "$r"
    done
    status=1
  else
    echo "== $dir: no sanitizer reports"
  fi
  return $status
}

failed=()
for what in "${@:-asan tsan}"; do
  for w in $what; do
    case $w in
      # The docker bundle test rebuilds and runs the release bundle: not a sanitizer's job.
      asan) run_build build-asan address,undefined "" -E '^server_docker_build_steps$' ||
              failed+=(asan) ;;
      tsan) run_build build-tsan thread daemon-tests \
              -R 'Server|Batcher|Lane|TimerQueue|WindowCutter|InOrder|ViterbiQueue' -E 'CliTest' ||
              failed+=(tsan) ;;
      *) echo "usage: $0 [asan|tsan]..." >&2; exit 2 ;;
    esac
  done
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "sanitize.sh: failed: ${failed[*]}" >&2
  exit 1
fi
echo "sanitize.sh: clean"
