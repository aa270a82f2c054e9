package io.poisonguard.owners;

import io.poisonguard.config.Configs;
import io.poisonguard.config.Settings;
import io.quarkus.runtime.configuration.ConfigurationException;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Issue 13: who owns a quarantined job, when it is overdue, and the ownership settings a boot refuses. */
class OwnerMapTest {
    static final Duration H4 = Duration.ofHours(4);
    static final Duration D3 = Duration.ofDays(3);
    final OwnerMap map = new OwnerMap(List.of(
            new Owner("billing", Set.of("invoice", "refund"), Set.of(), H4, D3),
            new Owner("acme-billing", Set.of("invoice"), Set.of("acme"), Duration.ofHours(1), Duration.ofDays(1)),
            new Owner("acme-desk", Set.of(), Set.of("acme"), H4, D3)),
            new Owner("operations", Set.of(), Set.of(), H4, D3));

    @Test
    void theMostSpecificOwnerWinsAndANobodysJobGoesToTheDefaultFlagged() {
        assertEquals(new OwnerMap.Assignment("acme-billing", false), map.assign("acme", "invoice"), "type and tenant beat either");
        assertEquals(new OwnerMap.Assignment("acme-desk", false), map.assign("acme", "report"));
        assertEquals(new OwnerMap.Assignment("billing", false), map.assign("globex", "refund"));
        assertEquals(new OwnerMap.Assignment("operations", true), map.assign("globex", "report"));
        assertEquals(new OwnerMap.Assignment("operations", true), map.assign(null, null));
        assertEquals("operations", map.owner("a-team-since-removed").name(), "an unknown owner gets the default's deadlines");
    }

    @Test
    void ownersAreGroupedByEachStagesDeadlineAndTheDefaultsGroupStandsForEveryOwnerNotNamedInAnother() {
        // acme-billing acknowledges within 1 h; billing and acme-desk share the default's 4 h, so they stand in its group,
        // which also covers records of no owner or of one since removed (named nowhere).
        assertEquals(List.of(new OwnerMap.DeadlineGroup(Duration.ofHours(1), Set.of("acme-billing"), false),
                        new OwnerMap.DeadlineGroup(H4, Set.of("acme-billing"), true)),
                map.byDeadline(Owner::acknowledgeWithin));
        assertEquals(List.of(new OwnerMap.DeadlineGroup(Duration.ofDays(1), Set.of("acme-billing"), false),
                        new OwnerMap.DeadlineGroup(D3, Set.of("acme-billing"), true)),
                map.byDeadline(Owner::resolveWithin));
        OwnerMap slowTeam = new OwnerMap(List.of(new Owner("archive", Set.of("archive"), Set.of(), Duration.ofDays(1), Duration.ofDays(5))),
                new Owner("operations", Set.of(), Set.of(), H4, D3));
        assertEquals(List.of(new OwnerMap.DeadlineGroup(H4, Set.of("archive"), true),
                        new OwnerMap.DeadlineGroup(Duration.ofDays(1), Set.of("archive"), false)),
                slowTeam.byDeadline(Owner::acknowledgeWithin), "shortest first, whoever's it is");
        OwnerMap alike = new OwnerMap(List.of(), new Owner("operations", Set.of(), Set.of(), H4, D3));
        assertEquals(List.of(new OwnerMap.DeadlineGroup(H4, Set.of(), true)), alike.byDeadline(Owner::acknowledgeWithin),
                "one deadline: one read, every record");
    }

    @Test
    void eachStageIsOverdueOnceItsDeadlinePassesAndNotOnceEscalatedOrSettled() {
        Owner o = map.owner("billing");
        Instant q = Instant.parse("2026-12-01T00:00:00Z");
        assertEquals(List.of(), ReviewStage.overdue(o, q, false, false, Set.of(), q.plus(Duration.ofHours(3))));
        assertEquals(List.of(ReviewStage.ACKNOWLEDGE), ReviewStage.overdue(o, q, false, false, Set.of(), q.plus(Duration.ofHours(5))));
        assertEquals(List.of(), ReviewStage.overdue(o, q, true, false, Set.of(), q.plus(Duration.ofHours(5))), "acknowledged in time");
        assertEquals(List.of(), ReviewStage.overdue(o, q, false, false, Set.of("acknowledge"), q.plus(Duration.ofHours(5))), "escalated once");
        assertEquals(List.of(ReviewStage.ACKNOWLEDGE, ReviewStage.RESOLVE), ReviewStage.overdue(o, q, false, false, Set.of(), q.plus(Duration.ofDays(4))));
        assertEquals(List.of(), ReviewStage.overdue(o, q, false, true, Set.of(), q.plus(Duration.ofDays(4))), "settled: replayed or resolved");
    }

    @Test
    void aDeadlinePastTheRecordsRetentionOrAnOwnerOfNothingStopsTheBoot() {
        ConfigurationException dead = assertThrows(ConfigurationException.class, () -> Settings.owners(Configs.defaults()
                .set("poison-guard.ownership.owners.\"billing\".job-types", "invoice")
                .set("poison-guard.ownership.owners.\"billing\".resolve-within", "20d").build()));
        assertTrue(dead.getConfigKeys().contains("poison-guard.ownership.owners.\"billing\".resolve-within"), dead.getMessage());
        assertTrue(dead.getMessage().contains("retention.quarantine"), dead.getMessage());
        ConfigurationException nothing = assertThrows(ConfigurationException.class, () -> Settings.owners(Configs.defaults()
                .set("poison-guard.ownership.owners.\"idle\".webhook", "https://hooks.example.org/idle").build()));
        assertTrue(nothing.getMessage().contains("owns nothing") || nothing.getMessage().contains("would own nothing"), nothing.getMessage());
        assertThrows(ConfigurationException.class, () -> Settings.owners(Configs.defaults()
                .set("poison-guard.ownership.acknowledge-within", "5d").build()), "acknowledging after the resolve deadline");
        assertEquals("operations", Settings.owners(Configs.defaults().build()).fallback().name());
    }
}
