package io.poisonguard.replay;

import io.poisonguard.admission.MessageAttribute;
import io.poisonguard.admission.WireAttributes;
import io.poisonguard.ledger.JobKey;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** The dead-letter sweep deletes only the generations below the one that went on, and outlives an error in one sweep. */
class CopySweeperTest {
    private static final JobKey JOB = JobKey.of("acme", "job-1");

    private static ArchivedMessage copy(String id, int generation) {
        return new ArchivedMessage(id, "r-" + id, "", Map.of(WireAttributes.GENERATION, MessageAttribute.number(generation)));
    }

    /** A queue holding, per job, the copies given; what is deleted and released is recorded. */
    static class Queue implements PayloadArchive {
        final Map<JobKey, List<ArchivedMessage>> held = new ConcurrentHashMap<>();
        final List<String> deleted = new CopyOnWriteArrayList<>();
        final List<String> released = new CopyOnWriteArrayList<>();
        /** What the next scan throws (an Error or a RuntimeException), once. */
        final java.util.concurrent.atomic.AtomicReference<Throwable> failNext = new java.util.concurrent.atomic.AtomicReference<>();

        @Override
        public ArchiveScan find(JobKey key) {
            return new ArchiveScan(held.getOrDefault(key, List.of()), true);
        }

        @Override
        public Map<JobKey, List<ArchivedMessage>> takeAll(Collection<JobKey> keys) {
            Throwable fail = failNext.getAndSet(null);
            if (fail instanceof Error e) {
                throw e;
            }
            if (fail != null) {
                throw (RuntimeException) fail;
            }
            Map<JobKey, List<ArchivedMessage>> out = new java.util.HashMap<>();
            keys.stream().filter(held::containsKey).forEach(k -> out.put(k, held.get(k)));
            return out;
        }

        @Override
        public int delete(List<ArchivedMessage> copies) {
            copies.forEach(c -> deleted.add(c.messageId()));
            held.values().forEach(l -> l.removeIf(copies::contains));
            return copies.size();
        }

        @Override
        public void release(List<ArchivedMessage> copies) {
            copies.forEach(c -> released.add(c.messageId()));
        }

        @Override
        public boolean someHidden() {
            return false;
        }
    }

    @Test
    void onlyTheGenerationsBelowTheOneThatWentOnAreDeletedAndANewerOneIsGivenBack() {
        Queue queue = new Queue();
        queue.held.put(JOB, new CopyOnWriteArrayList<>(List.of(copy("g1", 1), copy("g2", 2), copy("g3", 3))));

        int deleted = new CopySweeper(queue).sweep(Map.of(JOB, 3));

        assertEquals(2, deleted);
        assertEquals(Set.of("g1", "g2"), Set.copyOf(queue.deleted));
        assertEquals(List.of("g3"), queue.released, "the copy of the generation that went on (quarantined again) stays");
    }

    @Test
    void twoSweepsOfOneJobWaitingTogetherTakeTheNewerGeneration() {
        Queue queue = new Queue();
        queue.held.put(JOB, new CopyOnWriteArrayList<>(List.of(copy("g1", 1), copy("g2", 2))));
        AtomicBoolean hold = new AtomicBoolean(true);
        CopySweeper sweeper = new CopySweeper(new Queue() {
            @Override
            public Map<JobKey, List<ArchivedMessage>> takeAll(Collection<JobKey> keys) {
                await().atMost(Duration.ofSeconds(10)).until(() -> !hold.get());
                return queue.takeAll(keys);
            }

            @Override
            public int delete(List<ArchivedMessage> copies) {
                return queue.delete(copies);
            }
        });
        JobKey other = JobKey.of("acme", "job-2");
        sweeper.later(other, 2);
        sweeper.later(JOB, 2);
        sweeper.later(JOB, 3);
        hold.set(false);

        await().atMost(Duration.ofSeconds(10)).until(() -> queue.deleted.size() == 2);
        assertEquals(Set.of("g1", "g2"), Set.copyOf(queue.deleted));
    }

    @Test
    void anErrorInOneSweepDoesNotEndTheSweepsAfterIt() {
        Queue queue = new Queue();
        queue.held.put(JOB, new CopyOnWriteArrayList<>(List.of(copy("g1", 1))));
        queue.failNext.set(new OutOfMemoryError("a scan too large"));
        CopySweeper sweeper = new CopySweeper(queue);

        sweeper.later(JobKey.of("acme", "lost"), 2);
        await().atMost(Duration.ofSeconds(10)).until(() -> queue.failNext.get() == null);
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            sweeper.later(JOB, 2);
            return queue.deleted.contains("g1");
        });
    }

    /**
     * An operator's resolve swept the job's copies itself, three scans while some copies were hidden: during a bulk replay's
     * clean-up some always are, so the resolve waited behind that clean-up three times. It now makes one pass and leaves what
     * was hidden to the background.
     */
    @Test
    void aSweepAnOperatorWaitsOnMakesOnePassAndLeavesWhatWasHiddenToTheBackground() {
        java.util.concurrent.atomic.AtomicInteger scans = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger callersScans = new java.util.concurrent.atomic.AtomicInteger();
        Thread caller = Thread.currentThread();
        Queue queue = new Queue() {
            @Override
            public Map<JobKey, List<ArchivedMessage>> takeAll(Collection<JobKey> keys) {
                scans.incrementAndGet();
                if (Thread.currentThread() == caller) {
                    callersScans.incrementAndGet();
                }
                return super.takeAll(keys);
            }

            @Override
            public boolean someHidden() {
                return true;
            }
        };
        // The job's one copy is held by another reader during the operator's pass.
        queue.held.put(JOB, new CopyOnWriteArrayList<>());
        CopySweeper sweeper = new CopySweeper(queue);

        int deleted = sweeper.now(JOB, Integer.MAX_VALUE);
        queue.held.get(JOB).add(copy("g1", 1));

        assertEquals(0, deleted);
        assertEquals(1, callersScans.get(), "the operator's answer waited for one scan");
        await().atMost(Duration.ofSeconds(10)).until(() -> queue.deleted.contains("g1"));
    }

    /** A resolve whose one pass failed leaves its job to the background sweep: a second resolve would not sweep again. */
    @Test
    void aSweepAnOperatorWaitedOnThatFailedIsLeftToTheBackground() {
        Queue queue = new Queue();
        queue.held.put(JOB, new CopyOnWriteArrayList<>(List.of(copy("g1", 1))));
        queue.failNext.set(new IllegalStateException("the dead-letter queue did not answer"));
        CopySweeper sweeper = new CopySweeper(queue);

        org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class, () -> sweeper.now(JOB, Integer.MAX_VALUE));

        await().atMost(Duration.ofSeconds(10)).until(() -> queue.deleted.contains("g1"));
    }
}
