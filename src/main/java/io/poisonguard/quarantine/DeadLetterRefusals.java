package io.poisonguard.quarantine;

import java.util.Optional;

/**
 * Tells a dead-letter send that can never succeed (the queue refuses this message as it is) from one
 * that may succeed when tried again (throttling, a network error, a server error). The adapter that
 * sends knows its technology's errors; the pipeline only asks.
 */
public interface DeadLetterRefusals {
    /** Why the dead-letter queue will never take this copy, or empty when the failure may pass. */
    Optional<String> permanent(RuntimeException failure);
}
