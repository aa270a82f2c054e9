#!/usr/bin/env bash
# Starts the local emulators (ElasticMQ for SQS, dynalite for DynamoDB) and the service, sends a
# small mixed workload, prints what happened to each job, then stops everything.
# Needs a JDK >= 21 and Node.js. Ports: SQS_PORT (9324), DYNAMO_PORT (8000), HTTP_PORT (8080, the API),
# MANAGEMENT_PORT (9000: health and metrics).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/java-home.sh
SQS_PORT="${SQS_PORT:-9324}"
DYNAMO_PORT="${DYNAMO_PORT:-8000}"
HTTP_PORT="${HTTP_PORT:-8080}"
MANAGEMENT_PORT="${MANAGEMENT_PORT:-9000}"
PREFIX="demo$(date +%s)"
mkdir -p target/demo
: > target/demo/emulators.log
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

echo "==> building (first run downloads dependencies)"
(cd infra/local && npm ci --no-audit --no-fund --loglevel=error)
./mvnw -B -q package -DskipTests
./mvnw -B -q test-compile dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile=target/demo/classpath.txt -Dexec.skip=true

echo "==> starting emulators (SQS on $SQS_PORT, DynamoDB on $DYNAMO_PORT)"
java -Demulators.dir=infra/local -cp "target/test-classes:target/classes:$(cat target/demo/classpath.txt)" \
  io.poisonguard.testing.Emulators "$SQS_PORT" "$DYNAMO_PORT" > target/demo/emulators.log 2>&1 &
pids+=($!)
for _ in $(seq 1 60); do grep -q "emulators ready" target/demo/emulators.log && break; sleep 1; done
grep -q "emulators ready" target/demo/emulators.log || { cat target/demo/emulators.log; exit 1; }

KEYS="$PWD/target/demo/keys"
VIEWER=$(node scripts/dev-token.mjs --keys "$KEYS" --sub demo-viewer viewer)
ADMIN=$(node scripts/dev-token.mjs --keys "$KEYS" --sub demo-admin admin)
OPERATOR=$(node scripts/dev-token.mjs --keys "$KEYS" --sub demo-operator operator)

# A fresh payload-vault key per demo run (quarantined payloads are sealed with it).
VAULT_KEY=$(node -e "process.stdout.write(require('crypto').randomBytes(32).toString('base64'))")

echo "==> starting poison-guard (log: target/demo/service.log)"
# -XX:+ExitOnOutOfMemoryError: a JVM that ran out of memory is in an unknown state; exiting leaves the
# job's attempt open in the ledger, so it is charged a crash, and the worker is restarted clean.
# -XX:+UseParallelGC: the collector the container image runs the service with (a worker wants throughput).
# -Djdk.virtualThreadScheduler.parallelism=1: the worker's own steps on one carrier thread, as the image runs it.
java -XX:+ExitOnOutOfMemoryError -XX:+UseParallelGC -Djdk.virtualThreadScheduler.parallelism=1 \
  -Dmp.jwt.verify.publickey.location="$KEYS/public.pem" \
  -Dquarkus.http.port="$HTTP_PORT" \
  -Dquarkus.management.port="$MANAGEMENT_PORT" \
  -Dquarkus.sqs.endpoint-override="http://localhost:$SQS_PORT" \
  -Dquarkus.dynamodb.endpoint-override="http://localhost:$DYNAMO_PORT" \
  -Dquarkus.sqs.aws.region=us-east-1 -Dquarkus.dynamodb.aws.region=us-east-1 \
  -Dquarkus.sqs.aws.credentials.type=static -Dquarkus.dynamodb.aws.credentials.type=static \
  -Dquarkus.sqs.aws.credentials.static-provider.access-key-id=local \
  -Dquarkus.sqs.aws.credentials.static-provider.secret-access-key=local \
  -Dquarkus.dynamodb.aws.credentials.static-provider.access-key-id=local \
  -Dquarkus.dynamodb.aws.credentials.static-provider.secret-access-key=local \
  -Dpoison-guard.prefix="$PREFIX" \
  -Dpoison-guard.payload-vault.key="$VAULT_KEY" \
  -Dpoison-guard.resources.create=true \
  -Dpoison-guard.example.enabled=true \
  -Dpoison-guard.consumer.receive-wait=2s \
  -Dpoison-guard.consumer.visibility-timeout=10s \
  -Dpoison-guard.consumer.heartbeat-interval=3s \
  -Dpoison-guard.failure.permanent.max-attempts=3 \
  -Dpoison-guard.failure.permanent.base=1s -Dpoison-guard.failure.permanent.cap=2s \
  -Dpoison-guard.failure.transient.base=1s -Dpoison-guard.failure.transient.cap=4s \
  -Dpoison-guard.failure.throttled.base=2s -Dpoison-guard.failure.throttled.cap=5s \
  -Dpoison-guard.example.provider.latency=50ms \
  -Dpoison-guard.example.provider.faults.P-FLAKY=fail:2 \
  -Dpoison-guard.example.provider.faults.P-QUOTA=throttle:1 \
  -jar target/quarkus-app/quarkus-run.jar > target/demo/service.log 2>&1 &
pids+=($!)
for _ in $(seq 1 60); do curl -fs "http://localhost:$MANAGEMENT_PORT/q/health/ready" >/dev/null 2>&1 && break; sleep 1; done
curl -fs "http://localhost:$MANAGEMENT_PORT/q/health/ready" >/dev/null || { tail -50 target/demo/service.log; exit 1; }

node scripts/demo.mjs "http://localhost:$SQS_PORT" "http://localhost:$HTTP_PORT" "$PREFIX" "$VIEWER" "http://localhost:$MANAGEMENT_PORT"
echo
echo "quarantine events from the service log:"
grep -o '{"event":"job.quarantined".*' target/demo/service.log | sed 's/^/  /' || true

echo
echo "==> operator view: register the tenant, then dry-run a replay of the poison job (nothing is replayed)"
curl -fs -X PUT "http://localhost:$HTTP_PORT/ops/tenants/tenant-demo" -H "Authorization: Bearer $ADMIN" \
  -H 'Content-Type: application/json' -d '{"status":"ACTIVE","jobTypes":["permit-report"],"reason":"demo setup"}' >/dev/null
node scripts/replay.mjs --url "http://localhost:$HTTP_PORT" --token "$OPERATOR" --job demo-old-schema \
  --reason "release-27 reader is not shipped yet: dry run only"
