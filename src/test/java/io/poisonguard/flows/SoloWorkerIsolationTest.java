package io.poisonguard.flows;

import io.poisonguard.ledger.JobKey;
import io.poisonguard.ledger.JobState;
import io.poisonguard.testing.ScriptedHandler;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Crash attribution in a worker with room for one job: the copy that comes into its empty lane is recorded as running
 * alone, so if the worker dies while that attempt is live, the job is charged the crash (CRASH, its own limit) rather
 * than suspected. That record must be true: no other handler may run in the worker from the moment that attempt is
 * recorded until its outcome is. Before, a prefetched copy taken in after it whose ledger write came back first took
 * the only handler slot ahead of it (and a copy could run while an alone attempt's outcome was being written), so a
 * worker killed by that other job charged the alone one a crash it had no part in.
 */
@QuarkusTest
@TestProfile(SoloWorkerIsolationTest.Profile.class)
class SoloWorkerIsolationTest extends FlowTest {
    public static class Profile extends EmulatorProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("poison-guard.consumer.concurrency", "1", "poison-guard.consumer.prefetch", "2");
        }

        @Override
        public Set<Class<?>> getEnabledAlternatives() {
            return Set.of(AloneStartHeldLedger.class);
        }
    }

    @Inject
    ScriptedHandler handler;
    @Inject
    AloneStartHeldLedger held;

    @Test
    void noHandlerRunsBesideAnAttemptRecordedAsRunningAlone() throws Exception {
        List<String> jobs = List.of("solo-a", "solo-b", "solo-c");
        List<String> besideAlone = Collections.synchronizedList(new ArrayList<>());
        handler.atStart(jobId -> {
            try {
                // Let the held start land (or give up on it) before looking, so a handler run too early is seen.
                held.awaitAloneStart(Duration.ofSeconds(15));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            for (String other : jobs) {
                if (!other.equals(jobId)) {
                    ledger.findOwn(JobKey.of("tenant-s", other))
                            .filter(r -> r.state() == JobState.ACTIVE && r.currentEntry().isolated())
                            .ifPresent(r -> besideAlone.add(jobId + " ran while " + other + " was recorded running alone"));
                }
            }
        });
        try {
            held.arm();
            // The first alone into the empty lane (recorded alone, its write held), then the others, taken in beside it.
            queues().send("ok", ScriptedHandler.attributes(jobs.get(0)));
            assertTrue(held.awaitHeld(Duration.ofSeconds(30)), "the first job was not recorded as running alone");
            jobs.subList(1, jobs.size()).forEach(job -> queues().send("ok", ScriptedHandler.attributes(job)));

            await().atMost(Duration.ofSeconds(60)).until(() -> jobs.stream()
                    .allMatch(job -> ledger.findOwn(JobKey.of("tenant-s", job)).filter(r -> r.state() == JobState.SUCCEEDED).isPresent()));
            assertTrue(held.overtaken(), "the case under test did not arise: no other job's start landed before the alone one's");
            assertEquals(List.of(), besideAlone);
        } finally {
            handler.atStart(jobId -> {
            });
        }
    }
}
