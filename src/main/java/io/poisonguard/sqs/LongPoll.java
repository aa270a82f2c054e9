package io.poisonguard.sqs;

import software.amazon.awssdk.awscore.AwsRequestOverrideConfiguration;

import java.time.Duration;

/**
 * The bound on one long-poll receive. Every SQS call is bounded by the client's attempt timeout
 * ({@code quarkus.sqs.api-call-attempt-timeout}, 10 s), not by a socket read timeout (there is none: a timed
 * read costs a virtual thread a timer on every wait). A receive may legitimately wait up to its long-poll
 * time for the first message, so its own bound is that wait plus the same margin.
 */
final class LongPoll {
    /** What an answer may take beyond the long-poll wait; the client's attempt timeout for every other call. */
    static final Duration MARGIN = Duration.ofSeconds(10);

    private LongPoll() {
    }

    static AwsRequestOverrideConfiguration bounded(int waitSeconds) {
        return AwsRequestOverrideConfiguration.builder()
                .apiCallAttemptTimeout(Duration.ofSeconds(Math.max(0, waitSeconds)).plus(MARGIN)).build();
    }
}
