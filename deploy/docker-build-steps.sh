#!/usr/bin/env bash
# The container's build steps, kept out of the Dockerfile so that the test suite runs them too
# (tests/CMakeLists.txt: server_docker_build_steps) and they cannot rot unseen.
#
#   docker-build-steps.sh build  SRC BUILD    configure and build gmmscored and gmmscore
#   docker-build-steps.sh bundle BUILD PREFIX PREFIX/bin: the binaries; PREFIX/lib: the shared
#                                             libraries they load that a CUDA runtime image
#                                             lacks (everything but the C/C++ runtime and the
#                                             NVIDIA driver, which the container runtime mounts)
#   docker-build-steps.sh smoke  PREFIX SRC   run the bundle on its own libraries: a gmmscored
#                                             on loopback, health, and `gmmscore stream` giving
#                                             the bytes `gmmscore score` gives
#   docker-build-steps.sh all    SRC BUILD PREFIX
#   docker-build-steps.sh check-dockerfile DOCKERFILE
#                                             the Dockerfile still builds through this script
#                                             and runs a non-root gmmscored with a health check
# JOBS (default: all cores) sets the build's parallelism; GMMSCORE_CMAKE_ARGS adds configure
# arguments.
set -Eeuo pipefail
# No step fails silently: the command, and the logs of the smoke test's programs; nor does it
# leave the smoke test's daemon running.
trap 'echo "docker-build-steps.sh: line $LINENO failed (exit $?): $BASH_COMMAND" >&2
  [ -z "${tmp:-}" ] || tail -n 20 "$tmp"/*.log >&2
  [ -z "${pid:-}" ] || kill "$pid" 2>/dev/null || true' ERR

step=${1:?usage: docker-build-steps.sh build|bundle|smoke|all ...}
shift

build() {
  local src=$1 build=$2
  # shellcheck disable=SC2086 # GMMSCORE_CMAKE_ARGS is a list of arguments
  cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release ${GMMSCORE_CMAKE_ARGS:-} >/dev/null
  ninja -C "$build" -j "${JOBS:-$(nproc)}" gmmscored gmmscore
}

bundle() {
  local build=$1 prefix=$2
  install -d "$prefix/bin" "$prefix/lib"
  install -m 0755 "$build/server/gmmscored" "$build/tools/gmmscore" "$build/tools/gmmscore-kaldi" \
    "$prefix/bin/"
  # OpenFst's module, which gmmscore-kaldi loads from ../lib/gmmscore (fst/openfst_loaded.cc).
  install -d "$prefix/lib/gmmscore"
  install -m 0755 "$build/tools/libgmmscore_openfst.so" "$prefix/lib/gmmscore/"
  local lib lazy
  # libsndfile is loaded when audio is first read (util/shared_library.h), so ldd does not list
  # it: it goes in by name, with what it loads.
  # awk reads to the end: ldconfig's list outgrows a pipe's buffer, and a reader that stops early
  # kills it with SIGPIPE, which pipefail turns into a silent exit.
  lazy=$(ldconfig -p | awk '$1 == "libsndfile.so.1" && lazy == "" {lazy = $NF} END {print lazy}')
  [ -n "$lazy" ] || { echo "docker-build-steps.sh: libsndfile.so.1 is not installed" >&2; return 1; }
  { ldd "$prefix/bin/gmmscored" "$prefix/bin/gmmscore" "$prefix/lib/gmmscore/libgmmscore_openfst.so" "$lazy" |
      awk '$2 == "=>" && $3 ~ /^\// {print $3}'; echo "$lazy"; } |
    sort -u | while read -r lib; do
      case "$(basename "$lib")" in
        libc.so* | libm.so* | libpthread.so* | libdl.so* | librt.so* | ld-linux*) ;;
        libstdc++.so* | libgcc_s.so*) ;;
        libcuda.so* | libnvidia*) ;;
        *) cp -L "$lib" "$prefix/lib/" ;;
      esac
    done
}

smoke() {
  local prefix=$1 src=$2
  local data="$src/tests/data/kaldi-mono" tmp pid port=""
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' RETURN
  export LD_LIBRARY_PATH="$prefix/lib"
  "$prefix/bin/gmmscored" --help >/dev/null
  # As the image's default command serves: the shipped model and its front end.
  "$prefix/bin/gmmscored" --listen=127.0.0.1:0 --plaintext --model="mono=$data/final.mdl" \
    --front-end="mfcc=$src/deploy/kaldi-mono/mfcc.conf" 2>"$tmp/gmmscored.log" &
  pid=$!
  for _ in $(seq 300); do
    grep -q "gmmscored: serving" "$tmp/gmmscored.log" && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  port=$(sed -n 's/^gmmscored: listening on port \([0-9]*\).*/\1/p' "$tmp/gmmscored.log")
  if [ -z "$port" ] || ! grep -q "gmmscored: serving" "$tmp/gmmscored.log"; then
    echo "smoke: gmmscored did not start:" >&2
    cat "$tmp/gmmscored.log" >&2
    kill "$pid" 2>/dev/null || true
    return 1
  fi
  "$prefix/bin/gmmscore" health --plaintext --server "127.0.0.1:$port" >/dev/null
  "$prefix/bin/gmmscore" stream --plaintext --server "127.0.0.1:$port" --model mono \
    --feats "ark:$data/feats.ark" --out "ark:$tmp/stream.ark" --quiet
  "$prefix/bin/gmmscore" score --model "$data/final.mdl" --feats "ark:$data/feats.ark" \
    --out "ark:$tmp/score.ark" --quiet
  cmp "$tmp/stream.ark" "$tmp/score.ark"
  # The Kaldi tools (gmmscore-kaldi), with OpenFst's module from lib/gmmscore: Kaldi's alignments.
  "$prefix/bin/gmmscore" kaldi-links "$tmp/kaldi" >/dev/null
  "$tmp/kaldi/gmm-align-compiled" --beam=6 --retry-beam=40 --self-loop-scale=0.1 \
    --acoustic-scale=0.1 "$data/final.mdl" "ark:$data/graphs.fsts" "ark:$data/feats.ark" \
    "ark,t:$tmp/ali.txt" 2>"$tmp/align.log"
  cmp "$tmp/ali.txt" "$data/ali.txt"
  kill -TERM "$pid"
  wait "$pid"
  echo "smoke: the bundle in $prefix serves, streams and drains"
}

