package io.poisonguard.replay;

import java.util.Optional;

/**
 * Whether this worker has stopped consuming because its systemic guard tripped: a bulk replay that goes on widening then
 * only adds failing jobs to an outage, so it stops.
 */
public interface ConsumptionState {
    /** Why consumption is stopped here, or empty while it runs. */
    Optional<String> stopped();
}
