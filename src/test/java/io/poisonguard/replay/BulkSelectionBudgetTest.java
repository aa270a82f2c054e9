package io.poisonguard.replay;

import io.poisonguard.config.Configs;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.quarantine.QuarantinePage;
import io.poisonguard.quarantine.QuarantineStore;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Each page of the quarantine listing reads at most the listing's read budget, but a bulk replay's selection (its dry
 * run is open to any viewer) followed the pages until it had its jobs or the index ran out. A selection nothing matches
 * (a job type no record has) thus read every record of the class, every tenant's: one request could read a whole index.
 */
class BulkSelectionBudgetTest {
    /** The most pages one selection reads: each bounded by the listing's read budget. */
    static final int PAGES = 10;

    @Test
    void aSelectionThatNothingMatchesStopsAfterABoundedNumberOfPagesAndSaysSo() {
        AtomicInteger pages = new AtomicInteger();
        List<Optional<String>> cursorsAsked = new java.util.ArrayList<>();
        // An index far larger than any bound: every page comes back empty with a cursor to go on.
        QuarantineStore endless = (QuarantineStore) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[]{QuarantineStore.class},
                (proxy, method, args) -> {
                    if (!method.getName().equals("list")) {
                        throw new AssertionError("a selection only lists, called " + method.getName());
                    }
                    cursorsAsked.add(((io.poisonguard.quarantine.QuarantineQuery) args[0]).cursor());
                    if (pages.incrementAndGet() > 1_000) {
                        throw new AssertionError("the selection read 1000 pages of the listing and was still going");
                    }
                    return new QuarantinePage(List.of(), "more-" + pages.get());
                });
        BulkReplays bulk = new BulkReplays(null, endless, null, null, null, Clock.systemUTC(), null, Configs.defaults().build(), Optional::empty);

        BulkReplays.Plan plan = bulk.plan(new BulkRequest("acme", FailureClass.PERMANENT, Optional.of("no-such-type"), 50, "look"));

        assertTrue(plan.jobs().isEmpty());
        assertEquals(PAGES, pages.get(), "pages read");
        assertTrue(!plan.complete(), "the answer says the selection stopped before the end of the listing");
        assertEquals("more-" + PAGES, plan.next(), "and where the listing goes on");

        // The next selection goes on from there, not from the listing's start (where it would meet the same pages for ever).
        cursorsAsked.clear();
        BulkReplays.Plan next = bulk.plan(new BulkRequest("acme", FailureClass.PERMANENT, Optional.of("no-such-type"), 50, "look",
                Optional.of(plan.next())));
        assertEquals(Optional.of("more-" + PAGES), cursorsAsked.get(0), "the first page read is the one after the last selection's");
        assertEquals("more-" + 2 * PAGES, next.next());
    }
}
