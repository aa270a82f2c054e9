package io.poisonguard.replay;

import io.poisonguard.ledger.JobKey;

import java.util.List;

/**
 * The dead-letter queue as the place payloads are kept until their retention ends. SQS cannot
 * look a message up by attribute, so finding a job's copies scans the queue.
 */
public interface PayloadArchive {
    /**
     * The dead-letter copies of the job (its tenant and job id) a scan found, hidden from other readers until released or
     * deleted, and whether the scan looked at every message (a deep queue stops it at its bound).
     */
    ArchiveScan find(JobKey key);

    /** The copies {@link #find} finds, however complete its scan. */
    default List<ArchivedMessage> take(JobKey key) {
        return find(key).copies();
    }

    /**
     * The copies of each of these jobs, hidden as {@link #take} hides them: one pass through the queue for them all where the
     * archive can (what the background clean-up of many replays shares); jobs with none are left out. Their bodies may be left
     * out: the clean-up reads only a copy's receipt and generation.
     */
    default java.util.Map<JobKey, List<ArchivedMessage>> takeAll(java.util.Collection<JobKey> keys) {
        java.util.Map<JobKey, List<ArchivedMessage>> found = new java.util.HashMap<>();
        for (JobKey key : keys) {
            List<ArchivedMessage> copies = take(key);
            if (!copies.isEmpty()) {
                found.put(key, copies);
            }
        }
        return found;
    }

    /**
     * Deletes held copies; returns how many the queue confirmed deleted. A copy it refused (its receipt expired
     * while it was held) stays in the dead-letter queue with its old generation: stale if it is ever received.
     */
    int delete(List<ArchivedMessage> copies);

    /** Makes held copies visible again. */
    void release(List<ArchivedMessage> copies);

    /** Whether some dead-letter messages are hidden right now (held by another action), so "not found" is not final. */
    boolean someHidden();
}
