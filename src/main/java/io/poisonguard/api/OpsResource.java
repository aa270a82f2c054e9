package io.poisonguard.api;

import io.poisonguard.audit.AuditAction;
import io.poisonguard.audit.AuditEntry;
import io.poisonguard.audit.AuditLog;
import io.poisonguard.audit.AuditPage;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.ledger.JobKey;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.ledger.LedgerStore;
import io.poisonguard.quarantine.QuarantinePage;
import io.poisonguard.quarantine.QuarantineQuery;
import io.poisonguard.quarantine.QuarantineRecord;
import io.poisonguard.quarantine.QuarantineStatus;
import io.poisonguard.quarantine.QuarantineStore;
import io.poisonguard.replay.ActionOutcome;
import io.poisonguard.replay.BulkReplay;
import io.poisonguard.replay.BulkReplays;
import io.poisonguard.replay.BulkRequest;
import io.poisonguard.replay.CodeVersion;
import io.poisonguard.replay.OperatorActions;
import io.poisonguard.tenants.Tenant;
import io.poisonguard.tenants.TenantDirectory;
import io.poisonguard.tenants.TenantStatus;
import io.quarkus.security.identity.SecurityIdentity;
import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.DefaultValue;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.openapi.annotations.enums.SchemaType;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;

import java.time.Clock;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The operator API: list, inspect, dry-run, replay, resolve, audit, tenants. Every request needs a
 * signed JWT (401 without one); roles decide what it may do (403 otherwise). Payloads appear only on
 * the payload-reader path, and every such view is audited.
 */
@Path("/ops")
@Produces(MediaType.APPLICATION_JSON)
@Consumes(MediaType.APPLICATION_JSON)
public class OpsResource {
    private final LedgerStore ledger;
    private final QuarantineStore quarantine;
    private final OperatorActions actions;
    private final BulkReplays bulk;
    private final AuditLog audit;
    private final TenantDirectory tenants;
    private final SecurityIdentity identity;
    private final Clock clock;
    private final CodeVersion codeVersion;
    private final io.poisonguard.triage.TriageActions triage;

    public OpsResource(LedgerStore ledger, QuarantineStore quarantine, OperatorActions actions, BulkReplays bulk, AuditLog audit,
                       TenantDirectory tenants, SecurityIdentity identity, Clock clock, CodeVersion codeVersion,
                       io.poisonguard.triage.TriageActions triage) {
        this.triage = triage;
        this.ledger = ledger;
        this.quarantine = quarantine;
        this.actions = actions;
        this.bulk = bulk;
        this.audit = audit;
        this.tenants = tenants;
        this.identity = identity;
        this.clock = clock;
        this.codeVersion = codeVersion;
    }

    /** Body of a replay request. */
    public record ReplayRequest(String reason, Boolean dryRun) {
    }

    /** Body of a resolve request. */
    public record ResolveRequest(String reason) {
    }

    /** Body of an assignment: who takes the job (null or blank unassigns) and why. */
    public record AssignRequest(String assignee, String reason) {
    }

    /** Body of a payload view: why the payload is looked at, audited with the view. */
    public record ViewRequest(String reason) {
    }

    /** Body of a note. */
    public record NoteRequest(String text) {
    }

    /** Body of a bulk replay request. */
    public record BulkReplayRequest(String failureClass, String tenant, String jobType, Integer limit, String reason, Boolean dryRun,
                                    String after) {
    }

    /** Body of a tenant change. */
    public record TenantRequest(String status, Set<String> jobTypes, String reason) {
    }

    /** What {@code ?tenant=} says for a job of no tenant (one that named no valid tenant): no tenant's name can be it. */
    static final String NO_TENANT = "-";

    /**
     * The job an operator names: {@code ?tenant=} when given (it must be one of the token's tenants, else
     * 403); otherwise the one tenant of the token's with a live quarantine record for the job id, or the
     * token's only tenant. Two tenants' jobs may share an id: then the tenant must be named ({@value #NO_TENANT} for a
     * job of no tenant). Another tenant's job is invisible: it answers as if it did not exist.
     */

