package io.poisonguard.quarantine;

import io.poisonguard.failure.FailureClass;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/** Durable home of quarantine records. Reads treat a record past its TTL as gone. */
public interface QuarantineStore {

    /** Stores the record unless one for the same job and generation exists; returns whether it wrote. */
    boolean putIfAbsent(QuarantineRecord record);

    Optional<QuarantineRecord> find(String jobId);

    /** Live records of one failure class, oldest first, at most {@code limit}. */
    List<QuarantineRecord> byClass(FailureClass failureClass, Instant now, int limit);
}
