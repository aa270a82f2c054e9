package io.poisonguard.flows;

import io.poisonguard.ledger.JobKey;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.quarantine.DeadLetterCopy;
import io.poisonguard.quarantine.QuarantineRecord;
import io.poisonguard.testing.AlertSinks;
import io.poisonguard.testing.EmulatorsResource;
import io.poisonguard.testing.Queues;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 12, items 1, 2 and 4: identity attributes a sender controls cannot take a job out of the pipeline's
 * hands. A tenant of any length or shape is refused at admission with a named reason that does not quote it
 * (before, a tenant over DynamoDB's key size failed every delivery inside DynamoDB, with no record and no
 * alert); a sender's text in the job type or charset reaches no record; a {@code generation} that no replay
 * made runs as the job's current generation and raises no replay alert, and cannot reopen a quarantine.
 */
@QuarkusTest
@TestProfile(HostileIdentityTest.Profile.class)
class HostileIdentityTest extends FlowTest {
    public static class Profile extends EmulatorProfile {
        @Override
        public List<TestResourceEntry> testResources() {
            return List.of(new TestResourceEntry(EmulatorsResource.class), new TestResourceEntry(AlertSinks.class));
        }

        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("poison-guard.systemic.same-signature", "100", "poison-guard.systemic.max-quarantines", "1000");
        }
    }

    static final String SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";

    @Test
    void anOversizedTenantWithAFakeGenerationIsQuarantinedWithANamedReasonThatDoesNotQuoteIt() {
        Queues queues = queues();
        String tenant = "t".repeat(2_100) + SECRET;
        Map<String, String> attrs = new HashMap<>(Queues.permitAttributes("hostile-tenant-1", tenant, 3));
        attrs.put("generation", "2");
        queues.send(Queues.permitV3("P-HOSTILE"), attrs);

        JobKey unscoped = new JobKey(null, "hostile-tenant-1");
        await().atMost(Duration.ofSeconds(30)).until(() -> quarantine.find(unscoped).isPresent() && queues.depth(names.jobsQueue()) == 0);
        QuarantineRecord record = quarantine.find(unscoped).orElseThrow();
        assertTrue(record.reason().contains("invalid-tenant"), record.reason());
        assertFalse(record.reason().contains(SECRET) || record.reason().contains("tttttttt"), "the reason quotes no part of the value");
        assertEquals(1, record.generation(), "the claimed generation 2 was no replay's");
        LedgerRecord ledgerRecord = ledger.find(unscoped).orElseThrow();
        assertEquals(JobState.QUARANTINED, ledgerRecord.state());
        assertEquals(1, ledgerRecord.attempt(), "one delivery, no cycling");
        assertEquals(DeadLetterCopy.State.SENT, record.deadLetter().state(), "the payload went to the DLQ");
    }

    @Test
    void anOversizedJobIdIsQuarantinedUnderItsMessageIdWithANamedReason() {
        Queues queues = queues();
        String messageId = queues.send(Queues.permitV3("P-LONG-ID"), Queues.permitAttributes("j".repeat(3_000), "tenant-h", 3));
        JobKey byMessageId = new JobKey("tenant-h", messageId);
        await().atMost(Duration.ofSeconds(30)).until(() -> quarantine.find(byMessageId).isPresent());
        QuarantineRecord record = quarantine.find(byMessageId).orElseThrow();
        assertTrue(record.reason().contains("invalid-job-id"), record.reason());
        assertFalse(record.reason().contains("jjjjjjjj"), record.reason());
    }

    @Test
    void anUnusableJobIdIsQuarantinedUnderItsMessageIdEvenWhenItsBodyNamesAnotherJob() {
        // The body names a job that already succeeded: keyed by the body, the bad copy would be dropped as that job's
        // duplicate (no record, nothing kept) or charged to it; it is its own message's.
        registerTenant("tenant-o", "ACTIVE", "permit-report");
        Queues queues = queues();
        queues.send("{\"jobId\":\"order-42\"," + Queues.permitV3("P-ORDER-42").substring(1), Queues.permitAttributes("order-42", "tenant-o", 3));
        await().atMost(Duration.ofSeconds(30)).until(() -> state("order-42") == JobState.SUCCEEDED);

        Map<String, String> attrs = new HashMap<>(Queues.permitAttributes("o".repeat(300), "tenant-o", 3));
        String messageId = queues.send("{\"jobId\":\"order-42\"," + Queues.permitV3("P-SIBLING").substring(1), attrs);

        JobKey byMessageId = new JobKey("tenant-o", messageId);
        await().atMost(Duration.ofSeconds(30)).until(() -> quarantine.find(byMessageId).isPresent());
        assertTrue(quarantine.find(byMessageId).orElseThrow().reason().contains("invalid-job-id"));
        assertEquals(JobState.SUCCEEDED, state("order-42"), "the job the body names is untouched");
        assertTrue(quarantine.find(new JobKey("tenant-o", "order-42")).isEmpty());
    }

    @Test
    void senderTextInJobTypeAndCharsetReachesNoRecord() {
        Queues queues = queues();
        Map<String, String> attrs = new HashMap<>(Queues.permitAttributes("hostile-type-1", "tenant-h", 3));
        attrs.put("job-type", "ops@corp.example.org " + SECRET);
        queues.send(Queues.permitV3("P-TYPE"), attrs);
        Map<String, String> charset = new HashMap<>(Queues.permitAttributes("hostile-charset-1", "tenant-h", 3));
        charset.put("charset", "x-" + SECRET);
        queues.send(Queues.permitV3("P-CHARSET"), charset);

        JobKey type = new JobKey("tenant-h", "hostile-type-1");
        JobKey cs = new JobKey("tenant-h", "hostile-charset-1");
        await().atMost(Duration.ofSeconds(30)).until(() -> quarantine.find(type).isPresent() && quarantine.find(cs).isPresent());
        for (QuarantineRecord r : List.of(quarantine.find(type).orElseThrow(), quarantine.find(cs).orElseThrow())) {
            String everything = r.toString();
            assertFalse(everything.contains(SECRET), "a sender's secret reached the record: " + r.reason());
            assertFalse(everything.contains("ops@corp.example.org"), "a sender's address reached the record");
        }
        assertTrue(quarantine.find(type).orElseThrow().reason().contains("unknown-job-type"));
        assertTrue(quarantine.find(cs).orElseThrow().reason().contains("unsupported-charset"));
    }

    @Test
    void aGenerationNoReplayMadeRunsAsTheFirstAndRaisesNoReplayAlert() {
        Queues queues = queues();
        Map<String, String> attrs = new HashMap<>(Queues.permitAttributes("fake-gen-1", "tenant-h", 3));
        attrs.put("generation", "7");
        queues.send(Queues.permitV3("P-FAKE"), attrs);
        JobKey fake = new JobKey("tenant-h", "fake-gen-1");
        await().atMost(Duration.ofSeconds(30)).until(() -> ledger.find(fake).map(r -> r.state() == JobState.SUCCEEDED).orElse(false));
        assertEquals(1, ledger.find(fake).orElseThrow().generation(), "it ran as an ordinary first generation");

        // A quarantined job cannot be reopened by a copy claiming a newer generation: it goes to the DLQ, unrun.
        queues.send(Queues.permitV1("P-PARK"), Queues.permitAttributes("fake-gen-2", "tenant-h", 1));
        JobKey parked = new JobKey("tenant-h", "fake-gen-2");
        await().atMost(Duration.ofSeconds(30)).until(() -> quarantine.find(parked).isPresent() && queues.depth(names.jobsQueue()) == 0);
        int dlqBefore = queues.depth(names.deadLetterQueue());
        Map<String, String> reopen = new HashMap<>(Queues.permitAttributes("fake-gen-2", "tenant-h", 3));
        reopen.put("generation", "2");
        queues.send(Queues.permitV3("P-PARK"), reopen);
        await().atMost(Duration.ofSeconds(30)).until(() -> queues.depth(names.jobsQueue()) == 0 && queues.depth(names.deadLetterQueue()) > dlqBefore);
        LedgerRecord still = ledger.find(parked).orElseThrow();
        assertEquals(JobState.QUARANTINED, still.state());
        assertEquals(1, still.generation());
        assertEquals(1, still.attempt(), "the copy did not run");

        assertTrue(AlertSinks.WEBHOOK.stream().noneMatch(a -> a.contains("replay-outcome") && a.contains("fake-gen")),
                "no replay alert for a replay nobody made: " + AlertSinks.WEBHOOK);
    }

    /** Secrets of the shapes the scrubber knows, one per hostile job. */
    static final List<String> SECRETS = List.of(
            "aws_secret_access_key=" + SECRET,
            "AKIAIOSFODNN7EXAMPLE",
            "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJtYWwifQ.c2lnbmF0dXJlLXZhbHVl",
            "sk_live_51HostileKeyAbCdEfGhIjKlMnOp",
            "-----BEGIN RSA PRIVATE KEY-----MIIEowIBAAKCAQEA",
            "4111 1111 1111 1111",
            "https://admin:hunter2@corp.example.org/x");

    @Test
    void secretsInEveryAttributeReachNoAlertRecordOrLogLineAndNoJobCycles() {
        List<String> lines = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.logging.Handler capture = new java.util.logging.Handler() {
            final java.util.logging.SimpleFormatter format = new java.util.logging.SimpleFormatter();

            @Override
            public void publish(java.util.logging.LogRecord r) {
                lines.add(format.format(r));
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        java.util.logging.Logger root = java.util.logging.Logger.getLogger("");
        root.addHandler(capture);
        try {
            Queues queues = queues();
            List<JobKey> jobs = new java.util.ArrayList<>();
            List<String> attributes = List.of("tenant", "job-type", "charset", "content-transfer-encoding", "schema-version", "generation",
                    "attachment-count");
            int n = 0;
            for (String attribute : attributes) {
                for (String secret : SECRETS) {
                    String id = "hostile-" + (n++);
                    Map<String, String> attrs = new HashMap<>(Queues.permitAttributes(id, "tenant-h", 3));
                    attrs.put(attribute, attribute.equals("tenant") ? "acme " + secret : secret);
                    // The body carries the secret too: payloads never reach records or logs.
                    queues.send(Queues.permitV3("P-" + secret), attrs);
                    jobs.add(new JobKey(attribute.equals("tenant") ? null : "tenant-h", id));
                }
            }
            String longId = "j".repeat(300) + SECRETS.get(0);
            String messageId = queues.send(Queues.permitV3("P-ID"), Queues.permitAttributes(longId, "tenant-h", 3));
            jobs.add(new JobKey("tenant-h", messageId));

            await().atMost(Duration.ofSeconds(90)).until(() -> jobs.stream().allMatch(k -> quarantine.find(k).isPresent()
                    || ledger.find(k).map(r -> r.state() == JobState.SUCCEEDED).orElse(false)) && queues.depth(names.jobsQueue()) == 0);
            List<String> evidence = new java.util.ArrayList<>();
            for (JobKey k : jobs) {
                Optional<QuarantineRecord> record = quarantine.find(k);
                record.ifPresent(r -> {
                    assertTrue(r.reason().matches("(?s).*[a-z]+(-[a-z]+)+.*"), "a named reason: " + r.reason());
                    evidence.add(r.toString());
                });
                LedgerRecord l = ledger.find(k).orElseThrow(() -> new AssertionError("no ledger record for " + k));
                assertEquals(1, l.attempt(), k + " ran once: no cycling");
                evidence.add(l.toString());
            }
            evidence.addAll(AlertSinks.WEBHOOK);
            evidence.addAll(lines);
            for (String secret : SECRETS) {
                String core = secret.replaceAll("^.*=", "").replace("Bearer ", "");
                for (String e : evidence) {
                    assertFalse(e.contains(core), "a secret (" + secret.substring(0, 8) + "...) reached: "
                            + e.substring(0, Math.min(300, e.length())));
                }
            }
            long quarantined = jobs.stream().filter(k -> quarantine.find(k).isPresent()).count();
            System.out.printf("%n[hostile senders] %d jobs with secrets in %d attributes: %d quarantined with a named reason, %d ran (the"
                    + " attribute is not read for them); %d alerts and %d log lines checked, no secret in any%n", jobs.size(), attributes.size() + 1,
                    quarantined, jobs.size() - quarantined, AlertSinks.WEBHOOK.size(), lines.size());
        } finally {
            root.removeHandler(capture);
        }
    }
}
