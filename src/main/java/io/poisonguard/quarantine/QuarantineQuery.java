package io.poisonguard.quarantine;

import io.poisonguard.failure.FailureClass;

import java.time.Instant;
import java.util.Optional;

/**
 * A page request over quarantine records. {@code quarantinedBefore} selects records at least that
 * old; {@code cursor} continues a previous page.
 */
public record QuarantineQuery(
        Optional<FailureClass> failureClass,
        Optional<String> tenant,
        Optional<String> jobType,
        Optional<QuarantineStatus> status,
        Optional<Instant> quarantinedBefore,
        int limit,
        Optional<String> cursor) {
}
