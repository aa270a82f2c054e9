package io.poisonguard.sqs;

import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;

import java.net.URI;
import java.time.Duration;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A long-poll receive is bounded by its wait plus the client's own attempt timeout (the bound on every other SQS
 * call), read from the client: an operator who changes {@code quarkus.sqs.api-call-attempt-timeout} moves both.
 */
class LongPollTest {

    private static SqsClient client(Duration attemptTimeout) {
        var builder = SqsClient.builder().region(Region.US_EAST_1).endpointOverride(URI.create("http://localhost:1"))
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("k", "s")));
        if (attemptTimeout != null) {
            builder.overrideConfiguration(o -> o.apiCallAttemptTimeout(attemptTimeout));
        }
        return builder.build();
    }

    @Test
    void theMarginIsTheClientsConfiguredAttemptTimeout() {
        try (SqsClient sqs = client(Duration.ofSeconds(3))) {
            LongPoll poll = LongPoll.of(sqs);
            assertEquals(Optional.of(Duration.ofSeconds(8)), poll.bounded(5).apiCallAttemptTimeout());
            assertEquals(Optional.of(Duration.ofSeconds(3)), poll.bounded(0).apiCallAttemptTimeout());
            assertEquals(Optional.of(Duration.ofSeconds(23)), poll.bounded(20).apiCallAttemptTimeout());
        }
    }

    @Test
    void aClientWithoutAnAttemptTimeoutStillGetsABoundedReceive() {
        try (SqsClient sqs = client(null)) {
            assertEquals(Optional.of(Duration.ofSeconds(20).plus(LongPoll.DEFAULT_MARGIN)),
                    LongPoll.of(sqs).bounded(20).apiCallAttemptTimeout());
        }
    }

    @Test
    void aNegativeOrOverlongWaitIsClampedToWhatSqsAccepts() {
        try (SqsClient sqs = client(Duration.ofSeconds(4))) {
            LongPoll poll = LongPoll.of(sqs);
            assertEquals(Optional.of(Duration.ofSeconds(4)), poll.bounded(-1).apiCallAttemptTimeout());
            assertEquals(Optional.of(Duration.ofSeconds(24)), poll.bounded(60).apiCallAttemptTimeout());
        }
    }
}