    private JobKey keyOf(String jobId, String tenant) {
        requireJobId(jobId);
        TenantScope scope = scope();
        if (NO_TENANT.equals(tenant)) {
            // A job that named no valid tenant: every tenant's business, so only a token of every tenant may name it.
            if (!scope.permits(null)) {
                throw new Problem(403, "Forbidden", "a job of no tenant is reached with a token of every tenant only", null);
            }
            return new JobKey(null, jobId);
        }
        if (tenant != null && !tenant.isEmpty()) {
            return new JobKey(inScope(tenant), jobId);
        }
        List<JobKey> keys = quarantine.keysOf(jobId, clock.instant()).stream().filter(k -> scope.permits(k.tenant())).toList();
        if (keys.size() == 1) {
            return keys.get(0);
        }
        if (keys.isEmpty()) {
            if (scope.single().isPresent()) {
                return new JobKey(scope.single().get(), jobId);
            }
            throw new Problem(404, "Not found", "no live quarantine record for job " + jobId
                    + " (for a job that was never quarantined, name its tenant with ?tenant=)", jobId);
        }
        throw new Problem(409, "Ambiguous job id", "job id " + jobId + " is quarantined for " + keys.size() + " tenants ("
                + String.join(", ", keys.stream().map(k -> k.tenant() == null ? NO_TENANT : k.tenant()).sorted().toList())
                + "); name one with ?tenant= (" + NO_TENANT + " names no tenant)", jobId);
    }

    /** The tenants the caller's token covers (its {@code tenants} claim, which {@link TokenPolicy} requires). */
    private TenantScope scope() {
        return TenantScope.of(identity);
    }

    /** A tenant the caller names: well formed (else 400) and one of the token's (else 403). */
    private String inScope(String tenant) {
        requireTenant(tenant);
        if (!scope().permits(tenant)) {
            throw new Problem(403, "Forbidden", "this token's tenants claim does not cover tenant " + tenant, null);
        }
        return tenant;
    }

    /**
     * The tenant a listing is narrowed to: the one named; else none for a token that covers every tenant;
     * else the token's only tenant; a token of several tenants must name one (400).
     */
    private Optional<String> listingTenant(String tenant) {
        if (tenant != null && !tenant.isEmpty()) {
            return Optional.of(inScope(tenant));
        }
        TenantScope scope = scope();
        if (scope.everyTenant()) {
            return Optional.empty();
        }
        return Optional.of(scope.single().orElseThrow(() -> Problem.badRequest("name a tenant with ?tenant= (this token covers "
                + scope.tenants().size() + " tenants: " + scope + ")")));
    }

    /** More job types than this on one tenant would outgrow its directory item. */
    static final int MAX_TENANT_JOB_TYPES = 200;

    @GET
    @Path("jobs/{jobId}")
    @RolesAllowed({Roles.VIEWER, Roles.OPERATOR})
    public LedgerRecord job(@PathParam("jobId") String jobId, @QueryParam("tenant") String tenant) {
        return ledger.findOwn(keyOf(jobId, tenant)).orElseThrow(() -> new Problem(404, "Not found", "no ledger record for job " + jobId, jobId));
    }

