#!/usr/bin/env bash
# Builds (as scripts/build.sh) and installs gmmscore, gmmscored and the Python package under
# PREFIX (default /usr/local: the programs in /usr/local/bin, the package where python3 finds it),
# as root or through sudo. Then: gmmscore --help; gmmscored --help; python3 -c 'import gmmscore'.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix="${PREFIX:-/usr/local}"
scripts/build.sh gmmscore gmmscored gmmscore_python
sudo=""
if [ "$(id -u)" -ne 0 ] && [ ! -w "$prefix" ]; then
  command -v sudo >/dev/null || { echo "install: run as root, or install sudo" >&2; exit 1; }
  sudo="sudo"
fi
$sudo cmake --install "${BUILD_DIR:-build}" --prefix "$prefix" | sed 's/^/install: /'
echo "install: gmmscore and gmmscored are in $prefix/bin; 'gmmscore kaldi-links DIR' makes" \
  "Kaldi's tool names"
