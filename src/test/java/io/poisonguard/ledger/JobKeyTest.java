package io.poisonguard.ledger;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The one place a stored key string is read back into a job's key (issue 11, tenant-scoped identity). */
class JobKeyTest {

    @Test
    void aScopedKeyAnUnscopedOneAndAKeyFromBeforeScopingReadBack() {
        JobKey scoped = new JobKey("acme", "a/b");
        assertEquals(scoped, JobKey.fromStorage(scoped.storage(), "acme"), "a job id may hold the separator");
        assertEquals(new JobKey(null, "j-1"), JobKey.fromStorage("/j-1", "unknown"), "a copy that named no valid tenant");
        assertEquals(new JobKey("acme", "j-1"), JobKey.fromStorage("j-1", "acme"), "an item keyed by the bare job id");
    }

    @Test
    void onlyTheTenantItNamesOwnsARecord() {
        JobKey key = new JobKey("acme", "j-1");
        assertTrue(JobKey.validTenant("acme") && !JobKey.validTenant("a/b") && !JobKey.validTenant("x".repeat(65)));
        assertEquals(new JobKey(null, "j-1"), JobKey.of("not valid!", "j-1"));
        assertFalse(key.storage().equals(new JobKey("other", "j-1").storage()));
    }
}
