package io.poisonguard.replay;

import io.poisonguard.admission.MessageAttribute;

import java.util.Map;

/** Puts a replayed job back on the main queue. */
public interface ReplaySender {
    void send(String body, Map<String, MessageAttribute> attributes);
}
