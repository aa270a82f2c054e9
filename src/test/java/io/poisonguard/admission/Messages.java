package io.poisonguard.admission;

import java.time.Instant;
import java.util.HashMap;
import java.util.Map;

/** Builds inbound messages: a valid permit-report v2 job unless a test changes it. */
final class Messages {
    static final Instant SENT = Instant.parse("2026-03-01T10:00:00Z");

    private final Map<String, MessageAttribute> attributes = new HashMap<>();
    private String body = "{\"permitId\":\"P-1\",\"site\":\"North Yard\"}";
    private String messageId = "msg-1";

    private Messages() {
        attributes.put(WireAttributes.JOB_TYPE, MessageAttribute.string("permit-report"));
        attributes.put(WireAttributes.TENANT, MessageAttribute.string("acme"));
        attributes.put(WireAttributes.SCHEMA_VERSION, MessageAttribute.number(2));
    }

    static Messages job() {
        return new Messages();
    }

    Messages body(String body) {
        this.body = body;
        return this;
    }

    Messages messageId(String messageId) {
        this.messageId = messageId;
        return this;
    }

    Messages with(String name, MessageAttribute value) {
        attributes.put(name, value);
        return this;
    }

    Messages with(String name, String value) {
        return with(name, MessageAttribute.string(value));
    }

    Messages without(String name) {
        attributes.remove(name);
        return this;
    }

    InboundMessage build() {
        return new InboundMessage(messageId, "receipt-1", body, attributes, SENT, 1, SENT.plusSeconds(1));
    }
}
