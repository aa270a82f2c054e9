#!/bin/sh
# A window hook for scripts/bench.sh (--window-hook scripts/lib/window-cpu.sh): as each measured window closes it
# appends to target/bench/window-cpu.log the machine's CPU split over the window (user, system, idle, steal, from
# /proc/stat) and the processes that used the most CPU in it (clock ticks, from /proc/<pid>/stat), so a run can
# show whether anything besides the rig (the consumer, dynalite, the bench JVM) took the cores. Linux only.
#
#   scripts/lib/window-cpu.sh start|stop <consumer pid>
set -eu
cd "$(dirname "$0")/../.."
dir=target/bench/window-cpu
mkdir -p "$dir"
ticks() {
  for f in /proc/[0-9]*/stat; do
    pid=${f#/proc/}; pid=${pid%/stat}
    line=$(cat "$f" 2>/dev/null) || continue
    comm=${line#*(}; comm=${comm%%)*}
    rest=${line##*) }
    # Fields after the command: state is the 1st, utime the 12th, stime the 13th.
    set -- $rest
    echo "$pid $(( ${12} + ${13} )) $comm"
  done
}
case "$1" in
  start)
    ticks > "$dir/start.$2"
    head -1 /proc/stat > "$dir/stat.$2"
    date +%s.%N > "$dir/time.$2"
    ;;
  stop)
    ticks > "$dir/stop.$2"
    head -1 /proc/stat > "$dir/stat2.$2"
    {
      echo "window of consumer $2: $(awk -v t0="$(cat "$dir/time.$2")" -v t1="$(date +%s.%N)" 'BEGIN { printf "%.1f s", t1 - t0 }') ($(tr '\0' ' ' < "/proc/$2/cmdline" | grep -o 'concurrency=[0-9]*\|NaiveConsumer [^ ]* [^ ]* [^ ]* [^ ]* [^ ]* [^ ]*' | head -1))"
      paste -d' ' "$dir/stat.$2" "$dir/stat2.$2" | awk '{ u=$13-$2; n=$14-$3; s=$15-$4; i=$16-$5; w=$17-$6; q=$18-$7; sq=$19-$8; st=$20-$9; t=u+n+s+i+w+q+sq+st;
        printf "  machine: user %.1f%%, system %.1f%%, softirq %.1f%%, idle %.1f%%, iowait %.1f%%, steal %.1f%%\n", 100*(u+n)/t, 100*s/t, 100*sq/t, 100*i/t, 100*w/t, 100*st/t }'
      awk 'NR == FNR { before[$1] = $2; next } { d = $2 - (($1 in before) ? before[$1] : 0); if (d > 5) printf "  %6d ticks  %s (pid %s)\n", d, $3, $1 }' \
        "$dir/start.$2" "$dir/stop.$2" | sort -rn | head -6
    } >> target/bench/window-cpu.log
    rm -f "$dir"/*."$2"
    ;;
  *) echo "usage: $0 start|stop <pid>" >&2; exit 2 ;;
esac
