package io.poisonguard.pipeline;

import io.poisonguard.admission.InboundMessage;

import java.time.Duration;
import java.util.List;

/** The main queue as the pipeline uses it. */
public interface SourceQueue {

    /** Long-polls for up to {@code max} messages, hidden for {@code visibility} once received. */
    List<InboundMessage> receive(int max, Duration wait, Duration visibility);

    /** Deletes the message; call only once its next state is durable (invariant 2). */
    void delete(InboundMessage message);

    /** Hides the message for {@code delay} from now (0 makes it visible again). */
    void changeVisibility(InboundMessage message, Duration delay);

    /** Sends any deletes still buffered and stops buffering; called once, at shutdown. */
    void flush();
}
