package io.poisonguard.api;

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

    @ServerExceptionMapper
    public Response webError(WebApplicationException e) {
        int status = e.getResponse().getStatus();
        if (status == 401 || status == 403) {
            return e.getResponse();
        }
        return new Problem(status, e.getResponse().getStatusInfo().getReasonPhrase(), e.getMessage(), null).toResponse();
    }
}
