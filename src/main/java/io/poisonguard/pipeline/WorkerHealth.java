package io.poisonguard.pipeline;

import io.poisonguard.observability.Metrics;
import jakarta.inject.Singleton;
import org.jboss.logging.Logger;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Whether this worker process is still fit to run jobs. A handler thread that ignores its
 * interrupt, or an error the JVM may not survive, makes it unfit for good: liveness goes DOWN so the
 * orchestrator replaces the process (its jobs come back to healthy workers).
 */
@Singleton
public class WorkerHealth {
    private static final Logger LOG = Logger.getLogger(WorkerHealth.class);

    /** The reasons kept: the first few are what an on-call needs; later ones add nothing. */
    private static final int KEPT = 5;
    private final List<Reason> reasons = new CopyOnWriteArrayList<>();
    private final Metrics metrics;
    private volatile boolean handlerStuck;

    public WorkerHealth(Metrics metrics) {
        this.metrics = metrics;
    }

    /** A handler thread did not stop after its interrupt: within the stop grace after its deadline, or at shutdown. */
    void stuck(String jobId, int attempt) {
        handlerStuck = true;
        metrics.stuckHandlers().incrementAndGet();
        keep(new Reason("a handler thread (job %s, attempt " + attempt + ") did not stop after its interrupt", jobId));
        LOG.errorf("Job %s attempt %d: the handler did not stop after its interrupt; this worker reports itself not live",
                jobId, attempt);
    }

    /** A handler thread ended with an error the JVM may not survive. */
    public void fatal(String jobId, String errorType) {
        keep(new Reason("a handler (job %s) ended with " + errorType, jobId));
        LOG.errorf("Job %s: the handler ended with %s; this worker reports itself not live so it is replaced", jobId, errorType);
    }

    /** Why the worker is unfit, naming the job it happened on in {@code text}'s one {@code %s}. */
    private record Reason(String text, String jobId) {
        String naming(boolean job) {
            return text.formatted(job ? jobId : "withheld");
        }
    }

    private void keep(Reason why) {
        if (reasons.size() < KEPT) {
            reasons.add(why);
        }
    }

    /**
     * Whether a handler that ignored its interrupt may still run in this worker (one was found stuck; it is never
     * known to have stopped): no job here runs alone any more. Cheap enough for every message.
     */
    public boolean handlerStuck() {
        return handlerStuck;
    }

    /** Why this worker is unfit, if it is. */
    public Optional<String> unfit() {
        return unfit(true);
    }

    /**
     * Why this worker is unfit, naming the jobs it happened on only when {@code namingJobs}: a job id may be any tenant's,
     * so a caller scoped to some tenants is told what happened without whose job it was.
     */
    public Optional<String> unfit(boolean namingJobs) {
        return reasons.isEmpty() ? Optional.empty()
                : Optional.of(String.join("; ", reasons.stream().map(r -> r.naming(namingJobs)).toList()));
    }
}
