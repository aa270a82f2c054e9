package io.poisonguard.disposition;

import io.poisonguard.ledger.LedgerRecord;

import java.time.Duration;

/** What to do with a received copy of a job, decided from its ledger before any handler runs. */
public sealed interface Intake {

    /** Run the handler; {@code next} (attempt incremented, lease taken) must be durable first. */
    record Run(LedgerRecord next) implements Intake {
    }

    /** A copy from a generation the job has left behind (replay made a newer one): delete it. */
    record StaleGeneration(LedgerRecord current, int messageGeneration) implements Intake {
    }

    /**
     * A copy from a generation a replay is leaving behind, while that replay is under way (REPLAYING): it may still find
     * nothing to send and conclude the job UNRECOVERABLE, and this copy may be the payload. Hide it until the replay has
     * gone one way or the other, then decide again.
     */
    record ReplayUnderWay(LedgerRecord current, int messageGeneration, Duration retryIn) implements Intake {
    }

    /** A copy of a finished job: delete it without running. */
    record AlreadySucceeded(LedgerRecord current) implements Intake {
    }

    /** Another worker holds a live lease: hide this copy until the lease can have run out. */
    record ActiveElsewhere(LedgerRecord current, Duration retryIn) implements Intake {
    }

    /** The job waits on its ladder: hide this copy until the retry delay has run out. */
    record NotYet(LedgerRecord current, Duration retryIn) implements Intake {
    }

    /**
     * The job is quarantined (or resolved, or unrecoverable): never run it; make sure its quarantine
     * is complete, then delete this copy.
     */
    record AlreadyQuarantined(LedgerRecord current) implements Intake {
    }

    /** No attempt now: the decision (retry later or quarantine) was reached before running. */
    record Decided(Disposition disposition) implements Intake {
    }
}
