package io.poisonguard.replay;

import io.poisonguard.admission.Diagnostics;
import io.poisonguard.audit.AuditEntry;
import io.poisonguard.config.Configs;
import io.poisonguard.config.PoisonGuardConfig;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.ledger.JobKey;
import io.poisonguard.ledger.JobState;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.ledger.LedgerStore;
import io.poisonguard.quarantine.DeadLetterCopy;
import io.poisonguard.quarantine.QuarantinePage;
import io.poisonguard.quarantine.QuarantineRecord;
import io.poisonguard.quarantine.QuarantineStatus;
import io.poisonguard.quarantine.QuarantineStore;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * After its canary succeeded, a bulk replay sent every other job of the batch at the replay rate and never read how they
 * came out: a fix that held for the canary but not for the rest sent the whole batch back to fail, until the systemic guard
 * stopped consumption for every tenant. It now widens in waves, reads each wave's outcomes before the next, and halts on a job
 * parked again or a tripped guard. Its kept state names the job whose replay is under way, it is audited when it starts, and
 * one whose instance stopped reads as abandoned; a canary that could not be sent is followed by the next job as canary.
 */
class BulkWideningTest {
    private static final String TENANT = "acme";

    /** The ledger, the operator actions, the kept states and the audit trail of one batch, in memory. */
    private static final class Rig {
        final Map<JobKey, LedgerRecord> ledger = new ConcurrentHashMap<>();
        final Map<String, BulkReplay> kept = new ConcurrentHashMap<>();
        final List<AuditEntry> audit = new CopyOnWriteArrayList<>();
        final List<String> replayed = new CopyOnWriteArrayList<>();
        final List<String> reasons = new CopyOnWriteArrayList<>();
        /** Jobs whose replayed generation a read found SUCCEEDED. */
        final Set<String> readSucceeded = ConcurrentHashMap.newKeySet();
        final List<String> violations = new CopyOnWriteArrayList<>();
        final AtomicBoolean tripped = new AtomicBoolean();
        final Set<String> failAgain = ConcurrentHashMap.newKeySet();
        final Set<String> notSent = ConcurrentHashMap.newKeySet();
        String tripAt;
        final Set<String> neverEnd = ConcurrentHashMap.newKeySet();
        final Set<String> sendFails = ConcurrentHashMap.newKeySet();
        /** Jobs the dry run refuses so (the batch does not try them). */
        final Map<String, ActionOutcome> dryRefused = new ConcurrentHashMap<>();
        /** Jobs replayed again by another action right after this batch's replay (a newer generation). */
        final Set<String> movedOn = ConcurrentHashMap.newKeySet();
        /** Jobs whose replay is refused so. */
        final Map<String, Refusal> refused = new ConcurrentHashMap<>();
        /** Read as another job's: trips the guard when it is read (the batch then watches). */
        String tripOnRead;
        /** Released by the test: the replay of the first job waits for it. */
        CountDownLatch firstReplay = new CountDownLatch(0);
        final List<String> jobs;
        final BulkReplays bulk;
        BulkReplays otherInstance;

        Rig(int count) {
            this(count, c -> c, Duration.ofSeconds(30));
        }

        Rig(int count, java.util.function.UnaryOperator<Configs> settings, Duration touch) {
            jobs = IntStream.rangeClosed(1, count).mapToObj(i -> String.format("j-%02d", i)).toList();
            Instant then = Instant.now().minus(Duration.ofHours(1));
            jobs.forEach(j -> ledger.put(JobKey.of(TENANT, j), LedgerRecord.fresh(j, TENANT, "permit-report", 1, then)
                    .moveTo(JobState.ACTIVE, then).moveTo(JobState.QUARANTINED, then)));
            PoisonGuardConfig config = settings.apply(Configs.defaults().set("poison-guard.replay.canary-timeout", "5s")).build();
            bulk = instance(config, touch);
            otherInstance = instance(config, touch);
        }

        /** One instance of the service over this rig's stores. */
        private BulkReplays instance(PoisonGuardConfig config, Duration touch) {
            return new BulkReplays(actions(config), listing(), ledgerStore(), ReplayFakes.audit(audit), store(), Clock.systemUTC(), new CodeVersion("test"),
                    config, () -> tripped.get() ? Optional.of("tripped by the test") : Optional.empty(), touch);
        }

