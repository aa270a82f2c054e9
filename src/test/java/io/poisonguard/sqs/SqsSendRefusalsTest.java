package io.poisonguard.sqs;

import org.junit.jupiter.api.Test;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.sqs.model.InvalidMessageContentsException;
import software.amazon.awssdk.services.sqs.model.SqsException;

import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;

class SqsSendRefusalsTest {
    private final SqsSendRefusals refusals = new SqsSendRefusals();

    private static SqsException sqs(int status, String code) {
        return (SqsException) SqsException.builder().statusCode(status)
                .awsErrorDetails(AwsErrorDetails.builder().errorCode(code).errorMessage("x").build()).build();
    }

    @Test
    void aMessageTooLongIsARefusalWhicheverProtocolNamedIt() {
        assertEquals(Optional.of("InvalidParameterValue"), refusals.permanent(sqs(400, "InvalidParameterValue")));
        assertEquals(Optional.of("InvalidParameterValue"), refusals.permanent(sqs(400, "AWS.SimpleQueueService.InvalidParameterValue")));
        assertEquals(Optional.of("InvalidParameterValue"), refusals.permanent(sqs(400, "com.amazonaws.sqs#InvalidParameterValueException")));
    }

    @Test
    void invalidCharactersAreARefusal() {
        InvalidMessageContentsException e = (InvalidMessageContentsException) InvalidMessageContentsException.builder().statusCode(400)
                .awsErrorDetails(AwsErrorDetails.builder().errorCode("InvalidMessageContents").build()).build();
        assertEquals(Optional.of("InvalidMessageContents"), refusals.permanent(e));
    }

    @Test
    void throttlingServerErrorsAndNetworkFailuresMayPass() {
        assertEquals(Optional.empty(), refusals.permanent(sqs(400, "ThrottlingException")));
        assertEquals(Optional.empty(), refusals.permanent(sqs(400, "RequestThrottled")));
        assertEquals(Optional.empty(), refusals.permanent(sqs(500, "InternalError")));
        assertEquals(Optional.empty(), refusals.permanent(sqs(403, "AccessDenied")));
        assertEquals(Optional.empty(), refusals.permanent(SdkClientException.create("connection reset")));
        assertEquals(Optional.empty(), refusals.permanent(new IllegalStateException("boom")));
    }
}
