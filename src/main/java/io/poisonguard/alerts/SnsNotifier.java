package io.poisonguard.alerts;

import com.fasterxml.jackson.databind.ObjectMapper;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sns.SnsClient;
import software.amazon.awssdk.services.sns.SnsClientBuilder;
import software.amazon.awssdk.services.sns.model.MessageAttributeValue;

import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/** Publishes each alert to an SNS topic, with the job id and failure class as message attributes for filtering. */
final class SnsNotifier implements Notifier, AutoCloseable {
    private final SnsClient sns;
    private final String topicArn;
    private final ObjectMapper json;

    /**
     * @param timeout how long one publish may take, retries included; also each attempt's connect and read, so an
     *                endpoint that accepts and never answers fails the alert instead of holding a sender for the
     *                SDK's 30-second read on every attempt
     */
    SnsNotifier(String topicArn, Optional<String> region, Optional<URI> endpoint, Duration timeout, ObjectMapper json) {
        SnsClientBuilder b = SnsClient.builder()
                .httpClientBuilder(ApacheHttpClient.builder().connectionTimeout(timeout).socketTimeout(timeout))
                .overrideConfiguration(o -> o.apiCallTimeout(timeout));
        region.ifPresent(r -> b.region(Region.of(r)));
        endpoint.ifPresent(b::endpointOverride);
        this.sns = b.build();
        this.topicArn = topicArn;
        this.json = json;
    }

    @Override
    public String name() {
        return "sns";
    }

    @Override
    public void send(Alert alert) throws Exception {
        String subject = "poison-guard: " + alert.event() + (alert.jobId() == null ? "" : " " + alert.jobId());
        String message = json.writeValueAsString(alert);
        sns.publish(p -> p.topicArn(topicArn)
                .subject(subject(subject))
                .message(message)
                .messageAttributes(Map.of(
                        "job-id", MessageAttributeValue.builder().dataType("String").stringValue(alert.jobId() == null ? "-" : alert.jobId()).build(),
                        "failure-class", MessageAttributeValue.builder().dataType("String")
                                .stringValue(alert.failureClass() == null ? "NONE" : alert.failureClass()).build())));
    }

    @Override
    public void close() {
        sns.close();
    }

    /** What SNS takes as a subject: printable ASCII, under 100 characters. */
    static String subject(String text) {
        String ascii = text.replaceAll("[^\\x20-\\x7E]", "?");
        return ascii.length() > 99 ? ascii.substring(0, 98) + "~" : ascii;
    }
}
