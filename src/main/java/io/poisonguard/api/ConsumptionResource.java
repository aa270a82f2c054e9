package io.poisonguard.api;

import io.poisonguard.audit.AuditAction;
import io.poisonguard.audit.AuditEntry;
import io.poisonguard.audit.AuditLog;
import io.poisonguard.pipeline.ConsumptionGate;
import io.poisonguard.pipeline.FleetGuards;
import io.poisonguard.pipeline.SystemicGuard;
import io.poisonguard.pipeline.WorkerHealth;
import io.poisonguard.replay.CodeVersion;
import io.poisonguard.systemic.SystemicWatch;
import io.quarkus.security.identity.SecurityIdentity;
import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

import io.poisonguard.ladder.DurationText;

import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Whether this worker consumes, and why not: breakers, the systemic-failure guard (with the
 * signature and sample jobs that tripped it), and its own fitness. An operator who has fixed a
 * systemic fault resumes consumption here, with a reason that goes into the audit trail.
 */
@Path("/ops/consumption")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class ConsumptionResource {
    static final String AUDIT_KEY = AuditLog.CONSUMPTION;
    private static final org.jboss.logging.Logger LOG = org.jboss.logging.Logger.getLogger(ConsumptionResource.class);

    private final ConsumptionGate gate;
    private final SystemicGuard guard;
    private final WorkerHealth health;
    private final AuditLog audit;
    private final SecurityIdentity identity;
    private final Clock clock;
    private final CodeVersion codeVersion;
    private final java.time.Duration fleetCheck;
    private final FleetGuards fleetGuards;

    public ConsumptionResource(ConsumptionGate gate, SystemicGuard guard, WorkerHealth health, AuditLog audit, SecurityIdentity identity,
                               Clock clock, CodeVersion codeVersion, io.poisonguard.config.PoisonGuardConfig config,
                               FleetGuards fleetGuards) {
        this.fleetGuards = fleetGuards;
        this.gate = gate;
        this.guard = guard;
        this.health = health;
        this.audit = audit;
        this.identity = identity;
        this.clock = clock;
        this.codeVersion = codeVersion;
        this.fleetCheck = config.systemic().fleetCheckInterval();
    }

    /** Body of a resume request. */
    public record ResumeRequest(String reason) {
    }

    @GET
    @RolesAllowed({Roles.VIEWER, Roles.OPERATOR})
    public Map<String, Object> state() {
        Map<String, Object> b = new LinkedHashMap<>();
        b.put("admit", gate.admit().name());
        b.put("breakers", gate.states());
        b.put("systemic", guard.admit().name());
        guard.trip().ifPresent(t -> b.put("trip", trip(t, TenantScope.of(identity))));
        // Its reasons name the jobs they happened on, which may be any tenant's: as the trip's sample jobs, only for a token
        // of every tenant.
        b.put("worker", health.unfit(TenantScope.of(identity).everyTenant()).orElse("fit"));
        b.put("fleet", fleet());
        return b;
    }

    /**
     * Every worker whose systemic guard is tripped, as each posted it (this answer comes from one worker behind the address).
     * Worker names and causes only for a token of every tenant, as the trip's sample jobs; others get the count.
     */
    private Map<String, Object> fleet() {
        Map<String, Object> f = new LinkedHashMap<>();
        try {
            List<FleetGuards.Tripped> tripped = fleetGuards.tripped();
            f.put("trippedCount", tripped.size());
            if (TenantScope.of(identity).everyTenant()) {
                f.put("trippedWorkers", tripped.stream().map(t -> {
                    Map<String, Object> w = new LinkedHashMap<>();
                    w.put("worker", t.worker());
                    w.put("since", String.valueOf(t.since()));
                    w.put("cause", t.cause());
                    w.put("heardAt", String.valueOf(t.heardAt()));
                    return w;
                }).toList());
            }
        } catch (RuntimeException e) {
            LOG.warnf("The fleet's guard board could not be read (%s)", e.getClass().getSimpleName());
            f.put("unavailable", "the fleet's guard board did not answer (" + e.getClass().getSimpleName() + "): only this worker's"
                    + " guard is known");
        }
        return f;
    }

    @POST
    @Path("resume")
    @RolesAllowed(Roles.OPERATOR)
    public Map<String, Object> resume(ResumeRequest request) {
        String reason = OpsResource.requireReason(request == null ? null : request.reason());
        if (!TenantScope.of(identity).everyTenant()) {
            // The guard stops the whole worker, every tenant's jobs: clearing it is not one tenant's call.
            throw new Problem(403, "Forbidden", "resuming consumption takes a token of every tenant (tenants: \"*\"): the systemic"
                    + " guard holds every tenant's jobs", null);
        }
        String actor = Actor.of(identity);
        // The entry is dated when the guard is cleared, not when the audit trail takes it (which may be seconds later): every
        // other worker clears a trip from before this instant, and a trip after it is a fault the operator has not seen.
        Instant at = clock.instant().truncatedTo(ChronoUnit.MILLIS);
        Optional<SystemicWatch.Trip> cleared = guard.resume(actor);
        boolean wasTripped = cleared.isPresent();
        String signature = cleared.map(t -> t.signature() == null ? t.cause() : t.signature().describe()).orElse(null);
        boolean audited = true;
        try {
            audit.append(new AuditEntry(AUDIT_KEY, null, at, actor, AuditAction.RESUME_CONSUMPTION, reason, codeVersion.value(),
                    null, null, wasTripped ? "RESUMED" : "NOT_TRIPPED", signature));
        } catch (RuntimeException e) {
            if (!wasTripped) {
                // Nothing changed that the answer would hide: the caller learns the audit trail did not answer (503).
                throw e;
            }
            // The guard is cleared already: the answer must say so (a retry would answer "not tripped"), and the lost entry
            // is logged, as a replay that went out is.
            audited = false;
            LOG.errorf("Consumption resumed by %s but its audit entry was not written (%s)", actor, e.getClass().getSimpleName());
        }
        if (audited) {
            // Only a resume the other workers can read clears their trips on the board: one not audited may not reach them.
            fleetGuards.resumed(at);
        }
        Map<String, Object> b = state();
        b.put("resumed", wasTripped);
        b.put("audited", audited);
        // The request reached one worker; the others learn of it from the audit entry (FleetResume).
        b.put("otherWorkers", audited
                ? "every other worker whose guard tripped before this resume reads it within " + DurationText.human(fleetCheck)
                        + " and resumes"
                : "may not have been told, since the audit trail did not confirm the entry: each resumes on its next successful"
                        + " probe, or resume again once the audit trail answers");
        return b;
    }

    /**
     * The trip as {@code scope} may see it. Its sample job ids name no tenant and may be any tenant's, so only a token
     * of every tenant sees them (as with audit entries on no tenant).
     */
    private static Map<String, Object> trip(SystemicWatch.Trip t, TenantScope scope) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("cause", t.cause());
        m.put("signature", t.signature() == null ? null : t.signature().describe());
        m.put("jobTypes", t.jobTypes());
        if (scope.everyTenant()) {
            m.put("sampleJobIds", t.sampleJobIds());
        }
        m.put("at", t.at().toString());
        return m;
    }
}
