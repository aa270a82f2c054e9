package io.poisonguard.admission;

import java.time.Instant;
import java.util.Map;
import java.util.Optional;

/** A received SQS message, free of SDK types. */
public record InboundMessage(
        String messageId,
        String receiptHandle,
        String body,
        Map<String, MessageAttribute> attributes,
        Instant sentAt,
        int receiveCount,
        Instant receivedAt) {

    public InboundMessage {
        attributes = attributes == null ? Map.of() : Map.copyOf(attributes);
        body = body == null ? "" : body;
    }

    public Optional<String> attribute(String name) {
        MessageAttribute a = attributes.get(name);
        return a == null || a.stringValue() == null || a.stringValue().isBlank() ? Optional.empty() : Optional.of(a.stringValue().strip());
    }
}
