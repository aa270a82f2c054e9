package io.poisonguard.api;

import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

import java.util.LinkedHashMap;
import java.util.Map;

/** An RFC 9457 problem: what went wrong, for which job, as application/problem+json. */
public class Problem extends RuntimeException {
    public static final MediaType PROBLEM_JSON = new MediaType("application", "problem+json");

    private final int status;
    private final String title;
    private final String jobId;

    public Problem(int status, String title, String detail, String jobId) {
        super(detail);
        this.status = status;
        this.title = title;
        this.jobId = jobId;
    }

    public static Problem badRequest(String detail) {
        return new Problem(400, "Bad request", detail, null);
    }

    public Response toResponse() {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("type", "about:blank");
        body.put("title", title);
        body.put("status", status);
        body.put("detail", getMessage());
        if (jobId != null) {
            body.put("jobId", jobId);
        }
        return Response.status(status).type(PROBLEM_JSON).entity(body).build();
    }
}