    @GET
    @Path("quarantine")
    @RolesAllowed({Roles.VIEWER, Roles.OPERATOR})
    public QuarantinePage list(@QueryParam("failureClass") String failureClass, @QueryParam("tenant") String tenant,
                               @QueryParam("jobType") String jobType, @QueryParam("status") @DefaultValue("QUARANTINED") String status,
                               @QueryParam("olderThan") String olderThan, @QueryParam("limit") @DefaultValue("50")
                               @Parameter(schema = @Schema(type = SchemaType.INTEGER, minimum = "1", maximum = "500")) String limitParam,
                               @QueryParam("cursor") String cursor) {
        int limit = intParam("limit", limitParam, 1, 500);
        if (cursor != null && cursor.length() > 2048) {
            throw Problem.badRequest("cursor is not valid for this listing");
        }
        Optional<QuarantineStatus> st = status.equalsIgnoreCase("any") ? Optional.empty() : Optional.of(enumOf(QuarantineStatus.class, status, "status"));
        try {
            return quarantine.list(new QuarantineQuery(Optional.ofNullable(failureClass).map(c -> failureClass(c)), listingTenant(tenant),
                    Optional.ofNullable(jobType), st, Optional.ofNullable(olderThan).map(this::quarantinedBefore), limit,
                    Optional.ofNullable(cursor)), clock.instant());
        } catch (IllegalArgumentException e) {
            throw Problem.badRequest(e.getMessage());
        }
    }

    @GET
    @Path("quarantine/{jobId}")
    @RolesAllowed({Roles.VIEWER, Roles.OPERATOR})
    public Map<String, Object> show(@PathParam("jobId") String jobId, @QueryParam("tenant") String tenant) {
        JobKey key = keyOf(jobId, tenant);
        QuarantineRecord record = quarantine.find(key)
                .orElseThrow(() -> new Problem(404, "Not found", "no live quarantine record for job " + jobId, jobId));
        Map<String, Object> view = new LinkedHashMap<>();
        view.put("record", record);
        view.put("triageState", record.triageState().name());
        view.put("ledgerState", ledger.findOwn(key).map(r -> r.state().name()).orElse(null));
        view.put("audit", audit.forTenantsJob(java.util.Collections.singletonList(key.tenant()), jobId, 100).stream().filter(visible()).toList());
        return view;
    }

    @GET
    @Path("quarantine/{jobId}/payload")
    @RolesAllowed(Roles.PAYLOAD_READER)
    public Map<String, Object> payload(@PathParam("jobId") String jobId, @QueryParam("tenant") String tenant,
                                       @QueryParam("reason") String reason) {
        ActionOutcome outcome = actions.payload(keyOf(jobId, tenant), actor(), requireReason(reason));
        return body(outcome, false);
    }

    /** The payload view with its reason in the body, not the URL (which proxies and access logs keep): the same as the GET. */
    @POST
    @Path("quarantine/{jobId}/payload")
    @RolesAllowed(Roles.PAYLOAD_READER)
    public Map<String, Object> payloadByPost(@PathParam("jobId") String jobId, @QueryParam("tenant") String tenant, ViewRequest request) {
        return payload(jobId, tenant, request == null ? null : request.reason());
    }

    @POST
    @Path("quarantine/{jobId}/replay")
    @RolesAllowed({Roles.VIEWER, Roles.OPERATOR})
    public Response replay(@PathParam("jobId") String jobId, @QueryParam("tenant") String tenant, ReplayRequest request) {
        ReplayRequest r = request == null ? new ReplayRequest(null, null) : request;
        JobKey key = keyOf(jobId, tenant);
        if (Boolean.FALSE.equals(r.dryRun())) {
            requireOperator();
            ActionOutcome outcome = actions.replay(key, actor(), requireReason(r.reason()));
            return Response.status(outcome instanceof ActionOutcome.Replayed ? 202 : 200).entity(body(outcome, false)).build();
        }
        return Response.ok(body(actions.dryRun(key), true)).build();
    }

    @POST
    @Path("quarantine/{jobId}/resolve")
    @RolesAllowed(Roles.OPERATOR)
    public Map<String, Object> resolve(@PathParam("jobId") String jobId, @QueryParam("tenant") String tenant, ResolveRequest request) {
        return body(actions.resolve(keyOf(jobId, tenant), actor(), requireReason(request == null ? null : request.reason())), false);
    }

