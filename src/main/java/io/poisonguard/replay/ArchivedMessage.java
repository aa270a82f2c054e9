package io.poisonguard.replay;

import io.poisonguard.admission.MessageAttribute;

import java.util.Map;

/** A dead-letter copy held (hidden) while a replay, a resolve or a payload view uses it. */
public record ArchivedMessage(String messageId, String receiptHandle, String body, Map<String, MessageAttribute> attributes) {
    public ArchivedMessage {
        attributes = Map.copyOf(attributes);
    }

    @Override
    public String toString() {
        return "ArchivedMessage[messageId=" + messageId + ", body=<" + body.length() + " chars>]";
    }
}
