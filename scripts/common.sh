# Shared by scripts/demo and scripts/test: install what ratelab needs from Debian's packages
# (skipping what is there), then configure and build into build/. Sourced, not run.
set -euo pipefail

RATELAB_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RATELAB_BUILD="${RATELAB_BUILD:-$RATELAB_ROOT/build}"
# How many compilers build at once (one a core), and how many tests run at once: two more than
# the cores, since about a third of a test's time is spent waiting on a server, a timer or a
# child process (the release suite on two cores: 60% busy at two at once, 160 s against 226 s at
# four). Either can be set in the environment.
RATELAB_BUILD_JOBS="${RATELAB_BUILD_JOBS:-$(nproc)}"
RATELAB_TEST_JOBS="${RATELAB_TEST_JOBS:-$(($(nproc) + 2))}"

# What the main job needs, by Debian package name: building ratelab (its tests and benchmarks
# off) and what `ratelab demo` runs (gnuplot draws the report's plots). scripts/demo installs
# these alone.
RATELAB_DEMO_PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libabsl-dev libcli11-dev nlohmann-json3-dev libsimdjson-dev libyaml-cpp-dev
  liblua5.1-0-dev libssl-dev libhiredis-dev libpqxx-dev libboost-dev
  gnuplot-nox
)
# Everything the build and the test suite use: the above, the test and benchmark libraries, the
# servers the tests start, and the toolchains of the adapters' libraries.
RATELAB_PACKAGES=(
  "${RATELAB_DEMO_PACKAGES[@]}" clang-format
  libgtest-dev libgmock-dev librapidcheck-dev libbenchmark-dev
  redis-server redis-tools groff-base postgresql nginx-light wrk curl file python3-yaml
  python3-limits golang-go golang-golang-x-time-dev libguava-java openjdk-17-jdk-headless
)
# What scripts/sanitize and scripts/fuzz add: clang and its sanitizer and libFuzzer runtimes.
RATELAB_CLANG_PACKAGES=(clang libclang-rt-14-dev)

# Installs Debian packages by name (as root, or through sudo).
ratelab_apt_install() {
  echo "ratelab: installing Debian packages: $*" >&2
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "ratelab: need root (or sudo) to install packages" >&2; exit 2; }
    sudo=(sudo)
  fi
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

ratelab_install_packages() {
  local missing=()
  for p in "${RATELAB_PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$p")
    fi
  done
  if [ ${#missing[@]} -gt 0 ]; then
    ratelab_apt_install "${missing[@]}"
  fi
}

# The third-party limiters the tests run (testing/node/*: an Express app with express-rate-limit;
# adapters/node: rate-limiter-flexible and limiter, for check --exec): node and npm (Debian's
# nodejs and npm, unless the machine has node and npm already), then each app's packages from its
# lock file (npm ci), when the lock file is newer than what was installed.
ratelab_install_node_apps() {
  local missing=()
  command -v node >/dev/null || missing+=(nodejs)
  command -v npm >/dev/null || missing+=(npm)
  if [ ${#missing[@]} -gt 0 ]; then
    ratelab_apt_install "${missing[@]}"
  fi
  local app
  for app in "$RATELAB_ROOT"/testing/node/*/ "$RATELAB_ROOT"/adapters/node/; do
    if [ ! -f "$app/node_modules/.package-lock.json" ] ||
      [ "$app/package-lock.json" -nt "$app/node_modules/.package-lock.json" ]; then
      echo "ratelab: installing the npm packages of ${app#"$RATELAB_ROOT"/} from its lock file" >&2
      (cd "$app" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
    fi
  done
}

# Configures with any further cmake arguments, and builds RATELAB_BUILD_TARGETS (default: all).
RATELAB_BUILD_TARGETS=()
ratelab_build() {
  # A unity build (eight files a unit) halves the build: the large header-only libraries
  # (CLI11, nlohmann-json, RapidCheck) are compiled once a unit, not once a file. Line tables
  # only (-g1: backtraces, perf and gdb's stack name files and lines) compile a third faster
  # than full debug information.
  cmake -S "$RATELAB_ROOT" -B "$RATELAB_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
    -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=8 -DRATELAB_WERROR=ON "$@" >/dev/null
  local targets=()
  [ ${#RATELAB_BUILD_TARGETS[@]} -eq 0 ] || targets=(--target "${RATELAB_BUILD_TARGETS[@]}")
  cmake --build "$RATELAB_BUILD" -j"$RATELAB_BUILD_JOBS" "${targets[@]}"
}

# The clang tree for one kind of sanitizer, build-KIND/: asan (AddressSanitizer and
# UndefinedBehaviorSanitizer, with the fuzzers) or tsan (ThreadSanitizer). -O1 with line tables
# gives readable reports at half the build time of -O2 -g. Builds RATELAB_BUILD_TARGETS.
ratelab_sanitized_build() {
  local kind="$1" sanitizers=address,undefined fuzzers=ON
  [ "$kind" = tsan ] && sanitizers=thread fuzzers=OFF
  CC=clang CXX=clang++ RATELAB_BUILD="$RATELAB_ROOT/build-$kind" ratelab_build \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
    -DRATELAB_SANITIZE="$sanitizers" -DRATELAB_BUILD_FUZZERS="$fuzzers" \
    -DRATELAB_BUILD_TESTS=ON -DRATELAB_BUILD_BENCH=OFF
}