    @POST
    @Path("quarantine/{jobId}/acknowledge")
    @Consumes(MediaType.WILDCARD)
    @RolesAllowed(Roles.OPERATOR)
    public Map<String, Object> acknowledge(@PathParam("jobId") String jobId, @QueryParam("tenant") String tenant) {
        return triaged(triage.acknowledge(keyOf(jobId, tenant), actor()), jobId);
    }

    @POST
    @Path("quarantine/{jobId}/assign")
    @RolesAllowed(Roles.OPERATOR)
    public Map<String, Object> assign(@PathParam("jobId") String jobId, @QueryParam("tenant") String tenant, AssignRequest request) {
        if (request == null) {
            throw Problem.badRequest("a JSON body with assignee (blank to unassign) and reason is required");
        }
        String assignee = request.assignee() == null || request.assignee().isBlank() ? null : request.assignee().strip();
        if (assignee != null && !assignee.matches("[\\p{L}\\p{N}._@ -]{1,128}")) {
            throw Problem.badRequest("assignee is 1 to 128 letters, digits, spaces, '.', '_', '@' or '-'");
        }
        return triaged(triage.assign(keyOf(jobId, tenant), actor(), assignee, requireReason(request.reason())), jobId);
    }

    @POST
    @Path("quarantine/{jobId}/notes")
    @RolesAllowed(Roles.OPERATOR)
    public Map<String, Object> note(@PathParam("jobId") String jobId, @QueryParam("tenant") String tenant, NoteRequest request) {
        if (request == null || request.text() == null || request.text().isBlank()) {
            throw Problem.badRequest("a note has text");
        }
        if (request.text().length() > io.poisonguard.triage.TriageActions.NOTE_CHARS
                || request.text().getBytes(java.nio.charset.StandardCharsets.UTF_8).length > io.poisonguard.triage.TriageActions.NOTE_BYTES) {
            throw Problem.badRequest("a note is at most " + io.poisonguard.triage.TriageActions.NOTE_CHARS + " characters and "
                    + io.poisonguard.triage.TriageActions.NOTE_BYTES + " bytes of UTF-8");
        }
        return triaged(triage.note(keyOf(jobId, tenant), actor(), request.text()), jobId);
    }

    private Map<String, Object> triaged(io.poisonguard.triage.TriageActions.Outcome outcome, String jobId) {
        return switch (outcome) {
            case io.poisonguard.triage.TriageActions.Outcome.Done d -> {
                Map<String, Object> b = new LinkedHashMap<>();
                b.put("jobId", jobId);
                b.put("triageState", d.record().triageState().name());
                b.put("triage", d.record().triage());
                yield b;
            }
            case io.poisonguard.triage.TriageActions.Outcome.NotFound n ->
                    throw new Problem(404, "Not found", "no live quarantine record for job " + jobId, jobId);
            case io.poisonguard.triage.TriageActions.Outcome.Refused r -> throw new Problem(409, "Conflict", r.why(), jobId);
        };
    }

