#!/usr/bin/env bash
# The cost benchmark: on one pair of local emulators, the same preloaded backlog of permit-report jobs is
# consumed by a naive consumer (receive, handle, notice, batch delete), an idempotent-naive one (plus a
# conditional put before and an update after, what an idempotency library costs) and poison-guard (its
# packaged jar), each a fresh JVM of its own that first drains an unmeasured warm-up backlog (at least --warmup jobs,
# then 3000 more at a time until its JIT compiler used under 10% of its CPU over each of the last three 3000s, at
# most --warmup-max), at each concurrency, interleaved round by round (every other round in reverse order); then
# poison-guard with 1% poison. Every process runs at one priority (--dynamo-nice -10 lets dynalite answer first; it is not
# neutral: BENCHMARKS.md, thirty-first table). Each window
# holds at least --jobs jobs, more for a faster consumer: the backlog is topped up during the warm-up so every
# window lasts about --window-seconds.
# Prints messages/s, the ratio to naive, SQS and DynamoDB requests per message (counted on the wire, by
# operation), CPU ms per message, p50/p99 send-to-notice latency, and one verdict line.
#
#   scripts/bench.sh                                        # 8000 jobs or 10 s per window after a settled warm-up, concurrency 8 and 32, 2 rounds (about 25 min)
#   scripts/bench.sh --jobs 2000 --warmup 3000 --warmup-max 3000 --rounds 1   # quicker, JIT still busy
set -euo pipefail
cd "$(dirname "$0")/.."

jobs="${BENCH_JOBS:-8000}"
warmup="${BENCH_WARMUP:-15000}"
warmup_max="${BENCH_WARMUP_MAX:-180000}"
settle_jit="${BENCH_SETTLE_JIT:-0.10}"
settle_steps="${BENCH_SETTLE_STEPS:-3}"
rounds="${BENCH_ROUNDS:-2}"
concurrency="${BENCH_CONCURRENCY:-8,32}"
poison="${BENCH_POISON_PERCENT:-1}"
jfr="${BENCH_JFR:-false}"
window_seconds="${BENCH_WINDOW_SECONDS:-10}"
consumers="${BENCH_CONSUMERS:-naive,idempotent-naive,poison-guard}"
service_options="${BENCH_SERVICE_OPTIONS:-}"
compare_options=""
jvm_options="${BENCH_JVM_OPTIONS:--XX:+UseParallelGC}"
compare_jvm_options=""
window_hook="${BENCH_WINDOW_HOOK:-}"
consumer_nice="${BENCH_CONSUMER_NICE:-0}"
dynamo_nice="${BENCH_DYNAMO_NICE:-0}"
while [ $# -gt 0 ]; do
  case "$1" in
    --jobs) jobs="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    --warmup-max) warmup_max="$2"; shift 2 ;;
    --settle-jit) settle_jit="$2"; shift 2 ;;
    --settle-steps) settle_steps="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --concurrency) concurrency="$2"; shift 2 ;;
    --poison-percent) poison="$2"; shift 2 ;;
    --jfr) jfr=true; shift ;;
    --window-seconds) window_seconds="$2"; shift 2 ;;
    --consumers) consumers="$2"; shift 2 ;;
    --service-options) service_options="$2"; shift 2 ;;
    --compare-options) compare_options="$2"; shift 2 ;;
    --jvm-options) jvm_options="$2"; shift 2 ;;
    --compare-jvm-options) compare_jvm_options="$2"; shift 2 ;;
    --window-hook) window_hook="$2"; shift 2 ;;
    --consumer-nice) consumer_nice="$2"; shift 2 ;;
    --dynamo-nice) dynamo_nice="$2"; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0"; echo "options: --jobs N --warmup N (jobs drained at least before measuring, default 15000) --warmup-max N (the longest warm-up, default 180000; equal to --warmup for a fixed one) --settle-jit S (the JIT's share of CPU, over each of the last --settle-steps 3000s of jobs, under which a warm-up ends; default 0.10) --settle-steps N (how many quiet 3000s in a row end a warm-up; default 3) --rounds N --concurrency 8,32 --poison-percent P --jfr (a flight recording per consumer run in target/bench-logs, with CPU-time samples) --window-seconds S (each window holds at least --jobs jobs, topped up during the warm-up to what the consumer drains in S seconds, default 10; 0: --jobs only) --consumers naive,idempotent-naive,poison-guard (add ledger-floor for the cheapest consumer that writes an attempt before its handler and its end after it: a conditional put per message, the notices, completions and deletes of each receive in one batch apiece) --service-options key=value,key=value (poison-guard settings to try) --compare-options key=value,... (poison-guard once more per round with these settings, side by side; use an even number of rounds, the order alternates by round) --jvm-options 'OPTS' (every consumer JVM's options besides its heap, the same for all; default -XX:+UseParallelGC, the collector the container image runs the service with; '' for the JVM's own choice) --compare-jvm-options 'OPTS' (poison-guard once more per round with these JVM options instead, side by side, like --compare-options; both may be given) --consumer-nice N (every consumer process runs N below the bench JVM, 0-19, default 0; at 10 ElasticMQ and the bench's driver answer first too, which slowed naive by a fifth: BENCHMARKS.md, thirtieth table) --dynamo-nice N (the priority dynalite runs at, default 0, the consumers' own; -10 lets it answer first, which needs root, and the report says what it got: not neutral: side by side it halved idempotent-naive@32 and did not speed poison-guard up: BENCHMARKS.md, thirty-first table) --window-hook CMD (runs \"CMD start PID\" as each window opens and \"CMD stop PID\" as it closes, PID the consumer process: to attach a profiler for the window only)"; exit 0 ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
done

. scripts/lib/report-it.sh
echo "bench: ${jobs} jobs, concurrency ${concurrency}, ${rounds} rounds" >&2
run_report_it bench BenchIT target/bench -Dbench.jobs="$jobs" -Dbench.warmup="$warmup" -Dbench.warmup-max="$warmup_max" -Dbench.settle-jit="$settle_jit" -Dbench.settle-steps="$settle_steps" -Dbench.rounds="$rounds" -Dbench.concurrency="$concurrency" \
  -Dbench.poison-percent="$poison" -Dbench.jfr="$jfr" -Dbench.window-seconds="$window_seconds" \
  -Dbench.consumers="$consumers" -Dbench.service-options="$service_options" -Dbench.compare-options="$compare_options" -Dbench.window-hook="$window_hook" -Dbench.consumer-nice="$consumer_nice" -Demulators.dynalite-nice="$dynamo_nice" \
  -Dbench.jvm-options="$jvm_options" -Dbench.compare-jvm-options="$compare_jvm_options"
