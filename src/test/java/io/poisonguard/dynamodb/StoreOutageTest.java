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
import static org.junit.jupiter.api.Assertions.assertThrows;

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

    @AfterAll
    static void close() {
        CLIENTS.forEach(DynamoDbClient::close);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("outages")
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
