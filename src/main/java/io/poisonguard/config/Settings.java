package io.poisonguard.config;

import io.poisonguard.admission.AdmissionLimits;
import io.poisonguard.ladder.ClassPolicy;
import io.poisonguard.disposition.Policy;
import io.poisonguard.failure.ClassificationRule;
import io.poisonguard.failure.Classifier;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.ladder.Ladder;
import io.poisonguard.ladder.LadderLint;
import io.poisonguard.ladder.LadderReport;
import io.poisonguard.ladder.Reach;
import io.poisonguard.ladder.StopCondition;
import org.jboss.logging.Logger;
import io.quarkus.runtime.configuration.ConfigurationException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Turns {@link PoisonGuardConfig} into domain objects and refuses a configuration that cannot work,
 * naming the key. Runs at boot: a mistake stops the service before it touches a message.
 */
public final class Settings {
    private static final Logger LOG = Logger.getLogger(Settings.class);
    private static final String ROOT = "poison-guard.";
    private static final Duration SQS_MIN_RETENTION = Duration.ofSeconds(60);
    private static final Duration SQS_MAX_RETENTION = Duration.ofDays(14);

    private Settings() {
    }

    public static Map<FailureClass, PoisonGuardConfig.ClassSettings> classSettings(PoisonGuardConfig.Failures f) {
        Map<FailureClass, PoisonGuardConfig.ClassSettings> m = new EnumMap<>(FailureClass.class);
        m.put(FailureClass.PERMANENT, f.permanent());
        m.put(FailureClass.TRANSIENT, f.transientFailures());
        m.put(FailureClass.THROTTLED, f.throttled());
        m.put(FailureClass.DEPENDENCY_DOWN, f.dependencyDown());
        m.put(FailureClass.CRASH, f.crash());
        m.put(FailureClass.CRASH_AMBIGUOUS, f.crashAmbiguous());
        m.put(FailureClass.ADMISSION, f.admission());
        m.put(FailureClass.TIMEOUT, f.timeout());
        m.put(FailureClass.REDRIVEN, f.redriven());
        return m;
    }

    public static String classKey(FailureClass c, String leaf) {
        return ROOT + "failure." + c.key() + "." + leaf;
    }

    /** Builds the policy, failing with the offending key when a value is out of range or a limit is dead. */
    /**
     * The ownership map, checked: every owner names job types or tenants, acknowledges no later than it resolves,
     * and has deadlines that fall inside the quarantine record's retention (a deadline past it could never fire:
     * the record would be gone first, a dead setting).
     */
    public static io.poisonguard.owners.OwnerMap owners(PoisonGuardConfig config) {
        PoisonGuardConfig.Ownership o = config.ownership();
        Duration retention = config.retention().quarantine();
        List<io.poisonguard.owners.Owner> owners = new ArrayList<>();
        for (Map.Entry<String, PoisonGuardConfig.Ownership.Team> e : new java.util.TreeMap<>(o.owners()).entrySet()) {
            String key = ROOT + "ownership.owners.\"" + e.getKey() + "\"";
            PoisonGuardConfig.Ownership.Team t = e.getValue();
            Set<String> types = t.jobTypes().orElse(Set.of());
            Set<String> tenants = t.tenants().orElse(Set.of());
            if (types.isEmpty() && tenants.isEmpty()) {
                throw new ConfigurationException(key + " names neither job-types nor tenants: it would own nothing", Set.of(key + ".job-types"));
            }
            owners.add(owner(key, e.getKey(), types, tenants, t.acknowledgeWithin().orElse(o.acknowledgeWithin()),
                    t.resolveWithin().orElse(o.resolveWithin()), retention));
        }
        io.poisonguard.owners.Owner fallback = owner(ROOT + "ownership", o.defaultOwner(), Set.of(), Set.of(), o.acknowledgeWithin(),
                o.resolveWithin(), retention);
        try {
            return new io.poisonguard.owners.OwnerMap(owners, fallback);
        } catch (IllegalArgumentException e) {
            throw new ConfigurationException(e.getMessage(), Set.of(ROOT + "ownership.default-owner"));
        }
    }

    private static io.poisonguard.owners.Owner owner(String key, String name, Set<String> types, Set<String> tenants, Duration ack,
                                                     Duration resolve, Duration retention) {
        if (!resolve.minus(retention).isNegative()) {
            throw new ConfigurationException(key + ".resolve-within (" + resolve + ") is not shorter than " + ROOT
                    + "retention.quarantine (" + retention + "): the record and its payload expire before the deadline, so it never fires",
                    Set.of(key + ".resolve-within"));
        }
        try {
            return new io.poisonguard.owners.Owner(name, types, tenants, ack, resolve);
        } catch (IllegalArgumentException e) {
            throw new ConfigurationException(key + ": " + e.getMessage(), Set.of(key + ".acknowledge-within"));
        }
    }

