package io.poisonguard.alerts;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 12, item 8: alert delivery holds bounded resources. Before, every alert started a thread per
 * notifier, so a stuck webhook during a quarantine storm piled up threads without limit.
 */
class AlertDispatchTest {

    private static Alert alert(int i) {
        return new Alert(Alert.QUARANTINED, "job-" + i, "tenant-a", "permit-report", "PERMANENT", 1, 1, "reason", "link", Instant.now());
    }

    @Test
    void aStuckNotifierHoldsAtMostItsWorkersAndQueueAndTheRestAreDroppedAndCounted() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger running = new AtomicInteger();
        AtomicInteger mostAtOnce = new AtomicInteger();
        List<String> delivered = new CopyOnWriteArrayList<>();
        Notifier stuck = new Notifier() {
            @Override
            public String name() {
                return "webhook";
            }

            @Override
            public void send(Alert alert) throws Exception {
                mostAtOnce.accumulateAndGet(running.incrementAndGet(), Math::max);
                try {
                    release.await();
                    delivered.add(alert.jobId());
                } finally {
                    running.decrementAndGet();
                }
            }
        };
        AtomicInteger drops = new AtomicInteger();
        try (AlertDispatch dispatch = new AlertDispatch(stuck, 2, 5, name -> drops.incrementAndGet())) {
            int accepted = 0;
            for (int i = 0; i < 50; i++) {
                if (dispatch.offer(alert(i))) {
                    accepted++;
                }
            }
            assertEquals(7, accepted, "two in delivery and five waiting");
            assertEquals(43, drops.get(), "every other alert is counted as dropped");
            release.countDown();
            await().atMost(Duration.ofSeconds(10)).until(() -> delivered.size() == 7);
            assertTrue(mostAtOnce.get() <= 2, "at most two sends at once: " + mostAtOnce.get());
            assertTrue(dispatch.offer(alert(99)), "with the notifier caught up, alerts are accepted again");
        }
    }

    @Test
    void alertsQueuedWhenTheServiceStopsAreDeliveredBeforeCloseReturnsAndThoseItCannotWaitForAreCounted() throws Exception {
        List<String> delivered = new CopyOnWriteArrayList<>();
        AtomicInteger closed = new AtomicInteger();
        class Slow implements Notifier, AutoCloseable {
            @Override
            public String name() {
                return "sns";
            }

            @Override
            public void send(Alert alert) throws Exception {
                Thread.sleep(200); // stands for a publish's round trip
                delivered.add(alert.jobId());
            }

            @Override
            public void close() {
                closed.incrementAndGet();
            }
        }
        AtomicInteger drops = new AtomicInteger();
        AlertDispatch dispatch = new AlertDispatch(new Slow(), 2, 5, name -> drops.incrementAndGet());
        for (int i = 0; i < 3; i++) {
            assertTrue(dispatch.offer(alert(i)));
        }
        // The last quarantines of a stopping worker: their alerts were queued, the process is about to exit.
        dispatch.close();
        assertEquals(3, delivered.size(), "delivered before close returned: " + delivered);
        assertEquals(1, closed.get(), "the notifier is closed after its last send");

        AlertDispatch stuck = new AlertDispatch(new Notifier() {
            @Override
            public String name() {
                return "webhook";
            }

            @Override
            public void send(Alert alert) throws Exception {
                Thread.sleep(Duration.ofMinutes(10));
            }
        }, 1, 5, name -> drops.incrementAndGet());
        for (int i = 0; i < 4; i++) {
            stuck.offer(alert(i));
        }
        stuck.close(Instant.now().plusMillis(300));
        assertEquals(4, drops.get(), "the one in delivery and the three waiting are counted as dropped");
    }

    @Test
    void snsSubjectsArePrintableAsciiUnderOneHundredCharacters() {
        String subject = SnsNotifier.subject("poison-guard: job.quarantined " + "é\n".repeat(30) + "x".repeat(200));
        assertTrue(subject.length() < 100, subject.length() + "");
        assertFalse(subject.chars().anyMatch(c -> c < 0x20 || c > 0x7E), subject);
    }
}
