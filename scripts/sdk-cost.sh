#!/usr/bin/env bash
# What a healthy job's two ledger writes cost the DynamoDB client in CPU, apart from the rest of the pipeline:
# idempotent-naive's two small calls against poison-guard's ledger writes (DynamoLedgerStore), the same from
# virtual threads, and with the SDK's per-call timeouts; one JVM and one dynalite, shapes alternating round by
# round. Prints a table and a verdict (PASS when the ledger's writes cost at most 1.5 times the baseline's).
# Needs what the tests need (a JDK 21+, Node.js for the emulators); about 3 minutes.
#
#   scripts/sdk-cost.sh [--jobs 3000] [--rounds 6] [--concurrency 8]
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=3000
rounds=6
concurrency=8
while [ $# -gt 0 ]; do
  case "$1" in
    --jobs) jobs="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --concurrency) concurrency="$2"; shift 2 ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
done
. scripts/lib/report-it.sh
run_report_it sdk-cost SdkCostIT target/sdk-cost -Dsdk-cost.jobs="$jobs" -Dsdk-cost.rounds="$rounds" -Dsdk-cost.concurrency="$concurrency"