check_dockerfile() {
  local dockerfile=$1 expected
  for expected in \
    '^ARG BACKEND=cuda$' \
    '^FROM nvidia/cuda:.*-devel-.* AS build-base-cuda$' \
    '^FROM .* AS build-base-cpu$' \
    '^FROM build-base-\$\{BACKEND\} AS build$' \
    '^ *(RUN .*)?/src/deploy/docker-build-steps.sh all /src /build /opt/gmmscore$' \
    '^FROM nvidia/cuda:.*-runtime-.* AS run-base-cuda$' \
    '^FROM .* AS run-base-cpu$' \
    '^FROM run-base-\$\{BACKEND\}$' \
    '^COPY --from=build /opt/gmmscore /opt/gmmscore$' \
    '^COPY tests/data/kaldi-mono/final.mdl deploy/kaldi-mono/mfcc.conf /opt/gmmscore/share/kaldi-mono/$' \
    '^USER [1-9][0-9]*$' \
    '^HEALTHCHECK ' \
    '^ENTRYPOINT \["gmmscored"\]$' \
    '"--model=mono=/opt/gmmscore/share/kaldi-mono/final.mdl"'; do
    if ! grep -Eq "$expected" "$dockerfile"; then
      echo "check-dockerfile: $dockerfile has no line matching: $expected" >&2
      return 1
    fi
  done
  echo "check-dockerfile: $dockerfile builds through docker-build-steps.sh"
}

case "$step" in
  build) build "$@" ;;
  bundle) bundle "$@" ;;
  smoke) smoke "$@" ;;
  check-dockerfile) check_dockerfile "$@" ;;
  all)
    build "$1" "$2"
    bundle "$2" "$3"
    smoke "$3" "$1"
    ;;
  *)
    echo "docker-build-steps.sh: unknown step '$step' (build, bundle, smoke, all," \
      "check-dockerfile)" >&2
    exit 2
    ;;
esac
