package io.poisonguard.flows;

import io.poisonguard.ledger.AttemptOutcome;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.pipeline.Poller;
import io.poisonguard.testing.Queues;
import io.poisonguard.testing.ScriptedHandler;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A deploy while a handler is inside a call that ignores its interrupt (a blocking client that does not listen for
 * one): the shutdown grace runs out, the attempt is given back uncounted, and the handler is still running in the
 * stopping process. Before, the copy went back visible at once with the attempt's lease cleared, so another worker
 * started the job's next attempt beside the one still running here: two runs of one job at once, each free to perform
 * its effects.
 */
@QuarkusTest
@TestProfile(ShutdownWithStuckHandlerTest.Profile.class)
class ShutdownWithStuckHandlerTest extends FlowTest {
    public static class Profile extends EmulatorProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("poison-guard.consumer.shutdown-grace", "1s", "poison-guard.attempt.stop-grace", "1s");
        }
    }

    @Inject
    ScriptedHandler handler;
    @Inject
    Poller poller;

    @Test
    void aHandlerStillRunningWhenItsAttemptIsGivenBackAtShutdownKeepsItsJobFromEveryOtherWorker() {
        Queues queues = queues();
        queues.send("hang-hard", ScriptedHandler.attributes("stuck-at-stop"));
        await().atMost(Duration.ofSeconds(20)).until(() -> handler.running() == 1);

        poller.stop();
        try {
            LedgerRecord r = ledger.find(key("stuck-at-stop")).orElseThrow();
            assertEquals(AttemptOutcome.ABANDONED, r.currentEntry().outcome(), r.history().toString());
            assertTrue(r.failures().isEmpty(), "a shutdown is not the job's fault: " + r.failures());
            assertEquals(1, handler.running(), "the handler ignores its interrupt: it still runs in this process");
            // Held back for the most the rest of a shutdown may take (26 s with this profile's 1-s long poll), more than
            // twice the 5-s visibility.
            assertEquals(Duration.ofSeconds(26), r.currentEntry().retryDelay());
            // What another worker would receive now: nothing, while the handler may still be running here.
            var seen = sqs.receiveMessage(b -> b.queueUrl(queues.url(names.jobsQueue())).maxNumberOfMessages(10)
                    .waitTimeSeconds(2).visibilityTimeout(0)).messages();
            assertEquals(0, seen.size(), "the job's copy was visible to other workers while its handler still ran");
        } finally {
            handler.releaseStuck();
            poller.start();
        }
        // Once the process is gone (here: the handler let go and the worker runs again), the job runs to completion.
        await().atMost(Duration.ofSeconds(60)).until(() -> state("stuck-at-stop") == JobState.SUCCEEDED);
        assertEquals(2, handler.calls("stuck-at-stop"));
    }
}
