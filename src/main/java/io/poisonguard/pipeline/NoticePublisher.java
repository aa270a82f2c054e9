package io.poisonguard.pipeline;

/** Publishes completion notices for producers and downstream systems. */
public interface NoticePublisher {
    /** Sends one notice carrying the {@code job-id} attribute; throws when it was not accepted. */
    void publish(String jobId, String tenant, String jobType, String body);
}
