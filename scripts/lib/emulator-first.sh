#!/bin/sh
# A window hook for scripts/bench.sh, for a side-by-side diagnostic: as a window opens for a consumer whose command line
# holds the text in EMULATOR_FIRST_FOR, it raises the DynamoDB emulator's scheduling priority (renice to
# EMULATOR_FIRST_NICE, default -10; needs root) for that run. dynalite is restarted before every run, so the next run
# starts at the normal priority again. Either way it then runs scripts/lib/window-cpu.sh, which logs the machine's
# idle share and each process's CPU for the window.
#
# dynalite answers on one Node.js thread, and on two cores it competes with the consumer's and the bench JVM's
# threads for a core; this shows how much of a consumer's rate is that wait rather than its own cost. Pair it with
# --compare-options set to a value the service already has, so the compared run differs only in the emulator's priority:
#
#   EMULATOR_FIRST_FOR=legacy-keys=false scripts/bench.sh --consumers poison-guard --rounds 2 --concurrency 32 \
#     --poison-percent 0 --compare-options poison-guard.ledger.legacy-keys=false --window-hook scripts/lib/emulator-first.sh
#
#   scripts/lib/emulator-first.sh start|stop <consumer pid>
set -eu
cd "$(dirname "$0")/../.."
if [ "$1" = start ] && [ -n "${EMULATOR_FIRST_FOR:-}" ] && tr '\0' ' ' < "/proc/$2/cmdline" | grep -qF -- "$EMULATOR_FIRST_FOR"; then
  for p in $(pgrep -f dynalite-server.js || true); do
    if renice -n "${EMULATOR_FIRST_NICE:--10}" -p "$p" > /dev/null 2>&1; then
      echo "$(date +%T) dynalite (pid $p) at nice ${EMULATOR_FIRST_NICE:--10} for consumer $2" >> target/bench/emulator-first.log
    else
      echo "$(date +%T) could not renice dynalite (pid $p) for consumer $2" >> target/bench/emulator-first.log
    fi
  done
fi
exec sh scripts/lib/window-cpu.sh "$1" "$2"
