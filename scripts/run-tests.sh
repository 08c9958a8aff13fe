#!/usr/bin/env bash
# The whole test suite: static checks, then unit, UI and end-to-end tests.
#
# End-to-end tests need the real control plane (etcd, kube-apiserver,
# scheduler, controller-manager, KWOK, Prometheus). With Go available, or
# under CI, they are built or taken from the cache first; under CI a
# missing component fails the run instead of skipping.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin

step() { printf '\n== %s\n' "$*"; }

step "ruff"
"$BIN/ruff" check ktop tests
"$BIN/ruff" format --check ktop tests
step "mypy (strict)"
"$BIN/mypy"
step "import-linter (layering)"
"$BIN/lint-imports" --no-cache

if [ "${1:-}" = "--check-only" ]; then
    exit 0
fi

if command -v go >/dev/null 2>&1 || [ "${CI:-}" = "true" ]; then
    step "control-plane components (built once, then cached)"
    bash scripts/controlplane/install.sh
else
    echo "Go not found: end-to-end tests will be skipped (see docs/testing.md)."
fi

# Two workers (pytest-xdist): the end-to-end tests in two groups, one per worker (the
# session lab's tests; the kubeadm-like labs' modules), everything else spread over both
# as each group ends (tests/e2e/conftest.py). KTOP_TEST_WORKERS=0 runs in one process.
# The labs' files (etcd's WAL and database, Prometheus' TSDB, logs) in memory when the
# machine has room: two labs at once put six etcd members' fsyncs on one disk, and a
# healthy lab's commit latency then passes etcd's own alarm limits on a shared CI disk.
# etcd still fsyncs (its latency histograms fill); KTOP_TEST_TMPDIR overrides the choice.
SHM_NEEDED_KB=$((4 * 1024 * 1024))
if [ -n "${KTOP_TEST_TMPDIR:-}" ]; then
    export TMPDIR="$KTOP_TEST_TMPDIR"
elif [ -d /dev/shm ] && [ -w /dev/shm ] \
    && [ "$(df -Pk /dev/shm | awk 'NR == 2 {print $4}')" -ge "$SHM_NEEDED_KB" ]; then
    TMPDIR="$(mktemp -d /dev/shm/ktop-tests.XXXXXX)"
    export TMPDIR
    trap 'rm -rf "$TMPDIR"' EXIT
fi
echo "test files under ${TMPDIR:-/tmp}"

step "pytest (${KTOP_TEST_WORKERS:-2} workers; the slowest 20 tests listed at the end)"
"$BIN/pytest" -q -p no:cacheprovider --durations=20 \
    -n "${KTOP_TEST_WORKERS:-2}" --dist loadgroup "$@"
