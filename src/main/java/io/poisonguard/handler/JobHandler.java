package io.poisonguard.handler;

import java.util.Set;

/**
 * The work for one job type. Implementations are CDI beans; the service picks one by the message's
 * {@code job-type} attribute. A handler may throw {@link io.poisonguard.failure.JobFailure} when it
 * knows the failure class; anything else it throws is classified by the configured rules.
 */
public interface JobHandler {

    /** The {@code job-type} attribute value this handler takes. */
    String jobType();

    /**
     * Schema versions this job type has ever had. Pre-flight refuses any other version; a known
     * version the handler can no longer read should fail with a PERMANENT failure instead.
     */
    Set<Integer> knownSchemaVersions();

    void handle(Job job, JobContext context) throws Exception;

    /**
     * Checks the settings this handler depends on. Called once at boot, before any message is received;
     * a mistake must throw a {@code io.quarkus.runtime.configuration.ConfigurationException} naming the
     * key. A setting found broken on first use instead fails every job the same way (a bad deploy).
     */
    default void checkSettings() {
    }
}
