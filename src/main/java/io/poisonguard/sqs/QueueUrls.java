package io.poisonguard.sqs;

import io.poisonguard.config.Names;
import jakarta.enterprise.context.ApplicationScoped;
import software.amazon.awssdk.services.sqs.SqsClient;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** Resolves queue names to URLs once, through GetQueueUrl, so any endpoint's URL scheme works. */
@ApplicationScoped
public class QueueUrls {
    private final SqsClient sqs;
    private final Names names;
    private final Map<String, String> cache = new ConcurrentHashMap<>();

    public QueueUrls(SqsClient sqs, Names names) {
        this.sqs = sqs;
        this.names = names;
    }

    public String url(String queueName) {
        return cache.computeIfAbsent(queueName, n -> sqs.getQueueUrl(b -> b.queueName(n)).queueUrl());
    }

    public String jobs() {
        return url(names.jobsQueue());
    }

    public String deadLetter() {
        return url(names.deadLetterQueue());
    }

    public String notices() {
        return url(names.noticesQueue());
    }
}
