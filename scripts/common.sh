# Shared by scripts/demo and scripts/test: install what ratelab needs from Debian's packages
# (skipping what is there), then configure and build into build/. Sourced, not run.
set -euo pipefail

RATELAB_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RATELAB_BUILD="${RATELAB_BUILD:-$RATELAB_ROOT/build}"

# Everything the build and the test suite use, by Debian package name.
RATELAB_PACKAGES=(
  build-essential cmake ninja-build pkg-config clang-format
  libabsl-dev libcli11-dev nlohmann-json3-dev libyaml-cpp-dev
  liblua5.1-0-dev libssl-dev libhiredis-dev libpqxx-dev
  libgtest-dev libgmock-dev librapidcheck-dev libbenchmark-dev
  gnuplot-nox redis-server redis-tools
)

ratelab_install_packages() {
  local missing=()
  for p in "${RATELAB_PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$p")
    fi
  done
  if [ ${#missing[@]} -eq 0 ]; then
    return 0
  fi
  echo "ratelab: installing Debian packages: ${missing[*]}" >&2
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "ratelab: need root (or sudo) to install packages" >&2; exit 2; }
    sudo=(sudo)
  fi
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

ratelab_build() {
  cmake -S "$RATELAB_ROOT" -B "$RATELAB_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DRATELAB_WERROR=ON "$@" >/dev/null
  cmake --build "$RATELAB_BUILD" -j2
}
