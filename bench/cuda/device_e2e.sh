#!/usr/bin/env bash
# Runs on the GPU machine, from a bundle made by make_device_bundle.sh: the daemon end to end.
# gmmscored --backend cuda serving model (c), a random 5000 states x 32 Gaussians x 39 dims (or
# MODEL_SPEC, e.g. 5000x1024x39 for a model that keeps the GPU busy), and
# gmmscore bench-stream on the same machine for each stream count given: real-time streams,
# ENCODING scores (float16 unless set), windows of 10 frames (BENCH_ARGS: more bench-stream
# options, e.g. --front-end mfcc for audio streams, which the daemon has as 13 MFCC + online CMVN
# + deltas; DAEMON_ARGS: more gmmscored options, e.g. --devices all; GMMSCORED: another daemon
# binary, for A/B runs; LISTEN: the daemon's address, 127.0.0.1:50051 unless set, e.g.
# unix:/tmp/gmmscored.sock for a Unix-domain socket). After each run: the daemon's stages over
# the measured seconds (stage_latency.py), its batch sizes (/metrics) and the CPU time the daemon
# and the whole machine used. Logs go to $OUT, named by the stream count and TAG.
# PERF_SECONDS=N (with a perf binary beside this script): a system-wide profile of N seconds from
# 3 s after the warm-up, written as perf-RUN.txt: the machine by thread name and shared object,
# the busiest threads, then the daemon by symbol.
# Usage: [TAG=name] [BENCH_ARGS="--connections 40"] [DAEMON_ARGS="--devices all"] \
#   device_e2e.sh SECONDS STREAMS [STREAMS ...]
set -uo pipefail
cd "$(dirname "$0")"
[ -d lib ] || { mkdir lib && tar xzf lib.tar.gz -C lib; }
[ -x gmmscored ] || tar xzf bin.tar.gz
out="${OUT:-.}"
export LD_LIBRARY_PATH="$PWD/lib"
seconds=${1:?usage: device_e2e.sh SECONDS STREAMS [STREAMS ...]}
shift
status=0
listen="${LISTEN:-127.0.0.1:50051}"
model=/tmp/model-c.gmms
model_spec="${MODEL_SPEC:-5000x32x39}"
[ "$model_spec" = 5000x32x39 ] || model="/tmp/model-$model_spec.gmms"
[ -f "$model" ] || ./gmmscore convert "random:$model_spec" "$model" || exit 1
front_end=/tmp/mfcc-online.conf
printf -- '--cmvn=online\n--delta-order=2\n' >"$front_end"
metrics() {
  python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1]).read().decode())' \
    "http://127.0.0.1:9090/metrics"
}
# Context switches and CPU ticks (user + system) of the daemon's threads so far, summed by thread
# name less its number (stream-cq-3 -> stream-cq): "name switches ticks" lines.
thread_counts() {
  for task in /proc/"$1"/task/*; do
    awk -v name="$(sed 's/-[0-9]*$//' "$task/comm" 2>/dev/null)" \
      '/ctxt_switches/ {n += $2} END {print name, n}' "$task/status" 2>/dev/null |
      paste -d' ' - <(awk '{print $14 + $15}' "$task/stat" 2>/dev/null)
  done | awk 'NF == 3 {n[$1] += $2; c[$1] += $3} END {for (k in n) print k, n[k], c[k]}' | sort
}
busy_jiffies() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8, $2 + $3 + $4 + $5 + $6 + $7 + $8}' /proc/stat; }
for streams in "$@"; do
  run="$streams${TAG:+-$TAG}"
  log="$out/gmmscored-$run.log"
  # shellcheck disable=SC2086 # DAEMON_ARGS is a list of options
  OMP_WAIT_POLICY=passive "${GMMSCORED:-./gmmscored}" --listen "$listen" --metrics-listen 127.0.0.1:9090 \
    --plaintext --backend cuda --model "c=$model" --max-streams $((streams + 100)) \
    --delivery-threads 8 --front_end "mfcc=$front_end" ${DAEMON_ARGS:-} 2>"$log" &
  pid=$!
  for _ in $(seq 600); do
    grep -q "gmmscored: serving" "$log" && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  cat "$log"
  if ! grep -q "gmmscored: serving" "$log"; then
    status=1
    kill "$pid" 2>/dev/null
    continue
  fi
  read -r busy0 total0 < <(busy_jiffies)
  threads0=$(thread_counts "$pid")
  profiler=
  if [ -n "${PERF_SECONDS:-}" ] && [ -x ./perf ]; then
    (
      sleep 8
      ./perf record -a -F 499 -o "/tmp/perf-$run.data" -- sleep "$PERF_SECONDS" 2>/dev/null
      {
        echo "== whole machine, by thread name and shared object"
        ./perf report -i "/tmp/perf-$run.data" --no-children --sort comm,dso --stdio -g none \
          --percent-limit 0.5 2>/dev/null | grep -v '^#' | grep -v '^$' | head -40
        # A thread near 100% of a core (4,990 samples in 10 s) is a serial stage that limits.
        echo "== the busiest threads (samples; one core for the whole profile: 499 x seconds)"
        ./perf report -i "/tmp/perf-$run.data" --no-children --sort pid --stdio -g none -n \
          2>/dev/null | grep -v '^#' | grep -v '^$' | head -25
        echo "== gmmscored, by symbol"
        ./perf report -i "/tmp/perf-$run.data" --no-children --pid "$pid" --sort dso,sym --stdio \
          -g none --percent-limit 0.25 2>/dev/null | grep -v '^#' | grep -v '^$' | head -80
      } >"$out/perf-$run.txt"
    ) &
    profiler=$!
  fi
  # The daemon's histograms as the load generator's warm-up ends (its 5 s, and a second for its
  # streams to open) and after the run: stage_latency.py reports the measured seconds alone.
  (
    sleep 6
    metrics >"$out/metrics-warm-$run.txt"
  ) &
  snapshot=$!
  # shellcheck disable=SC2086 # BENCH_ARGS is a list of options
  ./gmmscore bench-stream --server "$listen" --plaintext --model c --streams "$streams" \
    --seconds "$seconds" --window 10 --encoding "${ENCODING:-float16}" --warmup-seconds 5 \
    --daemon-pid "$pid" ${BENCH_ARGS:-} 2>&1 |
    tee "$out/bench-stream-$run.log" || status=1
  read -r busy1 total1 < <(busy_jiffies)
  threads1=$(thread_counts "$pid")
  [ -z "$profiler" ] || wait "$profiler"
  read -r utime stime < <(awk '{print $14, $15}' "/proc/$pid/stat")
  wait "$snapshot"
  metrics >"$out/metrics-$run.txt"
  python3 stage_latency.py "$out/metrics-warm-$run.txt" "$out/metrics-$run.txt"
  echo "CPU: machine $(( 100 * (busy1 - busy0) / (total1 - total0) ))% busy over the run" \
    "($(nproc) cores); gmmscored $(( (utime + stime) / $(getconf CLK_TCK) )) s of CPU in all"
  # Over the whole run (warm-up too), per thread name: context switches (and per window: 10 frames
  # a stream every 100 ms) and CPU seconds.
  join -a 2 <(echo "$threads0") <(echo "$threads1") |
    awk -v w=$((streams * seconds * 10)) -v hz="$(getconf CLK_TCK)" '
      {d = (NF == 5 ? $4 - $2 : $2); c = (NF == 5 ? $5 - $3 : $3); t += d
       s = s sprintf(" %s=%d/%.1fs", $1, d, c / hz)}
      END {printf "gmmscored threads (context switches/CPU): %d switches (%.2f a window):%s\n", t, t / w, s}'
  grep -E '^gmmscore_(batch_frames|compute_seconds|queue_wait_seconds|window_latency_seconds|window_stage_seconds)_(sum|count)|^gmmscore_batch_frames_bucket|^gmmscore_device_' \
    "$out/metrics-$run.txt"
  kill -TERM "$pid"
  wait "$pid" || status=1
done
exit $status