    @POST
    @Path("replays")
    @RolesAllowed({Roles.VIEWER, Roles.OPERATOR})
    public Response bulkReplay(BulkReplayRequest request) {
        if (request == null) {
            throw Problem.badRequest("a JSON body is required");
        }
        int limit = request.limit() == null ? 50 : request.limit();
        if (limit < 1) {
            throw Problem.badRequest("limit must be positive");
        }
        if (request.tenant() == null || request.failureClass() == null) {
            throw Problem.badRequest("a bulk replay names one tenant and one failureClass: its canary answers for exactly those");
        }
        if (request.after() != null && (request.after().isEmpty() || request.after().length() > 2048)) {
            throw Problem.badRequest("after is not a cursor of this listing");
        }
        BulkRequest selection = new BulkRequest(inScope(request.tenant()), failureClass(request.failureClass()),
                Optional.ofNullable(request.jobType()), limit, io.poisonguard.failure.Scrubber.secrets(request.reason(), 500),
                Optional.ofNullable(request.after()));
        if (!Boolean.FALSE.equals(request.dryRun())) {
            io.poisonguard.replay.BulkReplays.Plan plan;
            try {
                plan = bulk.plan(selection);
            } catch (IllegalArgumentException e) {
                throw Problem.badRequest("after is not a cursor of this listing");
            }
            // complete: false when the listing goes on past this selection (its read bound, or the limit): a batch given
            // "after": next takes the jobs past these.
            Map<String, Object> answer = new java.util.LinkedHashMap<>();
            answer.put("dryRun", true);
            answer.put("jobs", plan.jobs().stream().map(o -> body(o, true)).toList());
            answer.put("complete", plan.complete());
            if (plan.next() != null) {
                answer.put("next", plan.next());
            }
            answer.put("jobTypes", plan.jobTypes());
            if (request.jobType() == null && plan.jobTypes().size() > 1) {
                // The real run refuses this selection: say so here, before the operator confirms it.
                answer.put("refusal", new io.poisonguard.replay.BulkReplays.MixedJobTypes(plan.jobTypes()).getMessage());
            }
            return Response.ok(answer).build();
        }
        requireOperator();
        requireReason(request.reason());
        BulkReplay batch;
        try {
            batch = bulk.start(selection, actor());
        } catch (io.poisonguard.replay.BulkReplays.MixedJobTypes mixed) {
            throw Problem.badRequest(mixed.getMessage());
        } catch (IllegalArgumentException e) {
            throw Problem.badRequest("after is not a cursor of this listing");
        }
        return Response.status(batch.status() == BulkReplay.Status.NOTHING_TO_REPLAY ? 200 : 202).entity(batch).build();
    }

    @GET
    @Path("replays/{id}")
    @RolesAllowed({Roles.VIEWER, Roles.OPERATOR})
    public BulkReplay bulkStatus(@PathParam("id") String id) {
        if (id.length() > 64) {
            throw Problem.badRequest("a bulk replay id is at most 64 characters");
        }
        return bulk.find(id).filter(b -> scope().permits(b.tenant()))
                .orElseThrow(() -> new Problem(404, "Not found", "no bulk replay " + id, null));
    }

    @GET
    @Path("audit")
    @RolesAllowed({Roles.VIEWER, Roles.OPERATOR})
    public AuditPage audit(@QueryParam("jobId") String jobId, @QueryParam("tenant") String tenant,
                           @QueryParam("limit") @DefaultValue("100")
                           @Parameter(schema = @Schema(type = SchemaType.INTEGER, minimum = "1", maximum = "1000")) String limitParam,
                           @QueryParam("cursor") String cursor) {
        int limit = intParam("limit", limitParam, 1, 1000);
        if (jobId != null && jobId.length() > 400) {
            throw Problem.badRequest("jobId is too long");
        }
        if (cursor != null && cursor.length() > 2048) {
            throw Problem.badRequest("cursor is not valid for this listing");
        }
        if (jobId != null) {
            return new AuditPage(jobAudit(jobId, tenant, limit), null);
        }
        try {
            return audit.recent(listingTenant(tenant), limit, Optional.ofNullable(cursor));
        } catch (IllegalArgumentException e) {
            throw Problem.badRequest(e.getMessage());
        }
    }

    /** Most tenants a token may cover for its job audit view without naming one (one read per tenant). */
    static final int JOB_AUDIT_TENANTS = 20;