        private OperatorActions actions(PoisonGuardConfig config) {
            return new OperatorActions(null, null, null, null, null, null, null, Clock.systemUTC(), null, config, ReplayQuota.NONE) {
                @Override
                public ActionOutcome dryRun(JobKey key) {
                    return dryRefused.getOrDefault(key.jobId(), new ActionOutcome.WouldReplay(key.jobId(), 2, 2));
                }

                @Override
                public ActionOutcome replay(JobKey key, String actor, String reason) {
                    String job = key.jobId();
                    if (replayed.isEmpty()) {
                        try {
                            firstReplay.await(30, java.util.concurrent.TimeUnit.SECONDS);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }
                    BulkReplay now = kept.values().iterator().next();
                    BulkReplay.Step last = now.outcomes().isEmpty() ? null : now.outcomes().get(now.outcomes().size() - 1);
                    if (last == null || !last.jobId().equals(job) || !last.outcome().equals("SENDING")) {
                        violations.add("while " + job + " was replayed the kept state's last step was " + last);
                    }
                    if (audit.stream().noneMatch(e -> e.outcome().equals("STARTED"))) {
                        violations.add("no STARTED audit entry when " + job + " was replayed");
                    }
                    String wave = reason.substring(reason.lastIndexOf(", ") + 2, reason.length() - 1);
                    if (!reasons.isEmpty() && !reasons.get(reasons.size() - 1).endsWith(", " + wave + "]")) {
                        replayed.stream().filter(j -> !notSent.contains(j) && !readSucceeded.contains(j))
                                .forEach(j -> violations.add(wave + " began before " + j + " was read SUCCEEDED"));
                    }
                    replayed.add(job);
                    reasons.add(reason);
                    if (job.equals(tripAt)) {
                        tripped.set(true);
                    }
                    if (notSent.contains(job)) {
                        return new ActionOutcome.Unrecoverable(job, "no dead-letter copy is left");
                    }
                    if (refused.containsKey(job)) {
                        return new ActionOutcome.Refused(job, refused.get(job), "refused by the test");
                    }
                    if (sendFails.contains(job)) {
                        return new ActionOutcome.Refused(job, Refusal.SEND_FAILED, "the main queue did not take the replayed message");
                    }
                    Instant t = Instant.now();
                    LedgerRecord replaying = LedgerRecord.fresh(job, TENANT, "permit-report", movedOn.contains(job) ? 3 : 2, t)
                            .moveTo(JobState.ACTIVE, t);
                    ledger.put(key, neverEnd.contains(job) ? replaying
                            : failAgain.contains(job) ? replaying.moveTo(JobState.QUARANTINED, t) : replaying.moveTo(JobState.SUCCEEDED, t));
                    return new ActionOutcome.Replayed(job, 2, 2);
                }
            };
        }

        private QuarantineStore listing() {
            Instant now = Instant.now();
            List<QuarantineRecord> records = jobs.stream().map(j -> new QuarantineRecord(j, TENANT, "permit-report", 1, FailureClass.PERMANENT,
                    "PERMANENT limit reached", 1, Map.of(FailureClass.PERMANENT, 1), new Diagnostics(10, "UTF-8", null, null, 3, null),
                    List.of(), now, now, now, now.plus(Duration.ofDays(14)), "m-" + j, QuarantineStatus.QUARANTINED, List.of(), null,
                    DeadLetterCopy.sent("d-" + j), null)).toList();
            return (QuarantineStore) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[]{QuarantineStore.class},
                    (proxy, method, args) -> {
                        if (!method.getName().equals("list")) {
                            throw new AssertionError("a selection only lists, called " + method.getName());
                        }
                        return new QuarantinePage(records, null);
                    });
        }

        private LedgerStore ledgerStore() {
            return new LedgerStore() {
                @Override
                public Optional<LedgerRecord> find(JobKey key) {
                    if (key.jobId().equals(tripOnRead)) {
                        tripped.set(true);
                    }
                    LedgerRecord r = ledger.get(key);
                    if (r != null && r.generation() == 2 && r.state() == JobState.SUCCEEDED) {
                        readSucceeded.add(key.jobId());
                    }
                    return Optional.ofNullable(r);
                }

                @Override
                public LedgerRecord write(LedgerRecord next) {
                    throw new AssertionError("the batch only reads the ledger; its replays write it");
                }
            };
        }

