package io.poisonguard.handler;

import io.poisonguard.admission.SchemaCatalog;
import jakarta.inject.Singleton;
import jakarta.enterprise.inject.Any;
import jakarta.enterprise.inject.Instance;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/** Every {@link JobHandler} bean, by job type. Two handlers for one type refuse to boot. */
@Singleton
public class JobHandlers implements SchemaCatalog {
    private final Map<String, JobHandler> byType = new HashMap<>();

    public JobHandlers(@Any Instance<JobHandler> handlers) {
        for (JobHandler h : handlers) {
            JobHandler previous = byType.putIfAbsent(h.jobType(), h);
            if (previous != null) {
                throw new IllegalStateException("two handlers take job type '" + h.jobType() + "': "
                        + previous.getClass().getName() + " and " + h.getClass().getName());
            }
        }
    }

    /** Boot: every handler checks its settings; the first mistake stops the service. */
    public void checkSettings() {
        byType.values().forEach(JobHandler::checkSettings);
    }

    /** The job types some handler of this build takes. */
    public Set<String> types() {
        return Set.copyOf(byType.keySet());
    }

    /**
     * Boot: per-type settings (each key with the types it names) must name job types some handler of this build takes.
     * A type no handler takes is a misspelling that would silently leave the job on the default (a 5-minute deadline that
     * quarantines a long job as TIMEOUT, or poison of a disposable type quarantined and paged).
     */
    public static void checkTypesNamed(Set<String> handled, Map<String, Set<String>> namedByKey) {
        namedByKey.forEach((key, types) -> {
            for (String type : types) {
                if (!handled.contains(type)) {
                    throw new io.quarkus.runtime.configuration.ConfigurationException(key + " names job type '" + type
                            + "', which no handler of this build takes (handlers: " + new java.util.TreeSet<>(handled) + ")", Set.of(key));
                }
            }
        });
    }

    public Optional<JobHandler> forType(String jobType) {
        return Optional.ofNullable(byType.get(jobType));
    }

    @Override
    public Optional<Set<Integer>> knownVersions(String jobType) {
        return forType(jobType).map(JobHandler::knownSchemaVersions);
    }
}
