package io.poisonguard.api;

import io.poisonguard.observability.Metrics;
import io.poisonguard.observability.RejectionHistory;
import io.poisonguard.owners.Owner;
import io.poisonguard.owners.OwnerMap;
import io.poisonguard.owners.ReviewStage;
import io.poisonguard.pipeline.ConsumptionGate;
import io.poisonguard.pipeline.LedgerGate;
import io.poisonguard.pipeline.SystemicGuard;
import io.poisonguard.quarantine.QuarantinePage;
import io.poisonguard.quarantine.QuarantineQuery;
import io.poisonguard.quarantine.QuarantineRecord;
import io.poisonguard.quarantine.QuarantineStatus;
import io.poisonguard.quarantine.QuarantineStore;
import io.quarkus.security.identity.SecurityIdentity;
import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * What the console's overview shows, in one call: the waiting quarantine by class, tenant and owner (count and
 * oldest age), the overdue records, consumption (breakers, the systemic guard, the ledger gate) and admission
 * rejections per minute. Reads at most {@link #MAX_RECORDS} records (the token's tenants only) and says whether
 * that was all of them.
 */
@Path("/ops/overview")
@Produces(MediaType.APPLICATION_JSON)
public class OverviewResource {
    static final int MAX_RECORDS = 2_000;
    /**
     * The most listing pages one overview reads beyond one for each of the token's tenants, each bounded by
     * {@code ops-api.listing-read-budget}: records no longer
     * waiting (replayed, resolved, kept until their expiry) match nothing here, and without this bound a table full of
     * them was read whole for one request.
     */
    static final int MAX_PAGES = 10;
    /** The group of the jobs that named no valid tenant: no tenant can be named so. */
    static final String NO_TENANT = "(no tenant)";

    private final QuarantineStore quarantine;
    private final OwnerMap owners;
    private final ConsumptionGate gate;
    private final SystemicGuard guard;
    private final LedgerGate ledgerGate;
    private final Metrics metrics;
    private final SecurityIdentity identity;
    private final Clock clock;

    private final io.poisonguard.pipeline.FleetGuards fleet;

    public OverviewResource(QuarantineStore quarantine, OwnerMap owners, ConsumptionGate gate, SystemicGuard guard, LedgerGate ledgerGate,
                            Metrics metrics, SecurityIdentity identity, Clock clock, io.poisonguard.pipeline.FleetGuards fleet) {
        this.fleet = fleet;
        this.quarantine = quarantine;
        this.owners = owners;
        this.gate = gate;
        this.guard = guard;
        this.ledgerGate = ledgerGate;
        this.metrics = metrics;
        this.identity = identity;
        this.clock = clock;
    }

    /** The waiting records read for an overview, and whether they are all of them. */
    record Waiting(List<QuarantineRecord> records, boolean complete) {
    }

    /**
     * The waiting records of {@code tenants} (one empty member: every tenant's), at most {@link #MAX_RECORDS} of them and
     * at most one listing page per tenant plus {@link #MAX_PAGES}: every tenant is owed its first page, and the rest are
     * shared in the tenants' order.
     */
    static Waiting waiting(QuarantineStore quarantine, List<Optional<String>> tenants, Instant now) {
        List<QuarantineRecord> waiting = new ArrayList<>();
        boolean complete = true;
        int pages = 0;
        int budget = MAX_PAGES + tenants.size();
        for (int t = 0; t < tenants.size(); t++) {
            Optional<String> tenant = tenants.get(t);
            // What this tenant may read: the budget less the first page each tenant after it is owed.
            int until = budget - (tenants.size() - 1 - t);
            if (waiting.size() >= MAX_RECORDS) {
                complete = false;
                break;
            }
            Optional<String> cursor = Optional.empty();
            do {
                QuarantinePage page = quarantine.list(new QuarantineQuery(Optional.empty(), tenant, Optional.empty(),
                        Optional.of(QuarantineStatus.QUARANTINED), Optional.empty(), 500, cursor), now);
                waiting.addAll(page.items());
                cursor = Optional.ofNullable(page.nextCursor());
                pages++;
            } while (cursor.isPresent() && waiting.size() < MAX_RECORDS && pages < until);
            complete &= cursor.isEmpty();
        }
        return new Waiting(waiting, complete);
    }

    /** Count and oldest age of one group. */
    public record Group(int count, long oldestAgeSeconds) {
        Group add(long ageSeconds) {
            return new Group(count + 1, Math.max(oldestAgeSeconds, ageSeconds));
        }
    }

    /** A record past one of its owner's deadlines. */
    public record Overdue(String jobId, String tenant, String owner, String stage, long overdueSeconds, String triageState) {
    }

    @GET
    @RolesAllowed({Roles.VIEWER, Roles.OPERATOR})
    public Map<String, Object> overview() {
        Instant now = clock.instant();
        TenantScope scope = TenantScope.of(identity);
        List<Optional<String>> tenants = scope.everyTenant() ? List.of(Optional.empty()) : scope.tenants().stream().sorted().map(Optional::of).toList();
        Waiting read = waiting(quarantine, tenants, now);
        List<QuarantineRecord> waiting = read.records();
        boolean complete = read.complete();
        Map<String, Group> byClass = new TreeMap<>();
        Map<String, Group> byTenant = new TreeMap<>();
        Map<String, Group> byOwner = new TreeMap<>();
        List<Overdue> overdue = new ArrayList<>();
        for (QuarantineRecord r : waiting) {
            long age = Duration.between(r.quarantinedAt(), now).toSeconds();
            Owner owner = owners.owner(r.triage().owner());
            byClass.merge(r.failureClass().name(), new Group(1, age), (a, b) -> a.add(age));
            byTenant.merge(r.tenant() == null ? NO_TENANT : r.tenant(), new Group(1, age), (a, b) -> a.add(age));
            byOwner.merge(owner.name(), new Group(1, age), (a, b) -> a.add(age));
            boolean acknowledged = r.triage().acknowledgedBy() != null;
            if (!acknowledged && now.isAfter(r.quarantinedAt().plus(owner.acknowledgeWithin()))) {
                overdue.add(new Overdue(r.jobId(), r.tenant(), owner.name(), ReviewStage.ACKNOWLEDGE.key(),
                        Duration.between(r.quarantinedAt().plus(owner.acknowledgeWithin()), now).toSeconds(), r.triageState().name()));
            } else if (now.isAfter(r.quarantinedAt().plus(owner.resolveWithin()))) {
                overdue.add(new Overdue(r.jobId(), r.tenant(), owner.name(), ReviewStage.RESOLVE.key(),
                        Duration.between(r.quarantinedAt().plus(owner.resolveWithin()), now).toSeconds(), r.triageState().name()));
            }
        }
        overdue.sort((a, b) -> Long.compare(b.overdueSeconds(), a.overdueSeconds()));
        Map<String, Object> consumption = new LinkedHashMap<>();
        consumption.put("admit", gate.admit().name());
        consumption.put("breakers", gate.states());
        consumption.put("systemic", guard.admit().name());
        consumption.put("ledgerGate", ledgerGate.downSince().map(s -> "PAUSED since " + s).orElse("OPEN"));
        try {
            // Every worker's guard, as each posted it: this answer comes from one worker behind the address. Names only for a
            // token of every tenant (as the trip's sample jobs); the count for others.
            List<io.poisonguard.pipeline.FleetGuards.Tripped> stopped = fleet.tripped();
            consumption.put("stoppedWorkers", TenantScope.of(identity).everyTenant()
                    ? stopped.stream().map(t -> t.worker() + " since " + t.since()).toList()
                    : stopped.isEmpty() ? List.of() : List.of(stopped.size() + " worker(s)"));
        } catch (RuntimeException e) {
            org.jboss.logging.Logger.getLogger(OverviewResource.class).warnf("The fleet's guard board could not be read (%s)",
                    e.getClass().getSimpleName());
            consumption.put("stoppedWorkers", null);
        }
        RejectionHistory.Snapshot rejections = metrics.rejections().snapshot(now);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("generatedAt", now);
        out.put("waiting", waiting.size());
        out.put("complete", complete);
        out.put("byClass", byClass);
        out.put("byTenant", byTenant);
        out.put("byOwner", byOwner);
        out.put("overdue", overdue.size() > 200 ? overdue.subList(0, 200) : overdue);
        out.put("consumption", consumption);
        // Admission rejections are counted by reason for the whole service, whatever tenant the copies named (many name
        // none valid): only a token of every tenant sees them.
        if (scope.everyTenant()) {
            out.put("rejections", Map.of("firstMinute", rejections.firstMinute(), "byReason", rejections.byReason()));
        }
        return out;
    }
}