        private BulkReplayStore store() {
            return new BulkReplayStore() {
                @Override
                public void put(BulkReplay batch) {
                    kept.put(batch.id(), batch);
                }

                @Override
                public Optional<BulkReplay> find(String id) {
                    return Optional.ofNullable(kept.get(id));
                }
            };
        }

        BulkReplay start() {
            return bulk.start(new BulkRequest(TENANT, FailureClass.PERMANENT, Optional.empty(), 100, "reader fixed"), "olga");
        }

        BulkReplay runToEnd() {
            return awaitEnd(start(), Duration.ofSeconds(30));
        }

        BulkReplay awaitEnd(BulkReplay started, Duration atMost) {
            await().atMost(atMost).until(() -> !bulk.find(started.id()).orElseThrow().status().running());
            return bulk.find(started.id()).orElseThrow();
        }

        Map<String, Long> perWave() {
            return reasons.stream().map(r -> r.substring(r.lastIndexOf(", ") + 2, r.length() - 1))
                    .collect(Collectors.groupingBy(w -> w, java.util.TreeMap::new, Collectors.counting()));
        }

        String step(BulkReplay batch, String job) {
            return batch.outcomes().stream().filter(s -> s.jobId().equals(job)).map(BulkReplay.Step::outcome).findFirst().orElse("none");
        }
    }

    @Test
    void aJobThatFailsAgainAfterTheCanaryHaltsTheWideningBeforeTheRestAreSent() {
        Rig rig = new Rig(30);
        rig.failAgain.add("j-03");

        BulkReplay batch = rig.runToEnd();

        assertEquals("HALTED", batch.status().name(), batch.detail());
        assertEquals(List.of("j-01", "j-02", "j-03"), rig.replayed, "the canary and the first wave only");
        assertEquals("FAILED_AGAIN", rig.step(batch, "j-03"));
        assertTrue(batch.detail().contains("j-03") && batch.detail().contains("27"), batch.detail());
        assertEquals(27, rig.jobs.stream().filter(j -> rig.ledger.get(JobKey.of(TENANT, j)).generation() == 1).count(),
                "the 27 jobs not sent stay quarantined");
    }

    @Test
    void wavesGrowAndEachIsSentOnlyOnceEveryEarlierJobIsReadSucceeded() {
        Rig rig = new Rig(30, c -> c.set("poison-guard.systemic.same-signature", "50").set("poison-guard.systemic.max-quarantines", "200"),
                Duration.ofSeconds(30));

        BulkReplay batch = rig.runToEnd();

        assertEquals("COMPLETED", batch.status().name(), batch.detail());
        assertEquals(rig.jobs, rig.replayed);
        assertEquals(Map.of("canary", 1L, "wave 1", 2L, "wave 2", 4L, "wave 3", 8L, "wave 4", 15L), rig.perWave());
        assertTrue(batch.detail().contains("30 succeeded"), batch.detail());
        assertTrue(rig.violations.isEmpty(), String.join("\n", rig.violations));
    }

    @Test
    void aSystemicTripWhileWideningHaltsTheBatch() {
        Rig rig = new Rig(30);
        rig.tripAt = "j-02";

        BulkReplay batch = rig.runToEnd();

        assertEquals("HALTED", batch.status().name(), batch.detail());
        assertEquals(List.of("j-01", "j-02"), rig.replayed, "nothing is sent once consumption has stopped");
        assertTrue(batch.detail().contains("tripped by the test"), batch.detail());
    }

    @Test
    void aCanaryThatCouldNotBeSentIsFollowedByTheNextJobAsCanary() {
        Rig rig = new Rig(5);
        rig.notSent.add("j-01");

        BulkReplay batch = rig.runToEnd();

        assertEquals("COMPLETED", batch.status().name(), batch.detail());
        assertEquals("j-02", batch.canaryJobId());
        assertEquals("UNRECOVERABLE", rig.step(batch, "j-01"));
    }

    @Test
    void theKeptStateNamesTheJobWhoseReplayIsUnderWayAndTheBatchIsAuditedWhenItStarts() {
        Rig rig = new Rig(8);

        BulkReplay batch = rig.runToEnd();

        assertEquals("COMPLETED", batch.status().name(), batch.detail());
        assertTrue(rig.violations.isEmpty(), String.join("\n", rig.violations));
        // The end is shown as soon as it is reached, and audited then.
        await().atMost(Duration.ofSeconds(10)).until(() -> rig.audit.size() == 2);
        assertEquals(List.of("STARTED", "COMPLETED"), rig.audit.stream().map(AuditEntry::outcome).toList());
        assertTrue(rig.audit.get(0).detail().contains("j-01, j-02"), rig.audit.get(0).detail());
    }

