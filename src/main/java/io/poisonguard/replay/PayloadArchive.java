package io.poisonguard.replay;

import java.util.List;

/**
 * The dead-letter queue as the place payloads are kept until their retention ends. SQS cannot
 * look a message up by attribute, so finding a job's copies scans the queue.
 */
public interface PayloadArchive {
    /** Every dead-letter copy of {@code jobId}, hidden from other readers until released or deleted. */
    List<ArchivedMessage> take(String jobId);

    void delete(List<ArchivedMessage> copies);

    /** Makes held copies visible again. */
    void release(List<ArchivedMessage> copies);

    /** Whether some dead-letter messages are hidden right now (held by another action), so "not found" is not final. */
    boolean someHidden();
}
