package io.poisonguard.pipeline;

import io.poisonguard.observability.Metrics;
import jakarta.inject.Singleton;
import org.jboss.logging.Logger;

import java.time.Duration;
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
    /** Why the carriers are held, once the {@link CarrierWatch} found them so; null before. */
    private volatile String starved;

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

    /**
     * The worker's virtual threads did not run for {@code waited}: something holds every carrier. Kept apart from the other
     * reasons, and said first: it is why the worker does nothing at all, and the others may have filled their list.
     */
    void starved(Duration waited) {
        starved = "the worker's virtual threads did not run for " + waited.toSeconds()
                + "s: code that never yields (a deferred effect spinning on the CPU, a thread pinned while it blocks) holds every"
                + " carrier, and no job in this worker moves";
        LOG.errorf("This worker's virtual threads did not run for %ds: every carrier is held by code that does not yield, and no"
                + " job moves; it reports itself not live so it is replaced (a thread dump names the code)", waited.toSeconds());
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

    /**
     * Why this worker is unfit, naming the jobs it happened on only when {@code namingJobs}: a job id may be any tenant's,
     * so a caller scoped to some tenants is told what happened without whose job it was.
     */
    public Optional<String> unfit(boolean namingJobs) {
        List<String> all = new java.util.ArrayList<>();
        String carriers = starved;
        if (carriers != null) {
            all.add(carriers);
        }
        reasons.forEach(r -> all.add(r.naming(namingJobs)));
        return all.isEmpty() ? Optional.empty() : Optional.of(String.join("; ", all));
    }
}
