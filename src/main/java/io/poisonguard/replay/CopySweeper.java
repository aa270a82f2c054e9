package io.poisonguard.replay;

import io.poisonguard.admission.MessageAttribute;
import io.poisonguard.admission.WireAttributes;
import io.poisonguard.ledger.JobKey;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Deletes the dead-letter copies a replay or a resolve left behind: those of a job's generations below the one that went on
 * (a newer one may have failed again and been quarantined, and its copy must stay).
 *
 * <p>SQS cannot look a message up, so every look is a scan of the DLQ under the process's one scan lock. A replay from the
 * vault answers at once and leaves its look to the background, where the jobs waiting share each scan: a bulk replay of
 * hundreds costs a few scans, not hundreds queued ahead of every operator's action.
 */
final class CopySweeper {
    private static final Logger LOG = Logger.getLogger(CopySweeper.class);
    /** Scans per sweep while some copies are hidden (held by another reader, so invisible to one scan). */
    static final int PASSES = 3;
    private static final Duration PASS_PAUSE = Duration.ofMillis(500);
    /** Most jobs one background sweep takes. */
    static final int BATCH = 100;

    private final PayloadArchive archive;
    /** Jobs waiting for the background sweep, each with the generation below which its copies go. */
    private final Map<JobKey, Integer> waiting = new HashMap<>();
    private boolean draining;

    CopySweeper(PayloadArchive archive) {
        this.archive = archive;
    }

    /** Sweeps the job's copies below {@code below} in the background, with whatever else waits. Never throws. */
    synchronized void later(JobKey key, int below) {
        waiting.merge(key, below, Math::max);
        if (!draining) {
            try {
                Thread.ofVirtual().name("dead-letter-sweep").start(this::drain);
                draining = true;
            } catch (Throwable e) {
                // The replay went out; its leftovers wait for the next sweep this starts (or expire, stale, with their retention).
                LOG.warnf("The dead-letter sweep did not start (%s); %d jobs wait for the next", e.getClass().getSimpleName(), waiting.size());
            }
        }
    }

    private void drain() {
        try {
            while (true) {
                Map<JobKey, Integer> next = new HashMap<>();
                synchronized (this) {
                    if (waiting.isEmpty()) {
                        draining = false;
                        return;
                    }
                    // At most BATCH jobs a sweep: what one scan holds stays small, and the rest wait for the next.
                    var it = waiting.entrySet().iterator();
                    while (it.hasNext() && next.size() < BATCH) {
                        var e = it.next();
                        next.put(e.getKey(), e.getValue());
                        it.remove();
                    }
                }
                try {
                    sweep(next);
                } catch (RuntimeException e) {
                    // Leftovers carry their old generation (dropped as stale if ever received) and expire with their retention.
                    LOG.warnf("Sweeping the dead-letter copies of %d replayed jobs failed (%s); leftovers expire with their retention",
                            next.size(), e.getClass().getSimpleName());
                }
            }
        } catch (Throwable e) {
            // An Error (out of memory): this drain ends, and the next replay starts another for what still waits (the batch it was
            // sweeping is lost: its leftovers expire, stale, with their retention).
            synchronized (this) {
                draining = false;
            }
            LOG.errorf("The dead-letter sweep stopped (%s); the next replay from the vault starts it again", e.getClass().getSimpleName());
        }
    }

    /**
     * Sweeps one job's copies now, for an operator waiting on the answer: one pass (behind at most one background scan, the
     * scan lock being fair); what it could not see (copies some other reader holds) is left to the background sweep.
     */
    int now(JobKey key, int below) {
        try {
            int deleted = pass(Map.of(key, below));
            // Found none while some copies were held by another reader: one of them may be this job's. (A pass that found
            // copies found the job's: a job has one dead-letter copy a generation.)
            if (deleted == 0 && archive.someHidden()) {
                later(key, below);
            }
            return deleted;
        } catch (RuntimeException e) {
            // The background sweep tries again: a resolve marks its record done once it answers, and is not repeated.
            later(key, below);
            throw e;
        }
    }

    /** One scan for every job given, deleting the copies below each one's generation and giving the newer back. */
    private int pass(Map<JobKey, Integer> below) {
        Map<JobKey, List<ArchivedMessage>> found = archive.takeAll(below.keySet());
        List<ArchivedMessage> older = new ArrayList<>();
        List<ArchivedMessage> newer = new ArrayList<>();
        found.forEach((key, copies) -> copies.forEach(c -> (generationOf(c) < below.get(key) ? older : newer).add(c)));
        try {
            // Deleted first: their receipts were taken at the scan's start and expire with its hold.
            return archive.delete(older);
        } finally {
            archive.release(newer);
        }
    }

    /** Sweeps now, for each job its copies below its generation, a few passes while copies are hidden; how many were deleted. */
    int sweep(Map<JobKey, Integer> below) {
        int deleted = 0;
        try {
            for (int pass = 0; pass < PASSES; pass++) {
                deleted += pass(below);
                if (!archive.someHidden()) {
                    break;
                }
                Thread.sleep(PASS_PAUSE.toMillis());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return deleted;
    }

    static int generationOf(ArchivedMessage copy) {
        MessageAttribute g = copy.attributes().get(WireAttributes.GENERATION);
        try {
            return g == null || g.stringValue() == null ? 1 : Integer.parseInt(g.stringValue().trim());
        } catch (NumberFormatException e) {
            return 1;
        }
    }
}
