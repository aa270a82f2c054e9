#!/usr/bin/env bash
# Prints each failure class's retry ladder (delays, when each attempt starts, which stop condition
# fires first) and lints it: exit 0 when every attempt limit can be reached, 3 when one is a dead
# setting, 1 when the configuration is refused, 2 on bad options. Reads the configuration the
# packaged service would (application.properties under the prod profile, environment variables,
# system properties); -Dkey=value arguments override it. JVM flags go in JAVA_OPTS.
#   scripts/ladder-report.sh --class throttled -Dpoison-guard.failure.throttled.cutoff=16h
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/java-home.sh
app=target/quarkus-app
if [ ! -f "$app/quarkus-run.jar" ] || ! ls "$app"/lib/main/info.picocli.picocli-*.jar >/dev/null 2>&1; then
  echo "==> building $app (./mvnw -B -q package -DskipTests)" >&2
  ./mvnw -B -q package -DskipTests >&2
fi
# The config mapping's implementation classes are generated at build time into
# generated-bytecode.jar; the packaged app has no ASM to generate them at run time.
exec java ${JAVA_OPTS:-} -Djava.util.logging.manager=org.jboss.logmanager.LogManager \
  -cp "$app/app/*:$app/lib/main/*:$app/lib/boot/*:$app/quarkus/generated-bytecode.jar" \
  io.poisonguard.cli.LadderReportCommand "$@"
