package io.poisonguard.dynamodb;

import io.poisonguard.admission.Diagnostics;
import io.poisonguard.config.Names;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.quarantine.DeadLetterCopy;
import io.poisonguard.quarantine.QuarantinePage;
import io.poisonguard.quarantine.QuarantineQuery;
import io.poisonguard.quarantine.QuarantineRecord;
import io.poisonguard.quarantine.QuarantineStatus;
import io.poisonguard.testing.EmulatorClients;
import io.poisonguard.testing.Emulators;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * A listing filtered to one tenant reads the class's index, every tenant's records, and a page that stops at its read
 * budget ends on the last record the query read. Its cursor was that record's key, only encoded: a viewer scoped to one
 * tenant who decoded it read another tenant's name and job id. Cursors are sealed now.
 */
class CursorSealTest {
    static final int BUDGET = 5;
    static DynamoDbClient dynamo;
    static DynamoQuarantineStore store;

    @BeforeAll
    static void table() {
        dynamo = EmulatorClients.dynamo(Emulators.shared());
        Names names = new Names("cs" + UUID.randomUUID().toString().substring(0, 6));
        new TableBootstrap(dynamo, names).ensureTables();
        store = new DynamoQuarantineStore(dynamo, names.quarantineTable(), Clock.systemUTC(), BUDGET);
        Instant now = Instant.now();
        // One record of tenant-a for every four of tenant-b, in the order the class's index reads them.
        for (int i = 0; i < 40; i++) {
            boolean mine = i % 5 == 0;
            String tenant = mine ? "tenant-a" : "tenant-b";
            String job = mine ? "own-" + i : "secret-b-" + i;
            store.putIfAbsent(new QuarantineRecord(job, tenant, "permit-report", 1, FailureClass.PERMANENT, "PERMANENT limit reached", 1,
                    Map.of(FailureClass.PERMANENT, 1), new Diagnostics(10, "UTF-8", null, null, 3, null), List.of(), now, now,
                    now.minusSeconds(100 - i), now.plus(Duration.ofDays(14)), "m-" + i, QuarantineStatus.QUARANTINED, List.of(), null,
                    DeadLetterCopy.sent("d-" + i), null));
        }
    }

    @AfterAll
    static void close() {
        dynamo.close();
    }

    @Test
    void aTenantsListingNeverHandsOutAnotherTenantsKeyInItsCursorAndItsCursorsStillLeadThroughEveryRecord() {
        List<String> found = new ArrayList<>();
        Optional<String> cursor = Optional.empty();
        int pages = 0;
        do {
            QuarantinePage page = store.list(new QuarantineQuery(Optional.of(FailureClass.PERMANENT), Optional.of("tenant-a"), Optional.empty(),
                    Optional.of(QuarantineStatus.QUARANTINED), Optional.empty(), 50, cursor), Instant.now());
            page.items().forEach(r -> found.add(r.jobId()));
            cursor = Optional.ofNullable(page.nextCursor());
            cursor.ifPresent(c -> {
                String opened = new String(Base64.getUrlDecoder().decode(c), StandardCharsets.ISO_8859_1);
                assertFalse(opened.contains("secret-b") || opened.contains("tenant-b"), "the cursor names another tenant's record: " + opened);
            });
            pages++;
        } while (cursor.isPresent() && pages < 100);

        assertEquals(8, found.size(), "every record of tenant-a, page by page: " + found);
    }

    @Test
    void aCursorThatWasAlteredIsRefused() {
        QuarantinePage page = store.list(new QuarantineQuery(Optional.of(FailureClass.PERMANENT), Optional.of("tenant-a"), Optional.empty(),
                Optional.of(QuarantineStatus.QUARANTINED), Optional.empty(), 50, Optional.empty()), Instant.now());
        String cursor = page.nextCursor();
        char last = cursor.charAt(cursor.length() / 2);
        String altered = cursor.substring(0, cursor.length() / 2) + (last == 'A' ? 'B' : 'A') + cursor.substring(cursor.length() / 2 + 1);

        assertThrows(IllegalArgumentException.class, () -> store.list(new QuarantineQuery(Optional.of(FailureClass.PERMANENT),
                Optional.of("tenant-a"), Optional.empty(), Optional.of(QuarantineStatus.QUARANTINED), Optional.empty(), 50,
                Optional.of(altered)), Instant.now()));
    }

    /** A rotation of the vault's key: cursors given before it still open while the old key is among the previous keys. */
    @Test
    void aCursorSealedBeforeARotationOpensWhileTheOldKeyIsStillAPreviousOne() {
        byte[] old = new byte[32];
        byte[] rotated = new byte[32];
        java.util.Arrays.fill(rotated, (byte) 7);
        Map<String, software.amazon.awssdk.services.dynamodb.model.AttributeValue> key = Map.of("jobKey", Attrs.s("tenant-a/job-1"));
        String given = Cursors.derivedFrom(old, List.of()).encode(key);

        assertEquals(key, Cursors.derivedFrom(rotated, List.of(old)).decode(given));
        assertThrows(IllegalArgumentException.class, () -> Cursors.derivedFrom(rotated, List.of()).decode(given),
                "refused once the old key is dropped");
    }
}
