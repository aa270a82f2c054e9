# Runs one measuring IT through Maven and prints the report it writes; sourced by chaos.sh and bench.sh.
#   run_report_it NAME IT_CLASS REPORT_DIR [maven arguments...]
# Exits 0 only when the report's verdict is PASS and Maven succeeded; prints "VERDICT: FAIL (no report)"
# when the run broke before writing one.
run_report_it() {
  local name="$1" it="$2" dir="$3"
  shift 3
  . scripts/java-home.sh
  mkdir -p "$dir"
  local report="$dir/report.txt" log="$dir/maven.log" status=0
  rm -f "$report"
  echo "${name}: Maven output in ${log}" >&2
  ./mvnw -B verify -DskipITs=false -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false -Dit.test="$it" "$@" \
    > "$log" 2>&1 || status=$?
  if [ ! -s "$report" ]; then
    echo "${name}: no report was written (the build or the run broke before it); the end of ${log}:" >&2
    tail -n 40 "$log" >&2
    echo "VERDICT: FAIL (no report)"
    exit 1
  fi
  cat "$report"
  if grep -q '^VERDICT: PASS' "$report"; then
    if [ "$status" -ne 0 ]; then
      echo "${name}: the verdict passed but Maven exited with ${status}; see ${log}" >&2
      exit "$status"
    fi
    exit 0
  fi
  exit 1
}
