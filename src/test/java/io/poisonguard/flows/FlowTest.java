package io.poisonguard.flows;

import io.poisonguard.config.Names;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.ledger.LedgerStore;
import io.poisonguard.quarantine.QuarantineStore;
import io.poisonguard.testing.Queues;
import jakarta.inject.Inject;
import software.amazon.awssdk.services.sqs.SqsClient;

/** What every flow test reads and sends through: the queues, the ledger and the quarantine store. */
abstract class FlowTest {
    @Inject
    SqsClient sqs;
    @Inject
    Names names;
    @Inject
    LedgerStore ledger;
    @Inject
    QuarantineStore quarantine;

    Queues queues() {
        return new Queues(sqs, names);
    }

    /** The job's ledger state, or null when it has no record yet. */
    JobState state(String jobId) {
        return ledger.find(jobId).map(LedgerRecord::state).orElse(null);
    }
}
