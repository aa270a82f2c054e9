package io.poisonguard.api;

import io.poisonguard.failure.FailureClass;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.ledger.LedgerStore;
import io.poisonguard.quarantine.QuarantineRecord;
import io.poisonguard.quarantine.QuarantineStore;
import jakarta.ws.rs.BadRequestException;
import jakarta.ws.rs.DefaultValue;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.NotFoundException;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;

import java.time.Clock;
import java.util.List;

/**
 * Read-only views of the ledger and the quarantine, for operators and the demo. Payloads are never
 * part of either record, so nothing here can leak one.
 */
@Path("/")
@Produces(MediaType.APPLICATION_JSON)
public class JobsResource {
    private final LedgerStore ledger;
    private final QuarantineStore quarantine;
    private final Clock clock;

    public JobsResource(LedgerStore ledger, QuarantineStore quarantine, Clock clock) {
        this.ledger = ledger;
        this.quarantine = quarantine;
        this.clock = clock;
    }

    @GET
    @Path("jobs/{jobId}")
    public LedgerRecord job(@PathParam("jobId") String jobId) {
        return ledger.find(jobId).orElseThrow(() -> new NotFoundException("no ledger record for job " + jobId));
    }

    @GET
    @Path("quarantine/{jobId}")
    public QuarantineRecord quarantined(@PathParam("jobId") String jobId) {
        return quarantine.find(jobId).orElseThrow(() -> new NotFoundException("job " + jobId + " is not quarantined"));
    }

    @GET
    @Path("quarantine")
    public List<QuarantineRecord> quarantinedByClass(@QueryParam("failureClass") String failureClass,
                                                     @QueryParam("limit") @DefaultValue("50") int limit) {
        if (failureClass == null) {
            throw new BadRequestException("failureClass is required, one of " + List.of(FailureClass.values()));
        }
        FailureClass c;
        try {
            c = FailureClass.valueOf(failureClass.toUpperCase().replace('-', '_'));
        } catch (IllegalArgumentException e) {
            throw new BadRequestException("failureClass must be one of " + List.of(FailureClass.values()));
        }
        if (limit < 1 || limit > 500) {
            throw new BadRequestException("limit must be between 1 and 500");
        }
        return quarantine.byClass(c, clock.instant(), limit);
    }
}
