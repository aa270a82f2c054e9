package io.poisonguard.triage;

import io.poisonguard.audit.AuditAction;
import io.poisonguard.audit.AuditEntry;
import io.poisonguard.audit.AuditLog;
import io.poisonguard.failure.Scrubber;
import io.poisonguard.ledger.JobKey;
import io.poisonguard.quarantine.QuarantineRecord;
import io.poisonguard.quarantine.QuarantineStore;
import io.poisonguard.quarantine.Triage;
import io.poisonguard.replay.CodeVersion;
import jakarta.enterprise.context.ApplicationScoped;

import java.time.Clock;
import java.time.Instant;
import java.util.Optional;

/**
 * The triage actions on a quarantined job: acknowledge it, assign it, leave a note. Each is audited; a note is
 * scrubbed (an operator may paste a log line with a token in it) and kept on the record as well as in the audit.
 */
@ApplicationScoped
public class TriageActions {
    /** Longest note kept; longer text is cut. */
    public static final int NOTE_CHARS = 2_000;
    /**
     * Largest note kept, in UTF-8 bytes: {@link Triage#MAX_NOTES} of them (200 KB) leave the record well inside DynamoDB's
     * 400 KB item, past which every later write to it (escalation, acknowledge, replay) would be refused.
     */
    public static final int NOTE_BYTES = 2_000;

    private final QuarantineStore quarantine;
    private final AuditLog audit;
    private final Clock clock;
    private final CodeVersion codeVersion;

    public TriageActions(QuarantineStore quarantine, AuditLog audit, Clock clock, CodeVersion codeVersion) {
        this.quarantine = quarantine;
        this.audit = audit;
        this.clock = clock;
        this.codeVersion = codeVersion;
    }

    /** What a triage action came to. */
    public sealed interface Outcome {
        record Done(QuarantineRecord record) implements Outcome {
        }

        /** Nothing to act on: no live record. */
        record NotFound() implements Outcome {
        }

        /** Refused, with the reason (already acknowledged, no longer waiting, too many notes). */
        record Refused(String why) implements Outcome {
        }
    }

    public Outcome acknowledge(JobKey key, String actor) {
        Optional<QuarantineRecord> record = quarantine.find(key);
        if (record.isEmpty()) {
            return new Outcome.NotFound();
        }
        Instant now = clock.instant();
        if (!quarantine.acknowledge(key, actor, now)) {
            QuarantineRecord r = quarantine.find(key).orElse(record.get());
            String why = r.triage().acknowledgedBy() != null ? "already acknowledged by " + r.triage().acknowledgedBy()
                    : "the job is no longer waiting (" + r.triageState() + ")";
            audited(key, AuditAction.ACKNOWLEDGE, actor, "", "REFUSED", why);
            return new Outcome.Refused(why);
        }
        audited(key, AuditAction.ACKNOWLEDGE, actor, "", "ACKNOWLEDGED", null);
        return new Outcome.Done(quarantine.find(key).orElseThrow());
    }

    public Outcome assign(JobKey key, String actor, String assignee, String reason) {
        if (quarantine.find(key).isEmpty()) {
            return new Outcome.NotFound();
        }
        quarantine.assign(key, assignee);
        audited(key, AuditAction.ASSIGN, actor, reason, assignee == null ? "UNASSIGNED" : "ASSIGNED", assignee);
        return new Outcome.Done(quarantine.find(key).orElseThrow());
    }

    public Outcome note(JobKey key, String actor, String text) {
        if (quarantine.find(key).isEmpty()) {
            return new Outcome.NotFound();
        }
        String clean = utf8Prefix(Scrubber.scrub(text, NOTE_CHARS), NOTE_BYTES);
        if (!quarantine.addNote(key, new Triage.Note(clock.instant(), actor, clean))) {
            return new Outcome.Refused("the record holds " + Triage.MAX_NOTES + " notes already");
        }
        audited(key, AuditAction.NOTE, actor, clean, "NOTED", null);
        return new Outcome.Done(quarantine.find(key).orElseThrow());
    }

    /** {@code s} cut to at most {@code maxBytes} of UTF-8, at a character boundary. */
    static String utf8Prefix(String s, int maxBytes) {
        int bytes = 0;
        int i = 0;
        while (i < s.length()) {
            int cp = s.codePointAt(i);
            int n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
            if (bytes + n > maxBytes) {
                break;
            }
            bytes += n;
            i += Character.charCount(cp);
        }
        return s.substring(0, i);
    }

    private void audited(JobKey key, AuditAction action, String actor, String reason, String outcome, String detail) {
        audit.append(new AuditEntry(key.jobId(), key.tenant(), clock.instant(), actor, action, reason, codeVersion.value(), null, null, outcome,
                detail));
    }
}
