package io.poisonguard.sqs;

import io.poisonguard.admission.MessageAttribute;
import io.poisonguard.replay.ReplaySender;
import jakarta.enterprise.context.ApplicationScoped;
import software.amazon.awssdk.services.sqs.SqsClient;

import java.util.Map;

/** Replayed jobs go back on the main queue, paced by the replay rate limiter before they get here. */
@ApplicationScoped
public class SqsReplaySender implements ReplaySender {
    private final SqsClient sqs;
    private final QueueUrls urls;

    public SqsReplaySender(SqsClient sqs, QueueUrls urls) {
        this.sqs = sqs;
        this.urls = urls;
    }

    @Override
    public void send(String body, Map<String, MessageAttribute> attributes) {
        sqs.sendMessage(b -> b.queueUrl(urls.jobs()).messageBody(body).messageAttributes(SqsJobQueue.toSdk(attributes)));
    }
}
