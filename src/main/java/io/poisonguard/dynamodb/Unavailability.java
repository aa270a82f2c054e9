package io.poisonguard.dynamodb;

import io.poisonguard.ledger.StoreUnavailable;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;

import java.util.Set;
import java.util.function.Supplier;

/**
 * Translates DynamoDB's "not now" answers into {@link StoreUnavailable} at the adapter boundary:
 * client-side failures (timeouts, refused or reset connections), 5xx answers and throttling, once
 * the SDK's own retries are spent. Every other error (a condition that failed, a validation error)
 * passes through unchanged: it is an answer.
 */
final class Unavailability {
    /** Error codes DynamoDB uses when it asks callers to slow down. */
    private static final Set<String> THROTTLING = Set.of("ProvisionedThroughputExceededException", "ThrottlingException",
            "RequestLimitExceeded", "LimitExceededException");

    private Unavailability() {
    }

    static boolean unavailable(RuntimeException e) {
        if (e instanceof SdkClientException) {
            return true;
        }
        if (e instanceof DynamoDbException d) {
            String code = d.awsErrorDetails() == null ? null : d.awsErrorDetails().errorCode();
            return d.statusCode() >= 500 || (code != null && THROTTLING.contains(code));
        }
        return false;
    }

    /** Runs a read (or a write that is safe to repeat), translating unavailability. */
    static <T> T read(String what, Supplier<T> call) {
        try {
            return call.get();
        } catch (RuntimeException e) {
            if (unavailable(e)) {
                throw new StoreUnavailable(what, false, e);
            }
            throw e;
        }
    }

    /** Runs a write, translating unavailability; the write's outcome is then unknown. */
    static <T> T write(String what, Supplier<T> call) {
        try {
            return call.get();
        } catch (RuntimeException e) {
            if (unavailable(e)) {
                throw new StoreUnavailable(what, true, e);
            }
            throw e;
        }
    }
}
