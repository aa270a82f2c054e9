package io.poisonguard.api;

import io.poisonguard.ledger.StoreUnavailable;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.ext.ExceptionMapper;
import jakarta.ws.rs.ext.Provider;
import org.jboss.resteasy.reactive.server.ServerExceptionMapper;

/** Renders every API error as application/problem+json. */
@Provider
public class ProblemMapper implements ExceptionMapper<Problem> {
    @Override
    public Response toResponse(Problem problem) {
        return problem.toResponse();
    }

    /** A store that did not answer (an outage, throttling) is the system's fault and worth a retry: 503, never a 500. */
    @ServerExceptionMapper
    public Response unavailable(StoreUnavailable e) {
        String then = e.outcomeUnknown() ? "; a write may or may not have landed: look at the job before trying again" : "; try again";
        return new Problem(503, "Unavailable", e.getMessage() + then, null).toResponse();
    }

    @ServerExceptionMapper
    public Response webError(WebApplicationException e) {
        int status = e.getResponse().getStatus();
        if (status == 401 || status == 403) {
            return e.getResponse();
        }
        return new Problem(status, e.getResponse().getStatusInfo().getReasonPhrase(), e.getMessage(), null).toResponse();
    }
}
