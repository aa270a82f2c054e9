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

    public Optional<JobHandler> forType(String jobType) {
        return Optional.ofNullable(byType.get(jobType));
    }

    @Override
    public Optional<Set<Integer>> knownVersions(String jobType) {
        return forType(jobType).map(JobHandler::knownSchemaVersions);
    }
}