    /**
     * A job id's newest audit entries the caller may see: of the tenant named ({@value #NO_TENANT} for the job of no
     * tenant, a token of every tenant only), else of each of the token's tenants, each read as that tenant's job (so no
     * other tenant's entries under the id crowd them out), else, for a token of every tenant, of every tenant.
     */
    private List<AuditEntry> jobAudit(String jobId, String tenant, int limit) {
        TenantScope scope = scope();
        if (NO_TENANT.equals(tenant)) {
            if (!scope.permits(null)) {
                throw new Problem(403, "Forbidden", "a job of no tenant is reached with a token of every tenant only", null);
            }
            return audit.forTenantsJob(java.util.Collections.singletonList(null), jobId, limit);
        }
        if (tenant != null && !tenant.isEmpty()) {
            return audit.forTenantsJob(List.of(inScope(tenant)), jobId, limit);
        }
        if (scope.everyTenant()) {
            return audit.forJob(jobId, visible(), limit);
        }
        if (scope.tenants().size() > JOB_AUDIT_TENANTS) {
            throw Problem.badRequest("this token covers " + scope.tenants().size() + " tenants; name one with ?tenant= to read a job's audit entries");
        }
        return audit.forTenantsJob(scope.tenants(), jobId, limit);
    }

    /** The entries the caller's token may see: of its tenants, and those on no tenant only for a token of every tenant. */
    private java.util.function.Predicate<AuditEntry> visible() {
        TenantScope scope = scope();
        return e -> e.tenant() == null ? scope.everyTenant() : scope.permits(e.tenant());
    }

    @GET
    @Path("tenants/{tenant}")
    @RolesAllowed({Roles.VIEWER, Roles.OPERATOR, Roles.ADMIN})
    public Tenant tenant(@PathParam("tenant") String tenant) {
        inScope(tenant);
        return tenants.find(tenant).orElseThrow(() -> new Problem(404, "Not found", "tenant " + tenant + " is not in the directory", null));
    }

    @PUT
    @Path("tenants/{tenant}")
    @RolesAllowed(Roles.ADMIN)
    public Tenant putTenant(@PathParam("tenant") String tenant, TenantRequest request) {
        if (request == null || request.status() == null) {
            throw Problem.badRequest("status (ACTIVE or SUSPENDED) is required");
        }
        inScope(tenant);
        Set<String> jobTypes = request.jobTypes() == null ? Set.of() : request.jobTypes();
        if (jobTypes.size() > MAX_TENANT_JOB_TYPES) {
            throw Problem.badRequest("a tenant may name at most " + MAX_TENANT_JOB_TYPES + " job types");
        }
        if (jobTypes.stream().anyMatch(jt -> jt == null || io.poisonguard.admission.Preflight.recordableJobType(Optional.of(jt)) == null)) {
            throw Problem.badRequest("job types are 1 to 64 letters, digits, '.', '_', ':' or '-', starting with a letter or digit");
        }
        String reason = requireReason(request.reason());
        Tenant t = new Tenant(tenant, enumOf(TenantStatus.class, request.status(), "status"),
                request.jobTypes() == null ? Set.of() : request.jobTypes(), clock.instant(), actor());
        tenants.put(t);
        audit.append(new AuditEntry("tenant:" + tenant, tenant, clock.instant(), actor(), AuditAction.TENANT_CHANGE, reason, codeVersion.value(),
                null, null, "SET", t.status() + " " + t.jobTypes().stream().sorted().toList()));
        return t;
    }