    public static Policy policy(PoisonGuardConfig config) {
        PoisonGuardConfig.Consumer consumer = config.consumer();
        require(consumer.concurrency() >= 1 && consumer.concurrency() <= 1000, "consumer.concurrency", "must be between 1 and 1000");
        require(consumer.maxMessages() >= 1 && consumer.maxMessages() <= 10, "consumer.max-messages",
                "must be between 1 and 10 (the ReceiveMessage limit)");
        require(!consumer.receiveLinger().isNegative() && consumer.receiveLinger().toMillis() <= 1000, "consumer.receive-linger",
                "must be between 0 and 1s");
        require(consumer.prefetch().orElse(0) >= 0 && consumer.prefetch().orElse(0) <= 100, "consumer.prefetch", "must be between 0 and 100");
        require(!config.notices().batchLinger().isNegative() && config.notices().batchLinger().toMillis() <= 100, "notices.batch-linger",
                "must be between 0 and 100ms");
        require(config.ledger().endingBatchesInFlight() >= 0 && config.ledger().endingBatchesInFlight() <= 10,
                "ledger.ending-batches-in-flight", "must be between 0 (each ending written on its own) and 10");
        require(config.notices().batchesInFlight() >= 1 && config.notices().batchesInFlight() <= 10, "notices.batches-in-flight",
                "must be between 1 and 10");
        // SQS waits whole seconds: under one is a short poll, and an idle worker would ask again at once, for ever.
        require(consumer.receiveWait().toSeconds() >= 1 && consumer.receiveWait().toSeconds() <= 20, "consumer.receive-wait",
                "must be between 1s and 20s (SQS long-polls whole seconds, up to 20)");
        require(consumer.visibilityTimeout().toSeconds() >= 1 && consumer.visibilityTimeout().compareTo(Ladder.SQS_MAX_VISIBILITY) <= 0,
                "consumer.visibility-timeout", "must be between 1s and 43200s (the SQS visibility limit)");
        require(!consumer.heartbeatInterval().isNegative() && !consumer.heartbeatInterval().isZero()
                        && consumer.heartbeatInterval().multipliedBy(2).compareTo(consumer.visibilityTimeout()) <= 0,
                "consumer.heartbeat-interval", "must be positive and at most half of consumer.visibility-timeout,"
                        + " so a renewal always lands before the lease runs out");
        require(consumer.historySize() >= 1 && consumer.historySize() <= 50, "consumer.history-size", "must be between 1 and 50");
        require(!consumer.shutdownGrace().isNegative(), "consumer.shutdown-grace", "must not be negative");

        Duration retention = config.resources().queueRetention();
        require(retention.compareTo(SQS_MIN_RETENTION) >= 0 && retention.compareTo(SQS_MAX_RETENTION) <= 0,
                "resources.queue-retention", "must be between 60s and 14d (the SQS MessageRetentionPeriod range)");
        Duration quarantineRetention = config.retention().quarantine();
        require(quarantineRetention.compareTo(SQS_MIN_RETENTION) >= 0 && quarantineRetention.compareTo(SQS_MAX_RETENTION) <= 0,
                "retention.quarantine", "must be between 60s and 14d: the dead-letter queue keeps the payload that long, and SQS keeps nothing longer");
        require(config.retention().succeeded().toSeconds() >= 60, "retention.succeeded", "must be at least 60s");

        // At least one replay every 10 s: a replay holds its dead-letter copies 60 s, and waits for its turn (up to 1/rate on its
        // instance, up to 30 s for the fleet's count) while it holds them.
        require(config.replay().rate() >= 0.1 && config.replay().rate() <= 1000, "replay.rate",
                "must be at least 0.1 (one replay every 10 s) and at most 1000 per second");
        require(config.deadLetter().maxPerSweep() >= 1 && config.deadLetter().maxPerSweep() <= 10_000, "dead-letter.max-per-sweep",
                "must be between 1 and 10000");
        require(config.deadLetter().sweepInterval().compareTo(Duration.ofSeconds(1)) >= 0, "dead-letter.sweep-interval", "must be at least 1s");
        require(config.replay().maxBatch() >= 1 && config.replay().maxBatch() <= 10_000, "replay.max-batch", "must be between 1 and 10000");
        require(!config.replay().canaryTimeout().isNegative() && !config.replay().canaryTimeout().isZero(), "replay.canary-timeout",
                "must be positive");
        require(!config.replay().settleTime().isNegative() && config.replay().settleTime().compareTo(quarantineRetention) < 0,
                "replay.settle-time", "must be between 0s and retention.quarantine (a copy missing that soon means the quarantine is"
                        + " still completing, not that the payload is gone)");
        require(config.opsApi().listingReadBudget() >= 1 && config.opsApi().listingReadBudget() <= 100_000, "ops-api.listing-read-budget",
                "must be between 1 and 100000 (every listing and bulk selection reads with it)");
        require(!config.tokens().maxLifetime().isNegative() && !config.tokens().maxLifetime().isZero(), "tokens.max-lifetime",
                "must be positive, or every operator token is refused");
        require(!config.tokens().clockSkew().isNegative() && config.tokens().clockSkew().compareTo(Duration.ofMinutes(10)) <= 0,
                "tokens.clock-skew", "must be between 0s and 10m");
        for (var t : java.util.Map.of("alerts.webhook.timeout", config.alerts().webhook().timeout(), "alerts.sns.timeout", config.alerts().sns().timeout()).entrySet()) {
            require(!t.getValue().isNegative() && !t.getValue().isZero() && t.getValue().compareTo(Duration.ofMinutes(1)) <= 0, t.getKey(),
                    "must be positive and at most 1m (an alert's delivery holds one of its notifier's two senders that long)");
        }

        PoisonGuardConfig.Attempt attempt = config.attempt();
        require(!attempt.stopGrace().isNegative() && attempt.stopGrace().compareTo(Duration.ofMinutes(10)) <= 0, "attempt.stop-grace",
                "must be between 0s and 10m");
        Duration longest = Ladder.SQS_MAX_VISIBILITY.minus(attempt.stopGrace());
        requireDeadline(attempt.deadline(), "attempt.deadline", longest);
        attempt.deadlines().forEach((type, d) -> requireDeadline(d, "attempt.deadlines.\"" + type + "\"", longest));
        PoisonGuardConfig.Systemic systemic = config.systemic();
        require(systemic.sameSignature() >= 2 && systemic.sameSignature() <= 1000, "systemic.same-signature",
                "must be between 2 and 1000 (one failure is an item's, not the system's)");
        require(systemic.maxQuarantines() >= 1, "systemic.max-quarantines", "must be at least 1");
        require(!systemic.quarantineWindow().isNegative() && !systemic.quarantineWindow().isZero(), "systemic.quarantine-window",
                "must be positive");
        require(systemic.probeInterval().toMillis() >= 100, "systemic.probe-interval", "must be at least 100ms");
        require(systemic.fleetCheckInterval().toMillis() >= 100, "systemic.fleet-check-interval", "must be at least 100ms");
        require(config.ledgerGate().probeInterval().toMillis() >= 100, "ledger-gate.probe-interval", "must be at least 100ms");
        require(config.ledgerGate().probeInterval().compareTo(config.consumer().visibilityTimeout()) < 0, "ledger-gate.probe-interval",
                "must be shorter than consumer.visibility-timeout (each probe keeps hidden the copies whose endings wait for the ledger)");
        require(!config.ledgerGate().outcomePatience().isNegative()
                        && config.ledgerGate().outcomePatience().compareTo(Ladder.SQS_MAX_VISIBILITY) <= 0, "ledger-gate.outcome-patience",
                "must be between 0s and 12h (SQS cannot keep a message hidden longer)");

        Map<FailureClass, ClassPolicy> classes = ClassPolicies.of(config.failure());
        // An attempt is judged to use its whole lease, except a TIMEOUT one, which lasts its deadline (the longest any job
        // type has): a ladder the deadlines stretch past the queue's retention would lose the message, not quarantine it.
        Duration longestDeadline = longestDeadline(attempt);
        for (FailureClass c : FailureClass.values()) {
            if (classes.containsKey(c)) {
                // A timed-out attempt's outcome is written once its handler stopped, within the stop grace.
                Duration timedOut = longestDeadline.plus(attempt.stopGrace());
                Duration attemptTime = c == FailureClass.TIMEOUT && timedOut.compareTo(consumer.visibilityTimeout()) > 0
                        ? timedOut : consumer.visibilityTimeout();
                refuseDead(LadderLint.report(c, classes.get(c), retention, attemptTime, 1, 0), config.failure().allowDeadSettings());
            }
        }
        Policy policy = new Policy(classes, consumer.visibilityTimeout(), consumer.historySize(), config.failure().crashAttribution());
        int backstop = config.resources().redriveMaxReceiveCount();
        require(backstop >= 1 && backstop <= 1000, "resources.redrive-max-receive-count", "must be between 1 and 1000 (the SQS range)");
        require(backstop > policy.attemptBound() + 10, "resources.redrive-max-receive-count",
                "is " + backstop + " but must exceed the sum of all class attempt limits (" + policy.attemptBound()
                        + ") plus 10, or SQS's redrive would take messages away from the service's own classification");
        return policy;
    }

