#!/usr/bin/env bash
# Runs every test: unit and property tests, the flow tests against the emulators, and the
# crash-survival tests that kill real service processes. Needs a JDK >= 21 and Node.js (npm).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/java-home.sh
exec ./mvnw -B verify -DskipITs=false "$@"
