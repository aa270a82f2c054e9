package io.poisonguard.dynamodb;

import io.poisonguard.audit.AuditAction;
import io.poisonguard.audit.AuditEntry;
import io.poisonguard.config.Names;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.ledger.JobKey;
import io.poisonguard.ledger.StoreUnavailable;
import io.poisonguard.quarantine.QuarantineQuery;
import io.poisonguard.quarantine.QuarantineStatus;
import io.poisonguard.replay.BulkReplay;
import io.poisonguard.tenants.Tenant;
import io.poisonguard.tenants.TenantStatus;
import io.poisonguard.testing.EmulatorClients;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * README: "a store that does not answer (an outage, throttling) gets 503". The ledger and the vault translate such an
 * answer into {@link StoreUnavailable} at the adapter, which the API maps to 503; the quarantine table, the tenant
 * directory, the audit trail and the bulk replay table must too, or their outage answers 500 on nearly every job endpoint.
 */
class StoreOutageTest {
    private static final List<DynamoDbClient> CLIENTS = new ArrayList<>();
    private static final JobKey JOB = JobKey.of("acme", "job-1");

    /** The client, closed after the tests. */
    private static DynamoDbClient keep(DynamoDbClient c) {
        CLIENTS.add(c);
        return c;
    }

    /** DynamoDB's own answer {@code code} with {@code status}, as the SDK raises it once its retries are spent. */
    private static ExecutionInterceptor answering(int status, String code) {
        return new ExecutionInterceptor() {
            @Override
            public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
                throw DynamoDbException.builder().statusCode(status).message(code)
                        .awsErrorDetails(AwsErrorDetails.builder().errorCode(code).serviceName("DynamoDb").build()).build();
            }
        };
    }

    static Stream<Arguments> outages() {
        return Stream.of(
                Arguments.of("nothing listening", keep(EmulatorClients.dynamoDown())),
                Arguments.of("throttled", keep(EmulatorClients.dynamoDown(answering(400, "ThrottlingException")))),
                Arguments.of("provisioned throughput exceeded",
                        keep(EmulatorClients.dynamoDown(answering(400, "ProvisionedThroughputExceededException")))),
                Arguments.of("internal server error", keep(EmulatorClients.dynamoDown(answering(500, "InternalServerError")))));
    }

    /**
     * Answers that refuse every call alike, whatever the item: a role that lost its permission, credentials that expired or
     * were revoked, a table that is not there. They are the system's fault, like an outage; taken for an answer about the
     * job, the worker went on receiving while every copy failed, until SQS's redrive moved the backlog to the DLQ.
     */
    static Stream<Arguments> refusals() {
        return Stream.of(
                Arguments.of("access denied", keep(EmulatorClients.dynamoDown(answering(400, "AccessDeniedException")))),
                Arguments.of("unrecognized client", keep(EmulatorClients.dynamoDown(answering(400, "UnrecognizedClientException")))),
                Arguments.of("expired token", keep(EmulatorClients.dynamoDown(answering(400, "ExpiredTokenException")))),
                Arguments.of("bad signature", keep(EmulatorClients.dynamoDown(answering(400, "InvalidSignatureException")))),
                Arguments.of("missing table", keep(EmulatorClients.dynamoDown(answering(400, "ResourceNotFoundException")))),
                Arguments.of("forbidden", keep(EmulatorClients.dynamoDown(answering(403, "Forbidden")))));
    }

    static Stream<Arguments> outagesAndRefusals() {
        return Stream.concat(outages(), refusals());
    }

    /**
     * The ledger's calls, which the hot path makes before and after every handler: an outage or a refusal must reach the
     * pipeline as {@link StoreUnavailable} of the ledger, which closes the ledger gate (consumption pauses, nothing is
     * charged); a refusal is a write that did not land.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("outagesAndRefusals")
    void theLedgersReadsAndWritesAnswerStoreUnavailable(String outage, DynamoDbClient dynamo) {
        DynamoLedgerStore ledger = new DynamoLedgerStore(dynamo, new Names("down").ledgerTable(), Clock.systemUTC());
        Instant now = Instant.now();
        StoreUnavailable read = assertThrows(StoreUnavailable.class, () -> ledger.find(JOB), "find when " + outage);
        StoreUnavailable write = assertThrows(StoreUnavailable.class,
                () -> ledger.write(io.poisonguard.ledger.LedgerRecord.fresh(JOB.jobId(), JOB.tenant(), "permit-report", 1, now)),
                "write when " + outage);
        assertAll(() -> assertTrue(read.ledger(), outage), () -> assertTrue(write.ledger(), outage));
        if (!Set.of("nothing listening", "throttled", "provisioned throughput exceeded", "internal server error").contains(outage)) {
            assertFalse(write.outcomeUnknown(), "a refused write did not land: " + outage);
        }
    }

    @AfterAll
    static void close() {
        CLIENTS.forEach(DynamoDbClient::close);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("outagesAndRefusals")
    void everyCallOfTheQuarantineTenantAuditAndBulkReplayStoresAnswersStoreUnavailable(String outage, DynamoDbClient dynamo) {
        Names names = new Names("down");
        Clock clock = Clock.systemUTC();
        Instant now = clock.instant();
        DynamoQuarantineStore quarantine = new DynamoQuarantineStore(dynamo, names.quarantineTable(), clock);
        DynamoAuditLog audit = new DynamoAuditLog(dynamo, names.auditTable(), clock);
        DynamoTenantDirectory tenants = new DynamoTenantDirectory(dynamo, names.tenantsTable());
        DynamoBulkReplayStore bulk = new DynamoBulkReplayStore(dynamo, names.bulkReplaysTable(), clock);
        QuarantineQuery all = new QuarantineQuery(Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(),
                50, Optional.empty());
        // A listing that goes on from a cursor: a throttle (a 400) must not be taken for a cursor DynamoDB refused.
        QuarantineQuery onward = new QuarantineQuery(Optional.of(FailureClass.PERMANENT), Optional.empty(), Optional.empty(),
                Optional.empty(), Optional.empty(), 50, Optional.of(Cursors.PROCESS.encode(Map.of("jobId", Attrs.s(JOB.storage())))));

        Map<String, Executable> calls = new LinkedHashMap<>();
        calls.put("DynamoQuarantineStore.find", () -> quarantine.find(JOB));
        calls.put("DynamoQuarantineStore.keysOf", () -> quarantine.keysOf("job-1", now));
        calls.put("DynamoQuarantineStore.list", () -> quarantine.list(all, now));
        calls.put("DynamoQuarantineStore.list from a cursor", () -> quarantine.list(onward, now));
        calls.put("DynamoQuarantineStore.byClass", () -> quarantine.byClass(FailureClass.PERMANENT, now, 10));
        calls.put("DynamoQuarantineStore.updateStatus", () -> quarantine.updateStatus(JOB, QuarantineStatus.RESOLVED, Optional.empty()));
        calls.put("DynamoQuarantineStore.acknowledge", () -> quarantine.acknowledge(JOB, "olga", now));
        calls.put("DynamoQuarantineStore.waiting", () -> quarantine.waiting(FailureClass.PERMANENT, now, 10));
        calls.put("DynamoAuditLog.append", () -> audit.append(new AuditEntry("job-1", "acme", now, "olga", AuditAction.RESOLVE, "why",
                "test", 1, 1, "RESOLVED", null)));
        calls.put("DynamoAuditLog.forJob", () -> audit.forJob("job-1", 10));
        calls.put("DynamoAuditLog.forTenantsJob", () -> audit.forTenantsJob(List.of("t"), "job-1", 10));
        calls.put("DynamoAuditLog.recent of a tenant", () -> audit.recent(Optional.of("acme"), 10, Optional.empty()));
        calls.put("DynamoAuditLog.recent across tenants", () -> audit.recent(10));
        calls.put("DynamoTenantDirectory.find", () -> tenants.find("acme"));
        calls.put("DynamoTenantDirectory.put", () -> tenants.put(new Tenant("acme", TenantStatus.ACTIVE, Set.of("permit-report"), now, "ada")));
        calls.put("DynamoBulkReplayStore.find", () -> bulk.find("b-1"));
        calls.put("DynamoBulkReplayStore.put", () -> bulk.put(new BulkReplay("b-1", "olga", "why", "acme", FailureClass.PERMANENT, 1,
                BulkReplay.Status.WIDENING, null, null, List.of(), now, now, null, null, 0, 0)));

        assertAll(calls.entrySet().stream().map(call -> () -> assertThrows(StoreUnavailable.class, call.getValue(),
                call.getKey() + " when " + outage)));
    }
}
