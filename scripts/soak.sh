#!/usr/bin/env bash
# The soak test (not in CI): gmmscored on the CPU backend under STREAMS concurrent streams for
# MINUTES minutes, as rounds of `gmmscore bench-stream` (fresh streams every round, so that
# anything a stream leaves behind accumulates), with the daemon's resident memory, threads and
# open files sampled every 10 s. Fails if a round fails or any of them grows: the largest sample of
# the last quarter against the largest of the first quarter (after the first round), allowing RSS
# 10% + 16 MB (allocator noise) and threads and files 4 more.
#   scripts/soak.sh [MINUTES] [STREAMS]     (default 60 and 128; samples in build/soak/)
# Environment: BUILD_DIR (build), MODEL (random:STATESxGAUSSxDIM, default random:2000x16x39:42,
# the docs/PERFORMANCE.md daemon model), ROUND_SECONDS (audio seconds a round, 60).
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=${1:-60}
streams=${2:-128}
build=${BUILD_DIR:-build}
out=$build/soak
mkdir -p "$out"
gmmscore=$build/tools/gmmscore
gmmscored=$build/server/gmmscored
[ -x "$gmmscore" ] && [ -x "$gmmscored" ] || { echo "soak.sh: build $build first" >&2; exit 2; }

"$gmmscore" convert "${MODEL:-random:2000x16x39:42}" "$out/model.gmms" >/dev/null 2>&1
port=$((50000 + RANDOM % 10000))
OMP_WAIT_POLICY=passive "$gmmscored" --listen "127.0.0.1:$port" --plaintext --backend cpu \
  --max-streams $((streams + 16)) --model "soak=$out/model.gmms" >"$out/gmmscored.log" 2>&1 &
daemon=$!
trap 'kill $daemon 2>/dev/null; wait $daemon 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  "$gmmscore" health --server "127.0.0.1:$port" --plaintext >/dev/null 2>&1 && break
  sleep 0.2
done

samples=$out/samples.csv
echo "seconds,rss_kb,threads,fds,round" >"$samples"
start=$SECONDS
round=0
echo 0 >"$out/round"  # the sampler runs in a subshell: the round it reports comes from this file
sample() {
  local rss threads fds
  rss=$(awk '/^VmRSS/ {print $2}' "/proc/$daemon/status")
  threads=$(awk '/^Threads/ {print $2}' "/proc/$daemon/status")
  fds=$(ls "/proc/$daemon/fd" | wc -l)
  echo "$((SECONDS - start)),$rss,$threads,$fds,$(cat "$out/round")" >>"$samples"
}
(while kill -0 $daemon 2>/dev/null; do sample; sleep 10; done) &
sampler=$!
trap 'kill $sampler $daemon 2>/dev/null; wait $daemon 2>/dev/null || true' EXIT

status=0
while [ $((SECONDS - start)) -lt $((minutes * 60)) ]; do
  round=$((round + 1))
  echo $round >"$out/round"
  if ! "$gmmscore" bench-stream --server "127.0.0.1:$port" --plaintext --model soak \
    --streams "$streams" --seconds "${ROUND_SECONDS:-60}" >"$out/round-$round.log" 2>&1; then
    echo "soak.sh: round $round failed ($out/round-$round.log)" >&2
    status=1
    break
  fi
  grep -E '^streams:' "$out/round-$round.log" | sed "s/^/round $round: /"
done
kill $sampler 2>/dev/null || true
sample

# Growth: the last quarter's largest sample against the first quarter's, after round 1.
awk -F, -v status=$status '
  NR > 1 && $5 > 1 { n++; t[n] = $1; rss[n] = $2; thr[n] = $3; fd[n] = $4 }
  END {
    if (n < 8) { print "soak.sh: too few samples (" n ") to judge growth"; exit 1 }
    q = int(n / 4)
    for (i = 1; i <= q; i++) { if (rss[i] > r0) r0 = rss[i]; if (thr[i] > h0) h0 = thr[i]; if (fd[i] > f0) f0 = fd[i] }
    for (i = n - q + 1; i <= n; i++) { if (rss[i] > r1) r1 = rss[i]; if (thr[i] > h1) h1 = thr[i]; if (fd[i] > f1) f1 = fd[i] }
    printf "soak: %d samples over %d s; first quarter max RSS %d kB, threads %d, files %d; last quarter max RSS %d kB, threads %d, files %d\n", n, t[n] - t[1], r0, h0, f0, r1, h1, f1
    grew = 0
    if (r1 > r0 * 1.10 + 16384) { print "soak: RSS grew"; grew = 1 }
    if (h1 > h0 + 4) { print "soak: threads grew"; grew = 1 }
    if (f1 > f0 + 4) { print "soak: open files grew"; grew = 1 }
    exit (grew || status)
  }' "$samples"
