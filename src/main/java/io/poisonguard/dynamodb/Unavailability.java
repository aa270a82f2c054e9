package io.poisonguard.dynamodb;

import io.poisonguard.ledger.StoreUnavailable;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;

import java.util.Set;
import java.util.function.Supplier;

/**
 * Translates DynamoDB's "not now" answers into {@link StoreUnavailable} at the adapter boundary:
 * client-side failures (timeouts, refused or reset connections), 5xx answers and throttling, once
 * the SDK's own retries are spent; and refusals that DynamoDB gives every call alike (a denied
 * permission, expired or unknown credentials, a missing table), which are no answer about the item
 * either. Every other error (a condition that failed, a validation error) passes through unchanged:
 * it is an answer.
 */
final class Unavailability {
    /** Error codes DynamoDB uses when it asks callers to slow down. */
    private static final Set<String> THROTTLING = Set.of("ProvisionedThroughputExceededException", "ThrottlingException",
            "RequestLimitExceeded", "LimitExceededException");

    /**
     * Error codes of a refusal that does not depend on the item: the role, the credentials, the signature or the table. Taken
     * for an answer, a worker whose role lost a permission went on receiving while every copy failed, until SQS's redrive
     * moved the backlog to the dead-letter queue.
     */
    private static final Set<String> REFUSED = Set.of("AccessDeniedException", "UnrecognizedClientException", "ExpiredTokenException",
            "ExpiredToken", "InvalidSignatureException", "IncompleteSignatureException", "MissingAuthenticationTokenException",
            "InvalidClientTokenId", "ResourceNotFoundException");

    private Unavailability() {
    }

    /** The code of a refusal of every call, or null when {@code e} is not one. */
    static String refusal(RuntimeException e) {
        if (e instanceof DynamoDbException d) {
            String code = code(d);
            if (code != null && REFUSED.contains(code)) {
                return code;
            }
            if (d.statusCode() == 403) {
                return code == null ? "403" : code;
            }
        }
        return null;
    }

    static boolean unavailable(RuntimeException e) {
        if (e instanceof SdkClientException) {
            return true;
        }
        if (e instanceof DynamoDbException d) {
            String code = code(d);
            return d.statusCode() >= 500 || (code != null && THROTTLING.contains(code));
        }
        return false;
    }

    /**
     * {@code e} as the caller meets it: "did not answer" (a write's outcome then as {@code outcomeUnknown} says), "refused
     * every call" (nothing landed), or itself, an answer.
     */
    private static RuntimeException translated(String what, boolean outcomeUnknown, RuntimeException e) {
        if (unavailable(e)) {
            return new StoreUnavailable(what, outcomeUnknown, e);
        }
        String refused = refusal(e);
        return refused != null ? StoreUnavailable.refused(what, refused, e) : e;
    }

    private static String code(DynamoDbException d) {
        return d.awsErrorDetails() == null ? null : d.awsErrorDetails().errorCode();
    }

    /** Runs a read (or a write that is safe to repeat), translating unavailability. */
    static <T> T read(String what, Supplier<T> call) {
        try {
            return call.get();
        } catch (RuntimeException e) {
            throw translated(what, false, e);
        }
    }

    /** Runs a write, translating unavailability; the write's outcome is then unknown. */
    static <T> T write(String what, Supplier<T> call) {
        try {
            return call.get();
        } catch (RuntimeException e) {
            throw translated(what, true, e);
        }
    }
}
