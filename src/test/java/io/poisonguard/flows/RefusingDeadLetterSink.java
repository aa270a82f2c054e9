package io.poisonguard.flows;

import io.poisonguard.admission.InboundMessage;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.quarantine.DeadLetterSink;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Alternative;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.services.sqs.model.SqsException;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Stands in for real SQS refusing a dead-letter copy over its 1 MiB limit (ElasticMQ does not check
 * size): every send fails the way SQS answers it, InvalidParameterValue with status 400. Enabled only by
 * the profiles that name it.
 */
@Alternative
@ApplicationScoped
public class RefusingDeadLetterSink implements DeadLetterSink {
    static final AtomicInteger SENDS = new AtomicInteger();

    @Override
    public String send(InboundMessage original, String jobId, FailureClass failureClass, int attempts, String reason) {
        SENDS.incrementAndGet();
        throw SqsException.builder().statusCode(400).awsErrorDetails(AwsErrorDetails.builder().errorCode("InvalidParameterValue")
                .errorMessage("One or more parameters are invalid. Reason: Message must be shorter than 1048576 bytes.").build()).build();
    }
}
