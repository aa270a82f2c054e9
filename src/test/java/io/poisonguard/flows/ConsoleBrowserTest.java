package io.poisonguard.flows;

import io.poisonguard.failure.FailureClass;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.quarantine.QuarantineStatus;
import io.poisonguard.quarantine.ReplayEntry;
import io.poisonguard.replay.BulkReplay;
import java.time.Instant;
import java.util.Optional;
import io.poisonguard.example.permit.PermitReportHandler;
import io.poisonguard.ledger.JobKey;
import io.poisonguard.ledger.JobState;
import io.poisonguard.testing.EmulatorsResource;
import io.poisonguard.testing.Queues;
import io.poisonguard.testing.Tokens;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 13: the console, in headless Chromium (Debian's, driven by playwright-core; src/test/console/drill.mjs). A
 * viewer finds the drill's poison job and cannot act on it (a dry run only); an operator acknowledges it, replays it
 * with a reason once the release-27 reader is enabled, and sees it complete; the overview shows an overdue record as
 * overdue, and that record's escalation reaches its owner once. Screenshots land in target/console-screenshots.
 */
@QuarkusTest
@TestProfile(ConsoleBrowserTest.Profile.class)
class ConsoleBrowserTest extends FlowTest {
    public static class Profile extends EmulatorProfile {
        @Override
        public List<TestResourceEntry> testResources() {
            return List.of(new TestResourceEntry(EmulatorsResource.class), new TestResourceEntry(TriageFlowTest.TeamRoutes.class));
        }

        @Override
        public Map<String, String> getConfigOverrides() {
            Map<String, String> c = new HashMap<>();
            // The overdue record's owner: a short acknowledge deadline; the drill job's owner (the default) has hours.
            c.put("poison-guard.ownership.owners.\"permits\".tenants", "t-late");
            c.put("poison-guard.ownership.owners.\"permits\".acknowledge-within", "2s");
            c.put("poison-guard.ownership.owners.\"permits\".resolve-within", "1h");
            c.put("poison-guard.ownership.check-interval", "1s");
            c.put("poison-guard.replay.settle-time", "1s");
            return c;
        }
    }

    static final Path CHROMIUM = Path.of(System.getenv().getOrDefault("CHROMIUM_PATH", "/usr/bin/chromium"));
    static final Path SHOTS = Path.of("target", "console-screenshots");

    @TestHTTPResource("/")
    URL url;

    @Inject
    PermitReportHandler handler;
    @Inject
    io.poisonguard.triage.EscalationCheck escalation;
    @Inject
    io.poisonguard.replay.BulkReplayStore bulkStore;

    @AfterEach
    void readerOff() {
        handler.legacyReader(false);
    }

    private String drill(String phase, String token, String... more) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("node", "src/test/console/drill.mjs", "--url", url.toString().replaceAll("/$", ""),
                "--token", token, "--phase", phase, "--shots", SHOTS.toString()));
        cmd.addAll(List.of(more));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        assertTrue(p.waitFor(3, TimeUnit.MINUTES), phase + " phase did not end");
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        System.out.println("[console drill] " + out.strip().replace("\n", "\n[console drill] "));
        assertEquals(0, p.exitValue(), phase + " phase failed:\n" + out);
        return out;
    }

    @Test
    void aViewerCannotActAnOperatorAcknowledgesAndReplaysAndTheOverviewShowsWhatIsOverdue() throws Exception {
        boolean ci = System.getenv("CI") != null;
        if (!Files.isExecutable(CHROMIUM)) {
            // CI installs Debian's chromium (.ci/run); a developer machine without it skips, saying how to get it.
            assertTrue(!ci, "CI must have Debian's chromium at " + CHROMIUM + " (.ci/run installs it)");
            Assumptions.abort("no Chromium at " + CHROMIUM + ": apt-get install chromium (or set CHROMIUM_PATH) to run the console drill");
        }
        assertTrue(Files.isDirectory(Path.of("src/test/console/node_modules/playwright-core")),
                "playwright-core is installed by the build (npm install in src/test/console)");
        if (Files.isDirectory(SHOTS)) {
            try (var old = Files.list(SHOTS)) {
                for (Path p : old.toList()) {
                    Files.delete(p);
                }
            }
        }
        registerTenant("t-drill", "ACTIVE", "permit-report");
        Queues queues = queues();
        JobKey drill = new JobKey("t-drill", "drill-permit-1");
        JobKey late = new JobKey("t-late", "late-1");
        JobKey stuck = new JobKey("t-drill", "stuck-permit-1");
        queues.send(Queues.permitV1("P-DRILL"), Queues.permitAttributes(drill.jobId(), drill.tenant(), 1));
        queues.send(Queues.permitV1("P-LATE"), Queues.permitAttributes(late.jobId(), late.tenant(), 1));
        queues.send(Queues.permitV1("P-STUCK"), Queues.permitAttributes(stuck.jobId(), stuck.tenant(), 1));
        await().atMost(Duration.ofSeconds(30)).until(() -> quarantine.find(drill).isPresent() && quarantine.find(late).isPresent()
                && quarantine.find(stuck).isPresent());

        String viewer = Tokens.of("vic", "viewer");
        drill("viewer", viewer, "--job", drill.jobId(), "--tenant", drill.tenant());
        assertEquals(JobState.QUARANTINED, ledger.find(drill).orElseThrow().state(), "the viewer changed nothing");

        handler.legacyReader(true);
        drill("operator", Tokens.of("olga", "operator"), "--job", drill.jobId(), "--tenant", drill.tenant());
        assertEquals(JobState.SUCCEEDED, ledger.find(drill).orElseThrow().state());
        assertEquals(2, ledger.find(drill).orElseThrow().generation());

        drill("overview", viewer, "--job", drill.jobId(), "--tenant", drill.tenant(), "--overdue", late.jobId());

        // A job that named no valid tenant is quarantined under no tenant; its page must open from the list.
        queues.send(Queues.permitV1("P-STRAY"), Queues.permitAttributes("stray-c1", "no valid tenant!", 1));
        await().atMost(Duration.ofSeconds(30)).until(() -> quarantine.find(new JobKey(null, "stray-c1")).isPresent());
        drill("tenantless", viewer, "--job", "stray-c1");

        // A replay whose instance died after it marked the job: ledger and record say REPLAYING until it is re-issued.
        LedgerRecord quarantined = ledger.find(stuck).orElseThrow();
        ledger.write(quarantined.replayed(Instant.now()));
        quarantine.updateStatus(stuck, QuarantineStatus.REPLAYING,
                Optional.of(new ReplayEntry(quarantined.generation() + 1, Instant.now(), "olga", "its instance died mid-replay", null)));
        await().atMost(Duration.ofSeconds(10)).until(() -> ledger.find(stuck).orElseThrow().updatedAt().isBefore(Instant.now().minusSeconds(2)));
        drill("reissue", Tokens.of("olga", "operator"), "--job", stuck.jobId(), "--tenant", stuck.tenant());
        await().atMost(Duration.ofSeconds(30)).until(() -> ledger.find(stuck).orElseThrow().state() == JobState.SUCCEEDED);

        // A bulk replay whose instance died while it was widening: its state stopped moving ten minutes ago.
        Instant now = Instant.now();
        bulkStore.put(new BulkReplay("dead-batch-1", "olga", "release-27", "t-drill", FailureClass.PERMANENT, 3, BulkReplay.Status.WIDENING,
                "c-1", "SUCCEEDED", List.of(new BulkReplay.Step("c-1", "REPLAYED", null)), now.minus(Duration.ofMinutes(20)),
                now.minus(Duration.ofMinutes(10)), null, "", 0, 0));
        drill("stalled", viewer, "--job", drill.jobId(), "--tenant", drill.tenant(), "--batch", "dead-batch-1");

        await().atMost(Duration.ofSeconds(20)).until(() -> escalations(late.jobId()) == 1);
        long passes = escalation.passes();
        await().atMost(Duration.ofSeconds(15)).until(() -> escalation.passes() >= passes + 3);
        assertEquals(1, escalations(late.jobId()), "the escalation arrived once, three checks later still once");
        try (var shots = Files.list(SHOTS)) {
            System.out.println("[console drill] screenshots: " + shots.map(p -> p.getFileName().toString()).sorted().toList());
        }
    }

    private static long escalations(String jobId) {
        return TriageFlowTest.TeamRoutes.at("/permits-escalations").stream()
                .filter(a -> a.contains("\"jobId\":\"" + jobId + "\"") && a.contains("\"event\":\"job.escalated\"") && a.contains("not acknowledged"))
                .count();
    }
}
