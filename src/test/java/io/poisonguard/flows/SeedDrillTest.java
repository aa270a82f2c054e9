package io.poisonguard.flows;

import io.poisonguard.ledger.JobKey;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.ledger.AttemptEntry;
import io.poisonguard.ledger.AttemptOutcome;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.quarantine.QuarantineRecord;
import io.poisonguard.testing.Queues;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.model.Message;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Seed 001's practice drill: 47 report jobs, one in release 27's schema, PERMANENT limited to three
 * attempts. The poison job leaves after its bound with its history; the other 46 complete.
 */
@QuarkusTest
@TestProfile(SeedDrillTest.Drill.class)
class SeedDrillTest extends FlowTest {
    static final String POISON = "drill-17";

    public static class Drill extends EmulatorProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("poison-guard.failure.permanent.max-attempts", "3",
                    "poison-guard.example.provider.latency", "20ms");
        }
    }


    @Test
    void theOldSchemaJobIsQuarantinedAfterThreeAttemptsWhileTheOther46Complete() {
        Queues queues = new Queues(sqs, names);
        Map<String, Instant> sentAt = new LinkedHashMap<>();
        for (int i = 1; i <= 47; i++) {
            String jobId = String.format("drill-%02d", i);
            boolean poison = jobId.equals(POISON);
            String body = poison ? Queues.permitV1("P-" + i) : Queues.permitV3("P-" + i);
            sentAt.put(jobId, Instant.now());
            queues.send(body, Queues.permitAttributes(jobId, "tenant-" + (i % 3), poison ? 1 : 3));
        }
        List<String> healthy = sentAt.keySet().stream().filter(id -> !id.equals(POISON)).toList();

        await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(250)).until(() ->
                healthy.stream().allMatch(id -> state(id) == JobState.SUCCEEDED) && state(POISON) == JobState.QUARANTINED
                        && quarantine.find(key(POISON)).isPresent() && queues.depth(names.jobsQueue()) == 0);

        LedgerRecord poison = ledger.find(key(POISON)).orElseThrow();
        assertEquals(FailureClass.PERMANENT, poison.quarantineClass());
        assertEquals(3, poison.attempt());
        assertEquals(3, poison.history().size());
        for (AttemptEntry e : poison.history()) {
            assertEquals(AttemptOutcome.FAILED, e.outcome());
            assertEquals(FailureClass.PERMANENT, e.failureClass());
            assertTrue(e.message().contains("schema version 1"), e.message());
        }
        assertNotNull(poison.history().get(0).retryDelay(), "the ladder delay after attempt 1 is recorded");
        assertNotNull(poison.history().get(1).retryDelay(), "the ladder delay after attempt 2 is recorded");
        assertEquals(null, poison.leaseOwner(), "a quarantined job holds no lease");

        QuarantineRecord record = quarantine.find(key(POISON)).orElseThrow();
        assertEquals(FailureClass.PERMANENT, record.failureClass());
        assertEquals(3, record.attempts());
        assertEquals(1, record.diagnostics().schemaVersion());
        assertEquals("tenant-2", record.tenant());
        assertTrue(record.reason().startsWith("PERMANENT limit reached: 3 of 3"), record.reason());
        assertTrue(record.expiresAt().isAfter(Instant.now().plus(Duration.ofDays(13))), "retention TTL is set");

        List<Message> dead = queues.drain(names.deadLetterQueue());
        assertEquals(1, dead.size(), "exactly one dead-letter copy");
        Message d = dead.get(0);
        assertEquals(Queues.permitV1("P-17"), d.body(), "the original body is preserved");
        assertEquals(POISON, Queues.attr(d, "job-id"));
        assertEquals("PERMANENT", Queues.attr(d, "failure-class"));
        assertEquals("3", Queues.attr(d, "attempts"));
        assertEquals("1", Queues.attr(d, "schema-version"));
        assertEquals("permit-report", Queues.attr(d, "job-type"));
        assertTrue(Queues.attr(d, "quarantine-reason").contains("PERMANENT"));

        List<Message> notices = queues.drain(names.noticesQueue());
        Set<String> noticed = notices.stream().map(m -> Queues.attr(m, "job-id")).collect(Collectors.toSet());
        assertEquals(46, notices.size(), "one completion notice per healthy job");
        assertEquals(Set.copyOf(healthy), noticed);
        await().atMost(Duration.ofSeconds(10)).until(() -> queues.depth(names.jobsQueue()) == 0);

        String metrics = management().when().get("/q/metrics").then().statusCode(200).extract().asString();
        assertTrue(metrics.contains("poison_guard_quarantined_total{failure_class=\"PERMANENT\"} 1.0"), "quarantine counted by class");
        assertTrue(metrics.contains("poison_guard_outcomes_total{failure_class=\"none\",outcome=\"succeeded\"} 46.0"), "46 successes counted");
        assertTrue(metrics.contains("poison_guard_queue_age_seconds_count"), "queue age is recorded");

        List<Long> queueAgeMs = new ArrayList<>();
        List<Long> completionMs = new ArrayList<>();
        for (String id : healthy) {
            LedgerRecord r = ledger.find(key(id)).orElseThrow();
            assertEquals(1, r.attempt(), "healthy job " + id + " ran once");
            queueAgeMs.add(Duration.between(sentAt.get(id), r.history().get(0).startedAt()).toMillis());
            completionMs.add(Duration.between(sentAt.get(id), r.updatedAt()).toMillis());
        }
        long toQuarantine = Duration.between(sentAt.get(POISON), record.quarantinedAt()).toMillis();
        System.out.printf("%n[seed drill] 46 healthy jobs: queue age at first receive median %d ms, max %d ms;"
                        + " send-to-complete median %d ms, max %d ms%n[seed drill] poison %s: quarantined after %d attempts, %d ms after send%n",
                median(queueAgeMs), max(queueAgeMs), median(completionMs), max(completionMs), POISON, record.attempts(), toQuarantine);
    }


    static long median(List<Long> xs) {
        List<Long> s = xs.stream().sorted().toList();
        return s.get(s.size() / 2);
    }

    static long max(List<Long> xs) {
        return xs.stream().mapToLong(Long::longValue).max().orElseThrow();
    }
}
