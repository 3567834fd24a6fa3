#!/usr/bin/env bash
# Packs the libFuzzer targets of build-fuzz (scripts/fuzz.sh builds them), their shared libraries
# and the seed corpora into .fuzz-bundle/, with run.sh, so that the long runs the hostile-input
# policy asks for (an hour of CPU per target) can go to a many-core machine:
#   scripts/fuzz_bundle.sh && (there) bash .fuzz-bundle/run.sh SECONDS WORKERS TARGET...
# run.sh runs each target with libFuzzer's -fork=WORKERS for SECONDS, from the seeds, and prints
# the executions, coverage and corpus of each, and any finding's reproducer (left under
# $OUT/fuzz-artifacts/ when OUT is set).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build-fuzz}
bundle=.fuzz-bundle
rm -rf "$bundle"
mkdir -p "$bundle/lib"
cp "$build"/fuzz/fuzz_* "$bundle/"
cp -r fuzz/corpus "$bundle/seeds"
ldd "$build"/fuzz/fuzz_* | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u |
  grep -vE '/(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s)\.so' |
  xargs -r cp -L -t "$bundle/lib/"
# Packed, to stay under what a machine's job may carry.
tar czf "$bundle/fuzz.tar.gz" -C "$bundle" lib $(cd "$bundle" && ls -d fuzz_*)
rm -rf "$bundle/lib" "$bundle"/fuzz_*
cat >"$bundle/run.sh" <<'RUN'
#!/usr/bin/env bash
set -uo pipefail
cd "$(dirname "$0")"
[ -d lib ] || tar xzf fuzz.tar.gz
seconds=$1 workers=$2
shift 2
export LD_LIBRARY_PATH="$PWD/lib"
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1
out=${OUT:-/tmp}/fuzz-artifacts
status=0
for t in "$@"; do
  mkdir -p "work/$t" "$out/$t"
  cp -n seeds/"$t"/* "work/$t/" 2>/dev/null
  ./fuzz_"$t" -fork="$workers" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=2048 \
    -artifact_prefix="$out/$t/" "work/$t" >"work/$t.log" 2>&1 || status=1
  # fork mode's last status line: runs, executions, coverage, features, corpus, crashes
  echo "== $t ($workers workers x ${seconds}s): $(grep -E '^#[0-9]+' "work/$t.log" | tail -1)"
  grep -E "ERROR|crash-|leak-|timeout-|oom-" "work/$t.log" | head -5
done
exit $status
RUN
chmod +x "$bundle/run.sh"
du -sh "$bundle"
