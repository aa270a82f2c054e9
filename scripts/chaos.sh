#!/usr/bin/env bash
# The long chaos run: service JVMs consume a mixed workload (healthy, transient, throttled, poison and
# JVM-killing jobs) while a random worker is SIGKILLed every few seconds and restarted, and DynamoDB is
# frozen once. Prints the reconciled table and one verdict line; exits non-zero when the verdict is FAIL.
# It runs ChaosIT through Maven, so it needs what scripts/test.sh needs (a JDK >= 21 and Node.js).
#
#   scripts/chaos.sh                                 # 3 workers x 2000 jobs, kill every 6s, one 20s freeze
#   scripts/chaos.sh --jobs 500 --kill-every 10s     # smaller
#   scripts/chaos.sh --crash-fault halt --hang 0     # JVM-killing jobs halt instead of running out of memory; no hang jobs
#   CHAOS_JOBS=5000 scripts/chaos.sh -- -Dchaos.seed=7   # anything after -- goes to Maven
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  cat <<'EOF'
usage: scripts/chaos.sh [options] [-- maven arguments]
  --workers N          service JVMs                               (CHAOS_WORKERS, 3)
  --jobs N             jobs in the workload                       (CHAOS_JOBS, 2000)
  --send-rate N        jobs sent per second                       (CHAOS_SEND_RATE, 10)
  --kill-every D       SIGKILL a random worker this often, 0: off (CHAOS_KILL_EVERY, 6s)
  --max-unavailable N  no kill while N workers are down or booting (CHAOS_MAX_UNAVAILABLE, 1)
  --freeze D           freeze DynamoDB once this long, 0: off     (CHAOS_FREEZE, 20s)
  --freeze-at D        when the freeze starts after the first send (CHAOS_FREEZE_AT, 40% of the send window)
  --crash N            jobs that kill their JVM                   (CHAOS_CRASH, jobs/500)
  --crash-fault F      oom (allocate until OutOfMemoryError) or halt (CHAOS_CRASH_FAULT, oom)
  --hang N             jobs that hang past the 2 s attempt deadline (CHAOS_HANG, jobs/500)
  --settle-timeout D   bound on settling after the last send      (CHAOS_SETTLE_TIMEOUT, 60s + jobs/10 s)
  --seed N             workload order and kill targets            (CHAOS_SEED, random)
  --fifo-notices       notices to a FIFO queue; a duplicate notice fails the run (CHAOS_FIFO_NOTICES, off)
  --item-format F      ledger items the workers write: attributes, compact, or mixed (workers 1, 3, ...
                       compact, 2, 4, ... attributes, so items change format as jobs move) (CHAOS_ITEM_FORMAT, mixed)
Durations: 6s, 500ms, 2m or a number of seconds. The report is kept in target/chaos/report.txt, the
worker logs and the run's event log in target/chaos-logs/.
EOF
}

workers="${CHAOS_WORKERS:-3}"
jobs="${CHAOS_JOBS:-2000}"
send_rate="${CHAOS_SEND_RATE:-10}"
kill_every="${CHAOS_KILL_EVERY:-6s}"
max_unavailable="${CHAOS_MAX_UNAVAILABLE:-1}"
freeze="${CHAOS_FREEZE:-20s}"
freeze_at="${CHAOS_FREEZE_AT:-}"
crash="${CHAOS_CRASH:-}"
crash_fault="${CHAOS_CRASH_FAULT:-oom}"
hang="${CHAOS_HANG:-}"
settle_timeout="${CHAOS_SETTLE_TIMEOUT:-}"
seed="${CHAOS_SEED:-}"
fifo_notices="${CHAOS_FIFO_NOTICES:-false}"
item_format="${CHAOS_ITEM_FORMAT:-mixed}"
maven_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --workers) workers="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --send-rate) send_rate="$2"; shift 2 ;;
    --kill-every) kill_every="$2"; shift 2 ;;
    --max-unavailable) max_unavailable="$2"; shift 2 ;;
    --freeze) freeze="$2"; shift 2 ;;
    --freeze-at) freeze_at="$2"; shift 2 ;;
    --crash) crash="$2"; shift 2 ;;
    --crash-fault) crash_fault="$2"; shift 2 ;;
    --hang) hang="$2"; shift 2 ;;
    --settle-timeout) settle_timeout="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --fifo-notices) fifo_notices=true; shift ;;
    --item-format) item_format="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    --) shift; maven_args=("$@"); break ;;
    *) echo "unknown option: $1" >&2; usage >&2; exit 2 ;;
  esac
done

props=(-Dchaos.workers="$workers" -Dchaos.jobs="$jobs" -Dchaos.send-rate="$send_rate" -Dchaos.kill-every="$kill_every"
       -Dchaos.max-unavailable="$max_unavailable"
       -Dchaos.freeze="$freeze" -Dchaos.crash-fault="$crash_fault" -Dchaos.fifo-notices="$fifo_notices"
       -Dchaos.item-format="$item_format")
[ -n "$hang" ] && props+=(-Dchaos.hang="$hang")
[ -n "$freeze_at" ] && props+=(-Dchaos.freeze-at="$freeze_at")
[ -n "$crash" ] && props+=(-Dchaos.crash="$crash")
[ -n "$settle_timeout" ] && props+=(-Dchaos.settle-timeout="$settle_timeout")
[ -n "$seed" ] && props+=(-Dchaos.seed="$seed")

. scripts/lib/report-it.sh
echo "chaos: ${workers} workers x ${jobs} jobs at ${send_rate}/s, kill every ${kill_every}, DynamoDB freeze ${freeze}" >&2
run_report_it chaos ChaosIT target/chaos "${props[@]}" ${maven_args[@]+"${maven_args[@]}"}
