package io.poisonguard.api;

import io.poisonguard.quarantine.QuarantinePage;
import io.poisonguard.quarantine.QuarantineQuery;
import io.poisonguard.quarantine.QuarantineStore;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * The overview reads only waiting records, but records no longer waiting (replayed, resolved) stay in the listing until
 * their expiry and match nothing: each page (itself bounded by the listing's read budget) came back short with a cursor,
 * and the overview followed the cursors to the end of the table for one viewer's request.
 */
class OverviewReadBudgetTest {
    /** A listing where every tenant's pages go on for ever, none holding a waiting record. */
    private static QuarantineStore endless(List<Optional<String>> asked) {
        return (QuarantineStore) Proxy.newProxyInstance(OverviewReadBudgetTest.class.getClassLoader(), new Class<?>[]{QuarantineStore.class},
                (proxy, method, args) -> {
                    if (!method.getName().equals("list")) {
                        throw new AssertionError("the overview only lists, called " + method.getName());
                    }
                    QuarantineQuery q = (QuarantineQuery) args[0];
                    asked.add(q.tenant());
                    if (asked.size() > 1_000) {
                        throw new AssertionError("the overview read 1000 pages and was still going");
                    }
                    return new QuarantinePage(List.of(), "more");
                });
    }

    @Test
    void aTokenOfEveryTenantReadsAtMostTheSharedPages() {
        List<Optional<String>> asked = new ArrayList<>();

        OverviewResource.Waiting read = OverviewResource.waiting(endless(asked), List.of(Optional.empty()), Instant.now());

        assertEquals(OverviewResource.MAX_PAGES + 1, asked.size(), "pages read");
        assertFalse(read.complete(), "the answer says it stopped short");
    }

    @Test
    void everyTenantOfAScopedTokenIsReadEvenWhenTheFirstCouldUseTheWholeBudget() {
        List<Optional<String>> asked = new ArrayList<>();

        OverviewResource.Waiting read = OverviewResource.waiting(endless(asked),
                List.of(Optional.of("t-a"), Optional.of("t-b"), Optional.of("t-c")), Instant.now());

        assertEquals(OverviewResource.MAX_PAGES + 3, asked.size(), "pages read");
        assertEquals(OverviewResource.MAX_PAGES + 1, asked.stream().filter(t -> t.equals(Optional.of("t-a"))).count(), "the first tenant's");
        assertEquals(1, asked.stream().filter(t -> t.equals(Optional.of("t-b"))).count(), "the second tenant's first page");
        assertEquals(1, asked.stream().filter(t -> t.equals(Optional.of("t-c"))).count(), "the third tenant's first page");
        assertFalse(read.complete());
    }
}