    @Test
    void aBatchKeptAsRunningButNotWrittenForMinutesReadsAsAbandonedNamingTheJobUnderWay() {
        Rig rig = new Rig(1);
        Instant then = Instant.now().minus(Duration.ofMinutes(10));
        rig.kept.put("b-1", new BulkReplay("b-1", "olga", "reader fixed", TENANT, FailureClass.PERMANENT, 9, BulkReplay.Status.WIDENING,
                "j-01", "SUCCEEDED", List.of(new BulkReplay.Step("j-01", "REPLAYED", "generation 2"),
                new BulkReplay.Step("j-02", "SENDING", "its replay is under way")), then, then, null, "9 jobs selected", 0, 0));

        BulkReplay read = rig.bulk.find("b-1").orElseThrow();

        assertEquals("ABANDONED", read.status().name());
        assertTrue(read.detail().contains("j-02") && read.detail().contains(then.toString()), read.detail());
        assertEquals("WIDENING", rig.kept.get("b-1").status().name(), "read so, never written so");
    }

    /**
     * With the systemic guard's defaults (5 same-signature failures, 20 quarantines a minute) no wave is wider than 4: a wave
     * that fails whole halts the batch before the guard stops consumption for every tenant on its account.
     */
    @Test
    void noWaveIsWiderThanTheSystemicGuardTolerates() {
        Rig rig = new Rig(30);

        BulkReplay batch = rig.runToEnd();

        assertEquals("COMPLETED", batch.status().name(), batch.detail());
        assertEquals(rig.jobs, rig.replayed);
        assertEquals(4L, rig.perWave().values().stream().mapToLong(Long::longValue).max().orElseThrow(), rig.perWave().toString());
    }

    @Test
    void aWaveWhoseJobsHaveNotEndedWithinTheTimeoutHaltsTheBatchAndSaysWhich() {
        Rig rig = new Rig(10, c -> c.set("poison-guard.replay.canary-timeout", "1s"), Duration.ofSeconds(30));
        rig.neverEnd.add("j-03");

        BulkReplay batch = rig.runToEnd();

        assertEquals("HALTED", batch.status().name(), batch.detail());
        assertEquals(List.of("j-01", "j-02", "j-03"), rig.replayed);
        assertEquals("NOT_ENDED", rig.step(batch, "j-03"));
        assertTrue(batch.detail().contains("had not ended") && batch.detail().contains("7 jobs stay quarantined"), batch.detail());
    }

    @Test
    void aReplayThatMetADependencyNotAnsweringHaltsTheWidening() {
        Rig rig = new Rig(10);
        rig.sendFails.add("j-02");

        BulkReplay batch = rig.runToEnd();

        assertEquals("HALTED", batch.status().name(), batch.detail());
        assertEquals(List.of("j-01", "j-02"), rig.replayed, "nothing more is tried once the main queue did not take one");
        assertTrue(batch.detail().contains("SEND_FAILED"), batch.detail());
    }

    /**
     * A vault entry that does not open (its key left {@code previous-keys}) or a dead-letter queue deeper than one scan: each
     * such job moved to REPLAYING, scanned the whole DLQ and was put back; waves shrank to one job and the batch walked all of
     * its jobs, hours of scans, to end COMPLETED. A 503-class refusal halts the widening as a dependency not answering does.
     */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.EnumSource(value = Refusal.class, names = {"PAYLOAD_UNREADABLE", "PAYLOAD_NOT_FOUND_YET"})
    void aRefusalThatTheNextJobsWouldMeetTooHaltsTheWidening(Refusal refusal) {
        Rig rig = new Rig(10);
        rig.refused.put("j-02", refusal);

        BulkReplay batch = rig.runToEnd();

        assertEquals("HALTED", batch.status().name(), batch.detail());
        assertEquals(List.of("j-01", "j-02"), rig.replayed, "nothing more is tried after " + refusal);
        assertTrue(batch.detail().contains(refusal.name()), batch.detail());
    }