    private Map<String, Object> body(ActionOutcome outcome, boolean dryRun) {
        Map<String, Object> b = new LinkedHashMap<>();
        b.put("jobId", outcome.jobId());
        switch (outcome) {
            case ActionOutcome.Replayed r -> {
                b.put("outcome", "REPLAYED");
                b.put("generation", r.generation());
                b.put("attempt", r.attempt());
            }
            case ActionOutcome.WouldReplay w -> {
                b.put("outcome", "WOULD_REPLAY");
                b.put("generation", w.generation());
                b.put("attempt", w.attempt());
            }
            case ActionOutcome.Resolved r -> {
                b.put("outcome", "RESOLVED");
                b.put("discardedCopies", r.discardedCopies());
                if (r.unfinished() != null) {
                    b.put("unfinished", r.unfinished());
                }
            }
            case ActionOutcome.Payload p -> {
                b.put("outcome", "PAYLOAD");
                b.put("body", p.body());
                Map<String, String> attrs = new LinkedHashMap<>();
                p.attributes().forEach((k, v) -> attrs.put(k, v.stringValue()));
                b.put("attributes", attrs);
            }
            case ActionOutcome.Refused r -> {
                if (!dryRun) {
                    throw new Problem(r.refusal().status(), r.refusal().name(), r.detail(), r.jobId());
                }
                b.put("outcome", "REFUSED_" + r.refusal());
                b.put("detail", r.detail());
            }
            case ActionOutcome.Unrecoverable u -> {
                if (!dryRun) {
                    throw new Problem(410, "UNRECOVERABLE", u.detail(), u.jobId());
                }
                b.put("outcome", "UNRECOVERABLE");
                b.put("detail", u.detail());
            }
        }
        return b;
    }

    private String actor() {
        return Actor.of(identity);
    }

    /** A job id in a path: what admission accepts as one, or 400. */
    private static void requireJobId(String jobId) {
        if (!io.poisonguard.admission.JobIdentity.usable(jobId)) {
            throw Problem.badRequest("a job id is 1 to " + io.poisonguard.admission.JobIdentity.MAX_JOB_ID_LENGTH
                    + " characters without control characters");
        }
    }

    private static void requireTenant(String tenant) {
        if (!JobKey.validTenant(tenant)) {
            throw Problem.badRequest("tenant must be " + JobKey.TENANT_RULE);
        }
    }

    private void requireOperator() {
        if (!identity.hasRole(Roles.OPERATOR)) {
            throw new Problem(403, "Forbidden", "only the operator role may replay; a dry run needs no more than viewer", null);
        }
    }

    static String requireReason(String reason) {
        if (reason == null || reason.isBlank()) {
            throw Problem.badRequest("a reason is required: say why this is safe");
        }
        if (reason.length() > 500) {
            throw Problem.badRequest("reason must be at most 500 characters");
        }
        // Kept for ever in the audit trail and shown to every viewer of the tenant: a pasted credential is masked.
        return io.poisonguard.failure.Scrubber.secrets(reason.strip(), 500);
    }

    /**
     * A whole-number query parameter from {@code min} to {@code max}, or 400 naming it. It is taken as text and parsed here:
     * a conversion the framework made would answer a value that is not a number, or past what an int holds, with 404. (Its
     * OpenAPI schema still says integer.)
     */
    private static int intParam(String name, String value, int min, int max) {
        long n;
        try {
            n = Long.parseLong(value.strip());
        } catch (NumberFormatException e) {
            throw Problem.badRequest(name + " must be a whole number between " + min + " and " + max);
        }
        if (n < min || n > max) {
            throw Problem.badRequest(name + " must be between " + min + " and " + max);
        }
        return (int) n;
    }

    private static FailureClass failureClass(String s) {
        return enumOf(FailureClass.class, s.replace('-', '_'), "failureClass");
    }

    private static <E extends Enum<E>> E enumOf(Class<E> type, String value, String field) {
        try {
            return Enum.valueOf(type, value.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw Problem.badRequest(field + " must be one of " + List.of(type.getEnumConstants()));
        }
    }

    /** Now minus {@code olderThan}: a duration reaching back past what an instant can hold is refused too. */
    private Instant quarantinedBefore(String olderThan) {
        try {
            return clock.instant().minus(duration(olderThan));
        } catch (DateTimeException | ArithmeticException e) {
            throw Problem.badRequest("olderThan is too long: it reaches back past the earliest instant");
        }
    }

    private static Duration duration(String s) {
        try {
            return Duration.parse(s.startsWith("P") ? s : "PT" + s.toUpperCase(Locale.ROOT));
        } catch (DateTimeParseException e) {
            throw Problem.badRequest("olderThan must be a duration such as 30m, 2h or P1D");
        }
    }
}