    /** The longest attempt deadline of any job type (the default one included). */
    public static Duration longestDeadline(PoisonGuardConfig.Attempt attempt) {
        return attempt.deadlines().values().stream().reduce(attempt.deadline(), (a, b) -> a.compareTo(b) >= 0 ? a : b);
    }

    private static void requireDeadline(Duration d, String key, Duration longest) {
        require(d.toMillis() >= 100 && d.compareTo(longest) <= 0, key,
                "must be between 100ms and " + longest.toSeconds() + "s (SQS's 12-hour visibility cap less attempt.stop-grace)");
    }

    /**
     * The boot half of the ladder lint (scripts/ladder-report.sh is the other): an attempt limit no
     * chain can reach stops the service, naming the key, unless dead settings are explicitly allowed;
     * one that only some chains reach is logged. Attempts are assumed to use their whole lease.
     */
    private static void refuseDead(LadderReport report, boolean allowed) {
        String key = classKey(report.failureClass(), "max-attempts");
        if (report.dead()) {
            String stopKey = report.fastest().stop() == StopCondition.CUTOFF ? classKey(report.failureClass(), "cutoff")
                    : ROOT + "resources.queue-retention";
            String why = key + " is a dead setting: " + report.verdict() + "; lower it, or lengthen " + stopKey;
            if (!allowed) {
                throw new ConfigurationException(why + " (or set " + ROOT + "failure.allow-dead-settings=true)", Set.of(key));
            }
            LOG.warn(why + " (allowed by " + ROOT + "failure.allow-dead-settings)");
        } else if (report.reach() == Reach.SOMETIMES) {
            LOG.warn(key + ": " + report.verdict());
        }
    }

