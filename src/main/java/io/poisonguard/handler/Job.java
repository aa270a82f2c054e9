package io.poisonguard.handler;

/** What a handler sees of a job: identity, routing, the decoded body and which attempt this is. */
public record Job(String jobId, String tenant, String jobType, int schemaVersion, String body, int attempt, int generation) {
    @Override
    public String toString() {
        // The body never reaches a log line through toString().
        return "Job[jobId=" + jobId + ", tenant=" + tenant + ", jobType=" + jobType + ", schemaVersion=" + schemaVersion
                + ", attempt=" + attempt + ", generation=" + generation + ", body=<" + body.length() + " chars>]";
    }
}
