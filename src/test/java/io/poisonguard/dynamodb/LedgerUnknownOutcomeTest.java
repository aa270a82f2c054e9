package io.poisonguard.dynamodb;

import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.ledger.StoreUnavailable;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;

import java.lang.reflect.Proxy;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A conditional write whose condition failed may have failed on the SDK's retry of itself, after the first try landed
 * unanswered. Without the item in the answer (an emulator's, or a table throttling the read that follows) the store reads
 * it to tell; when that read does not answer either, the write's outcome is unknown. It was reported as a plain outage
 * (outcome known), so a start that had landed was never settled: left ACTIVE, its lease ran out into a crash charged to
 * the job for an attempt that never ran.
 */
class LedgerUnknownOutcomeTest {
    @Test
    void aFailedConditionWhoseStoredItemCannotBeReadIsAWriteOfUnknownOutcome() {
        DynamoDbClient dynamo = (DynamoDbClient) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[]{DynamoDbClient.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "putItem", "updateItem" -> throw ConditionalCheckFailedException.builder().message("The conditional request failed").build();
                    case "getItem" -> throw SdkClientException.create("Unable to execute HTTP request: Read timed out");
                    case "serviceName" -> "dynamodb";
                    case "close" -> null;
                    default -> throw new AssertionError("unexpected call " + method.getName());
                });
        Instant now = Instant.parse("2026-12-01T10:00:00Z");
        DynamoLedgerStore ledger = new DynamoLedgerStore(dynamo, "ledger", Clock.fixed(now, ZoneOffset.UTC));
        LedgerRecord start = LedgerRecord.fresh("job-1", "acme", "permit-report", 1, now).withAttempt(1).moveTo(JobState.ACTIVE, now)
                .withLease("w1", now.plusSeconds(60));

        StoreUnavailable down = assertThrows(StoreUnavailable.class, () -> ledger.write(start));

        assertTrue(down.outcomeUnknown(), "the write may have landed");
        assertTrue(down.ledger());
    }
}
