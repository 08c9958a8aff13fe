#!/usr/bin/env bash
# Regenerate recordings/: one small recording of every simulator scenario.
# Deterministic (fixed seed and size); run from the repository root: make recordings
set -euo pipefail
KTOP=${KTOP:-.venv/bin/ktop}
NODES=${NODES:-500}
DURATION=${DURATION:-360}
cd "$(dirname "$0")/.."
for scenario in $("$KTOP" demo --list | awk '{print $1}'); do
    out="recordings/${scenario}.ktrec"
    rm -f "$out"
    "$KTOP" record -o "$out" --demo "$scenario" --nodes "$NODES" --seed 1 --duration "$DURATION"
done