    public static Classifier classifier(PoisonGuardConfig.Failures f) {
        List<ClassificationRule> rules = new ArrayList<>();
        List<String> specs = f.rules().orElse(List.of());
        for (String spec : specs) {
            rules.add(rule(spec.strip()));
        }
        rules.addAll(BuiltInRules.RULES);
        require(f.messageMaxChars() >= 16 && f.messageMaxChars() <= 2000, "failure.message-max-chars", "must be between 16 and 2000");
        return new Classifier(rules, f.unknownClass(), f.messageMaxChars());
    }

    @SuppressWarnings("unchecked")
    private static ClassificationRule rule(String spec) {
        String key = ROOT + "failure.rules";
        int eq = spec.lastIndexOf('=');
        if (eq <= 0 || eq == spec.length() - 1) {
            throw new ConfigurationException(key + ": '" + spec + "' is not of the form fully.qualified.ExceptionType=CLASS", Set.of(key));
        }
        String typeName = spec.substring(0, eq).strip();
        String className = spec.substring(eq + 1).strip();
        FailureClass fc;
        try {
            fc = FailureClass.valueOf(className.toUpperCase().replace('-', '_'));
        } catch (IllegalArgumentException e) {
            throw new ConfigurationException(key + ": '" + className + "' is not a failure class " + List.of(FailureClass.values()), Set.of(key));
        }
        try {
            Class<?> type = Class.forName(typeName, false, Thread.currentThread().getContextClassLoader());
            if (!Throwable.class.isAssignableFrom(type)) {
                throw new ConfigurationException(key + ": " + typeName + " is not an exception type", Set.of(key));
            }
            return new ClassificationRule((Class<? extends Throwable>) type, fc);
        } catch (ClassNotFoundException e) {
            throw new ConfigurationException(key + ": exception type " + typeName + " was not found", Set.of(key));
        }
    }

    public static AdmissionLimits admission(PoisonGuardConfig.Admission a) {
        require(a.maxBodyBytes() >= 1 && a.maxBodyBytes() <= 1024 * 1024, "admission.max-body-bytes",
                "must be between 1 and 1048576 (the SQS message size limit)");
        require(a.maxTokens() >= 1, "admission.max-tokens", "must be positive");
        require(a.charsPerToken() >= 1, "admission.chars-per-token", "must be positive");
        require(a.maxAttachments() >= 0, "admission.max-attachments", "must not be negative");
        return new AdmissionLimits(a.maxBodyBytes(), a.maxTokens(), a.charsPerToken(), a.maxAttachments());
    }

    public static void requirePrefix(String prefix) {
        // Queue names allow 80 characters of [A-Za-z0-9_-]; the longest suffix is "-jobs-dlq".
        require(prefix.matches("[A-Za-z0-9_-]{1,60}"), "prefix", "must be 1-60 characters of letters, digits, '-' and '_'");
    }

    /** {@code key} is relative to {@code poison-guard.}. */
    private static void require(boolean ok, String key, String why) {
        requireKey(ok, ROOT + key, why);
    }

    private static void requireKey(boolean ok, String fullKey, String why) {
        if (!ok) {
            fail(fullKey, why);
        }
    }

    private static void fail(String fullKey, String why) {
        throw new ConfigurationException(fullKey + " " + why, Set.of(fullKey));
    }
}
