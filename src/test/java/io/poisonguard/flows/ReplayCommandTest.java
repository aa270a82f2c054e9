package io.poisonguard.flows;

import io.poisonguard.ledger.JobKey;
import io.poisonguard.example.permit.PermitReportHandler;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.tenants.Tenant;
import io.poisonguard.tenants.TenantDirectory;
import io.poisonguard.tenants.TenantStatus;
import io.poisonguard.testing.Queues;
import io.poisonguard.testing.Tokens;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The shell replay command (scripts/replay.mjs) against the running API: dry run by default, reason required. */
@QuarkusTest
@TestProfile(ReplayCommandTest.Profile.class)
class ReplayCommandTest extends FlowTest {
    public static class Profile extends EmulatorProfile {
    }

    @TestHTTPResource("/")
    URL url;
    @Inject
    TenantDirectory tenants;
    @Inject
    PermitReportHandler handler;

    record Run(int exit, String out) {
    }

    private Run replayCommand(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("node", "scripts/replay.mjs", "--url", url.toString()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the command finished");
        return new Run(p.exitValue(), new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
    }

    @Test
    void theCommandRefusesWithoutAReasonDryRunsByDefaultAndReplaysOnlyWithExecute() throws Exception {
        tenants.put(new Tenant("t-cli", TenantStatus.ACTIVE, Set.of("permit-report"), Instant.now(), "test"));
        new Queues(sqs, names).send(Queues.permitV1("P-CLI"), Queues.permitAttributes("cli-1", "t-cli", 1));
        await().atMost(Duration.ofSeconds(30)).until(() -> ledger.find(key("cli-1")).map(r -> r.state() == JobState.QUARANTINED).orElse(false)
                && quarantine.find(key("cli-1")).isPresent() && new Queues(sqs, names).depth(names.jobsQueue()) == 0);
        String token = Tokens.of("cleo", "operator");

        Run noReason = replayCommand("--token", token, "--job", "cli-1");
        assertEquals(2, noReason.exit());
        assertTrue(noReason.out().contains("--reason is required"), noReason.out());

        Run dry = replayCommand("--token", token, "--job", "cli-1", "--reason", "reader shipped");
        assertEquals(0, dry.exit(), dry.out());
        assertTrue(dry.out().contains("DRY RUN") && dry.out().contains("WOULD_REPLAY"), dry.out());
        assertEquals(JobState.QUARANTINED, ledger.find(key("cli-1")).map(LedgerRecord::state).orElseThrow(), "a dry run changes nothing");

        handler.legacyReader(true);
        try {
            Run done = replayCommand("--token", token, "--job", "cli-1", "--reason", "reader shipped", "--execute");
            assertEquals(0, done.exit(), done.out());
            assertTrue(done.out().contains("REPLAYED") && done.out().contains("generation 2"), done.out());
            await().atMost(Duration.ofSeconds(30)).until(() -> ledger.find(key("cli-1")).map(r -> r.state() == JobState.SUCCEEDED).orElse(false));
        } finally {
            handler.legacyReader(false);
        }
        System.out.println("\n[replay command] " + dry.out().strip().replace("\n", " | "));
    }
}
