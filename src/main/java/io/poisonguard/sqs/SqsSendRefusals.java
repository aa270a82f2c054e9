package io.poisonguard.sqs;

import io.poisonguard.quarantine.DeadLetterRefusals;
import jakarta.enterprise.context.ApplicationScoped;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.services.sqs.model.InvalidAttributeNameException;
import software.amazon.awssdk.services.sqs.model.InvalidAttributeValueException;
import software.amazon.awssdk.services.sqs.model.InvalidMessageContentsException;

import java.util.Optional;
import java.util.Set;

/**
 * SQS's answers to SendMessage that sending the same message again cannot change: the message is
 * too long or has an invalid parameter (InvalidParameterValue, which is how SQS refuses a message
 * over 1,048,576 bytes), characters outside the allowed set (InvalidMessageContents), or a bad
 * attribute. Throttling, server errors and anything that never reached SQS (network, timeouts) are
 * not refusals: they may pass.
 */
@ApplicationScoped
public class SqsSendRefusals implements DeadLetterRefusals {
    static final Set<String> PERMANENT_CODES = Set.of("InvalidParameterValue", "InvalidMessageContents", "MessageTooLong",
            "InvalidAttributeName", "InvalidAttributeValue");

    @Override
    public Optional<String> permanent(RuntimeException failure) {
        if (failure instanceof InvalidMessageContentsException || failure instanceof InvalidAttributeNameException
                || failure instanceof InvalidAttributeValueException) {
            return Optional.of(code(failure));
        }
        if (failure instanceof AwsServiceException e && !e.isThrottlingException() && e.statusCode() < 500
                && PERMANENT_CODES.contains(normalized(e))) {
            return Optional.of(normalized(e));
        }
        return Optional.empty();
    }

    private static String code(RuntimeException failure) {
        return failure instanceof AwsServiceException e ? normalized(e) : failure.getClass().getSimpleName();
    }

    /** The bare error code, whichever protocol carried it ("com.amazonaws.sqs#X", "AWS.SimpleQueueService.X", "XException"). */
    private static String normalized(AwsServiceException e) {
        String code = e.awsErrorDetails() == null || e.awsErrorDetails().errorCode() == null ? "" : e.awsErrorDetails().errorCode();
        code = code.substring(code.lastIndexOf('#') + 1);
        code = code.substring(code.lastIndexOf('.') + 1);
        return code.endsWith("Exception") ? code.substring(0, code.length() - "Exception".length()) : code;
    }
}
