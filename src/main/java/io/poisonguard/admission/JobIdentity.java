package io.poisonguard.admission;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;

import java.io.IOException;
import java.util.Optional;

/**
 * Where a job's identity comes from (invariant 3): the {@code job-id} attribute, then, when there is no such
 * attribute, a top-level {@code jobId} field of a JSON body, then the SQS MessageId (also for an attribute that is
 * there but unusable, which admission refuses). Retries keep the message, quarantine
 * copies the attribute and replay reuses it, so the identity never changes.
 */
public record JobIdentity(String jobId, Source source) {
    /** Where the identity was found. */
    public enum Source { ATTRIBUTE, BODY, MESSAGE_ID }

    public static final int MAX_JOB_ID_LENGTH = 256;
    private static final JsonFactory JSON = new JsonFactory();

    public static JobIdentity of(InboundMessage m) {
        Optional<String> given = m.attribute(WireAttributes.JOB_ID);
        if (given.isPresent()) {
            // An attribute that is there but unusable (blank, too long, control characters) is refused at admission; the
            // refusal is this message's own, under its MessageId, never charged to a job its body may name.
            return usable(given.get()) ? new JobIdentity(given.get(), Source.ATTRIBUTE) : new JobIdentity(m.messageId(), Source.MESSAGE_ID);
        }
        Optional<String> body = bodyField(m.body()).filter(JobIdentity::usable);
        return body.map(id -> new JobIdentity(id, Source.BODY)).orElseGet(() -> new JobIdentity(m.messageId(), Source.MESSAGE_ID));
    }

    public static boolean usable(String id) {
        return id != null && !id.isBlank() && id.length() <= MAX_JOB_ID_LENGTH && id.chars().noneMatch(Character::isISOControl);
    }

    /** Reads only the top level of the body, stopping early; a body that is not JSON has no field. */
    static Optional<String> bodyField(String body) {
        if (body.isEmpty() || body.charAt(0) != '{') {
            return Optional.empty();
        }
        try (JsonParser p = JSON.createParser(body)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return Optional.empty();
            }
            JsonToken t;
            while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken value = p.nextToken();
                if ("jobId".equals(name) && value == JsonToken.VALUE_STRING) {
                    return Optional.of(p.getText().strip()).filter(s -> !s.isEmpty());
                }
                p.skipChildren();
            }
            return Optional.empty();
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }
}
