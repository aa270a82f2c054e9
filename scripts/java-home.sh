#!/usr/bin/env bash
# Sourced by the other scripts: points JAVA_HOME at a JDK >= 21 if the current one is older.
# Honors an existing JAVA_HOME when it is new enough.
pg_java_major() {
  "$1/bin/java" -XshowSettings:properties -version 2>&1 | awk -F'= ' '/java.specification.version/ {print $2}' | cut -d. -f1
}
if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ] && [ "$(pg_java_major "$JAVA_HOME")" -ge 21 ]; then
  :
else
  found=""
  for candidate in $(ls -d /usr/lib/jvm/* /opt/java/* /Library/Java/JavaVirtualMachines/*/Contents/Home 2>/dev/null); do
    if [ -x "$candidate/bin/java" ] && [ "$(pg_java_major "$candidate")" -ge 21 ] 2>/dev/null; then
      found="$candidate"
      break
    fi
  done
  if [ -z "$found" ] && command -v java >/dev/null; then
    home="$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")"
    if [ "$(pg_java_major "$home")" -ge 21 ]; then found="$home"; fi
  fi
  if [ -z "$found" ]; then
    echo "poison-guard needs a JDK 21 or newer; set JAVA_HOME to one" >&2
    exit 1
  fi
  export JAVA_HOME="$found"
fi
export PATH="$JAVA_HOME/bin:$PATH"
