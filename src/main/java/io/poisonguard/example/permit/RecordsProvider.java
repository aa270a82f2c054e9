package io.poisonguard.example.permit;

/**
 * The downstream the permit report calls: a permit-records service. The shipped implementation is
 * {@link SimulatedRecordsProvider}; a real deployment replaces it with a client of its own service.
 */
public interface RecordsProvider {
    /** Looks up the permit's standing (for example "ISSUED", "EXPIRED"). */
    String standing(String tenant, String permitId);
}