    /**
     * Jobs of the selection the dry run refuses (their replay under way, their quarantine still completing) were dropped before
     * the batch started: neither counted in {@code selected} nor listed, so a batch of 10 selected with 3 dropped ended
     * COMPLETED "7 of 7" and the command exited 0 while 3 matching jobs stayed quarantined.
     */
    @Test
    void selectedJobsTheBatchCannotReplayNowAreCountedAndListedWithWhy() {
        Rig rig = new Rig(10);
        rig.dryRefused.put("j-04", new ActionOutcome.Refused("j-04", Refusal.CONFLICT, "the quarantine of job j-04 is still completing"));
        rig.dryRefused.put("j-07", new ActionOutcome.Refused("j-07", Refusal.NOT_QUARANTINED, "job j-07 is REPLAYING"));

        BulkReplay batch = rig.runToEnd();

        assertEquals("COMPLETED", batch.status().name(), batch.detail());
        assertEquals(10, batch.selected(), "every selected job is counted");
        assertFalse(rig.replayed.contains("j-04") || rig.replayed.contains("j-07"), rig.replayed.toString());
        assertEquals("REFUSED_CONFLICT", rig.step(batch, "j-04"));
        assertEquals("REFUSED_NOT_QUARANTINED", rig.step(batch, "j-07"));
        assertTrue(batch.detail().contains("2 selected job(s) could not be replayed now"), batch.detail());
    }

    /** A job replayed again by another action while its wave was watched: its outcome is that action's, not a success here. */
    @Test
    void aJobReplayedAgainByAnotherActionIsNotCountedAsReplayedHere() {
        Rig rig = new Rig(6);
        rig.movedOn.add("j-02");

        BulkReplay batch = rig.runToEnd();

        assertEquals("REPLAYED_AGAIN", rig.step(batch, "j-02"), batch.outcomes().toString());
    }

    @Test
    void aCanaryIsTriedOnThreeJobsAtMost() {
        Rig rig = new Rig(10);
        rig.notSent.addAll(List.of("j-01", "j-02", "j-03", "j-04"));

        BulkReplay batch = rig.runToEnd();

        assertEquals("CANARY_FAILED", batch.status().name(), batch.detail());
        assertEquals(List.of("j-01", "j-02", "j-03"), rig.replayed);
        assertEquals(null, batch.canaryJobId(), "no job went out as canary");
    }

    @Test
    void aBatchStartedWhileConsumptionIsStoppedReplaysNothing() {
        Rig rig = new Rig(10);
        rig.tripped.set(true);

        BulkReplay batch = rig.runToEnd();

        assertEquals("HALTED", batch.status().name(), batch.detail());
        assertEquals(List.of(), rig.replayed);
    }

    @Test
    void aCanaryThatFailedIsAFailedCanaryEvenWhenTheGuardTripsOnIt() {
        Rig rig = new Rig(10);
        rig.failAgain.add("j-01");
        rig.tripAt = "j-01";

        BulkReplay batch = rig.runToEnd();

        assertEquals("CANARY_FAILED", batch.status().name(), batch.detail());
    }

    /** The guard trips while a wave is watched (its jobs not ended): the watch stops at once, not at the timeout. */
    @Test
    void aTripWhileAWaveIsWatchedStopsTheWatchAtOnce() {
        Rig rig = new Rig(10, c -> c.set("poison-guard.replay.canary-timeout", "60s"), Duration.ofSeconds(30));
        rig.neverEnd.addAll(List.of("j-02", "j-03"));
        rig.tripOnRead = "j-03";

        BulkReplay batch = rig.awaitEnd(rig.start(), Duration.ofSeconds(15));

        assertEquals("HALTED", batch.status().name(), batch.detail());
        assertTrue(batch.detail().contains("consumption stopped"), batch.detail());
    }

    /**
     * A batch whose step takes longer than the time after which a kept state reads abandoned (a slow replay, a wave watched) is
     * still read as running by another instance: its state is written again while it waits.
     */
    @Test
    void aLiveBatchBlockedInAStepDoesNotReadAsAbandonedOnAnotherInstance() {
        Rig rig = new Rig(3, c -> c, Duration.ofMillis(300));
        rig.firstReplay = new CountDownLatch(1);
        BulkReplay started = rig.start();

        await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(5))
                .until(() -> rig.otherInstance.find(started.id()).orElseThrow().status() == BulkReplay.Status.CANARY_RUNNING);
        rig.firstReplay.countDown();

        assertEquals("COMPLETED", rig.awaitEnd(started, Duration.ofSeconds(30)).status().name());
        assertEquals("COMPLETED", rig.otherInstance.find(started.id()).orElseThrow().status().name());
    }
}
