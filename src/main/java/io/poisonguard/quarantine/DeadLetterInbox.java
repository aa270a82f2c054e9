package io.poisonguard.quarantine;

import io.poisonguard.admission.InboundMessage;

import java.time.Duration;
import java.util.List;

/** The dead-letter queue read as an inbox, for the sweep that adopts what the service did not put there. */
public interface DeadLetterInbox {

    /** Up to {@code max} (at most 10) messages, each hidden from other readers for {@code hold}; empty when none is visible. */
    List<InboundMessage> receive(int max, Duration hold);

    /** Removes a message received here; only once its content is durable elsewhere. */
    void delete(InboundMessage m);

    /** Sends a copy of a message received here to the main queue with {@code attributes} (the message is not deleted here). */
    void returnToSource(String body, java.util.Map<String, io.poisonguard.admission.MessageAttribute> attributes);

    /** Makes messages received here visible again at once. */
    void release(List<InboundMessage> messages);
}
