package io.poisonguard.sqs;

import software.amazon.awssdk.awscore.AwsRequestOverrideConfiguration;
import software.amazon.awssdk.services.sqs.SqsClient;

import java.time.Duration;

/**
 * The bound on one long-poll receive. Every SQS call is bounded by the client's attempt timeout
 * ({@code quarkus.sqs.api-call-attempt-timeout}, 10 s by default), not by a socket read timeout (there is none: a
 * timed read costs a virtual thread a timer on every wait). A receive may legitimately wait up to its long-poll
 * time for the first message, so its own bound is that wait plus the client's attempt timeout, read from the
 * client itself so that changing the key moves both.
 */
final class LongPoll {
    /** The margin when the client has no attempt timeout of its own: a receive is never left unbounded. */
    static final Duration DEFAULT_MARGIN = Duration.ofSeconds(10);
    /** SQS's longest long-poll wait. */
    private static final int LONGEST_WAIT_SECONDS = 20;

    private final AwsRequestOverrideConfiguration[] byWait = new AwsRequestOverrideConfiguration[LONGEST_WAIT_SECONDS + 1];

    private LongPoll(Duration margin) {
        for (int wait = 0; wait <= LONGEST_WAIT_SECONDS; wait++) {
            byWait[wait] = AwsRequestOverrideConfiguration.builder()
                    .apiCallAttemptTimeout(Duration.ofSeconds(wait).plus(margin)).build();
        }
    }

    static LongPoll of(SqsClient sqs) {
        Duration margin;
        try {
            margin = sqs.serviceClientConfiguration().overrideConfiguration().apiCallAttemptTimeout().orElse(DEFAULT_MARGIN);
        } catch (UnsupportedOperationException noConfiguration) {
            // A hand-written client (a test double, a wrapper) need not expose its configuration.
            margin = DEFAULT_MARGIN;
        }
        return new LongPoll(margin);
    }

    /** The override for a receive that long-polls {@code waitSeconds} (clamped to 0..20, what SQS accepts). */
    AwsRequestOverrideConfiguration bounded(int waitSeconds) {
        return byWait[Math.clamp(waitSeconds, 0, LONGEST_WAIT_SECONDS)];
    }
}
