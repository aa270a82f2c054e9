package io.poisonguard.scripts;

import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * scripts/replay.mjs's bulk mode against a stand-in operator API that answers what a real one can: an operator at 3 a.m.
 * reads its exit code and its last lines, so a misspelt option must not widen the batch, a batch with refused jobs must
 * not end in 0, and a batch whose instance died must not keep the command waiting forever.
 */
class ReplayScriptTest {
    private HttpServer api;
    private final List<String> requests = new CopyOnWriteArrayList<>();
    /** The bodies of the requests, in order. */
    private final List<String> bodies = new CopyOnWriteArrayList<>();
    /** What GET /ops/replays/b-1 answers. */
    private volatile String batch;

    @BeforeEach
    void start() throws IOException {
        api = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        api.createContext("/", exchange -> {
            requests.add(exchange.getRequestMethod() + " " + exchange.getRequestURI());
            bodies.add(new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
            String body = exchange.getRequestMethod().equals("POST")
                    ? "{\"id\":\"b-1\",\"status\":\"CANARY_RUNNING\",\"canaryJobId\":\"job-a\"}" : batch;
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.sendResponseHeaders(exchange.getRequestMethod().equals("POST") ? 202 : 200, bytes.length);
            exchange.getResponseBody().write(bytes);
            exchange.close();
        });
        api.start();
    }

    @AfterEach
    void stop() {
        api.stop(0);
    }

    record Run(int exit, String out) {
    }

    private Run replay(Map<String, String> env, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("node", "scripts/replay.mjs", "--url", "http://127.0.0.1:" + api.getAddress().getPort(),
                "--token", "t", "--reason", "reader shipped"));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().putAll(env);
        Process p = pb.start();
        boolean ended = p.waitFor(30, TimeUnit.SECONDS);
        if (!ended) {
            p.destroyForcibly();
        }
        assertTrue(ended, "the command ended");
        return new Run(p.exitValue(), new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
    }

    @Test
    void aMisspeltOptionOrALimitThatIsNoNumberIsRefusedBeforeAnythingIsAsked() throws Exception {
        Run typo = replay(Map.of(), "--failure-class", "PERMANENT", "--tenant", "acme", "--jobtype", "permit-report", "--execute");
        assertEquals(2, typo.exit(), typo.out());
        assertTrue(typo.out().contains("--jobtype"), typo.out());
        Run glued = replay(Map.of(), "--failure-class", "PERMANENT", "--tenant", "acme", "--job-type=permit-report", "--execute");
        assertEquals(2, glued.exit(), glued.out());
        Run limit = replay(Map.of(), "--failure-class", "PERMANENT", "--tenant", "acme", "--limit", "1O", "--execute");
        assertEquals(2, limit.exit(), limit.out());
        assertEquals(List.of(), requests, "nothing was asked of the API");
    }

    @Test
    void aCompletedBatchWithJobsNotReplayedEndsInOneAndNamesThem() throws Exception {
        batch = "{\"id\":\"b-1\",\"status\":\"COMPLETED\",\"selected\":3,\"updatedAt\":\"2026-12-05T10:00:00Z\",\"detail\":\"2 of 3 jobs replayed\","
                + "\"outcomes\":[{\"jobId\":\"job-a\",\"outcome\":\"REPLAYED\",\"detail\":\"generation 2\"},"
                + "{\"jobId\":\"job-b\",\"outcome\":\"REFUSED_CONFLICT\",\"detail\":\"another operator action changed job job-b first\"},"
                + "{\"jobId\":\"job-c\",\"outcome\":\"REPLAYED\",\"detail\":\"generation 2\"}],\"stepsOmitted\":0}";

        Run run = replay(Map.of(), "--failure-class", "PERMANENT", "--tenant", "acme", "--execute");

        assertEquals(1, run.exit(), run.out());
        assertTrue(run.out().contains("2 replayed, 1 not") && run.out().contains("job-b") && run.out().contains("REFUSED_CONFLICT"), run.out());
    }

    @Test
    void aBatchThatStopsMovingEndsTheWaitWithItsOwnExitCode() throws Exception {
        batch = "{\"id\":\"b-1\",\"status\":\"WIDENING\",\"selected\":3,\"updatedAt\":\"2026-12-05T10:00:00Z\",\"detail\":\"3 jobs selected\","
                + "\"outcomes\":[{\"jobId\":\"job-a\",\"outcome\":\"REPLAYED\",\"detail\":\"generation 2\"}],\"stepsOmitted\":0}";

        Run run = replay(Map.of("PG_REPLAY_STALL_MS", "1500"), "--failure-class", "PERMANENT", "--tenant", "acme", "--execute");

        assertEquals(3, run.exit(), run.out());
        assertTrue(run.out().contains("has not moved"), run.out());
    }

    /**
     * A job of the batch replayed again by another action while it was watched: the command counted it a success and exited
     * 0 for a job this batch never saw succeed. And the "next" of a selection whose listing went on could not be given back:
     * the command refused --after.
     */
    @Test
    void aJobReplayedAgainByAnotherActionIsNotASuccessAndAfterGoesOnPastASelection() throws Exception {
        batch = "{\"id\":\"b-1\",\"status\":\"COMPLETED\",\"selected\":2,\"updatedAt\":\"2026-12-05T10:00:00Z\",\"detail\":\"2 of 2 jobs tried\","
                + "\"outcomes\":[{\"jobId\":\"job-a\",\"outcome\":\"REPLAYED\",\"detail\":\"generation 2\"},"
                + "{\"jobId\":\"job-b\",\"outcome\":\"REPLAYED_AGAIN\",\"detail\":\"replayed again as generation 3 by another action\"}],"
                + "\"stepsOmitted\":0}";

        Run run = replay(Map.of(), "--failure-class", "PERMANENT", "--tenant", "acme", "--after", "c-42", "--execute");

        assertEquals(1, run.exit(), run.out());
        assertTrue(run.out().contains("2 replayed, 0 not") && run.out().contains("replayed again by another action")
                && run.out().contains("job-b"), run.out());
        assertTrue(bodies.get(0).contains("\"after\":\"c-42\""), bodies.get(0));
    }
}
