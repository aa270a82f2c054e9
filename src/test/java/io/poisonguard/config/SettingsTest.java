package io.poisonguard.config;

import io.poisonguard.disposition.Policy;
import io.poisonguard.failure.Classifier;
import io.poisonguard.failure.FailureClass;
import io.poisonguard.ladder.Jitter;
import io.quarkus.runtime.configuration.ConfigurationException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.time.Duration;
import java.util.Optional;

import static io.poisonguard.config.Configs.defaults;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SettingsTest {

    private static ConfigurationException refused(Executable boot, String key) {
        ConfigurationException e = assertThrows(ConfigurationException.class, boot);
        assertTrue(e.getMessage().contains(key), "message names " + key + ": " + e.getMessage());
        assertTrue(e.getConfigKeys().contains(key), "failed keys " + e.getConfigKeys() + " include " + key);
        return e;
    }

    private static Configs seed002(FailureClass c, Jitter jitter) {
        String k = "poison-guard.failure." + c.key() + ".";
        return defaults()
                .set(k + "base", "300s")
                .set(k + "multiplier", "2")
                .set(k + "cap", "12h")
                .set(k + "max-attempts", "10")
                .set(k + "cutoff", "16h")
                .set(k + "jitter", jitter.name());
    }

    @Test
    void theShippedDefaultsBuildAPolicy() {
        assertFalse(Configs.shippedDefaults().isEmpty(), "application.properties has poison-guard defaults");

        Policy policy = Settings.policy(defaults().build());

        assertEquals(1, policy.of(FailureClass.PERMANENT).maxAttempts());
        assertEquals(5, policy.of(FailureClass.TRANSIENT).maxAttempts());
        assertEquals(Jitter.FULL, policy.of(FailureClass.TRANSIENT).ladder().jitter());
        assertEquals(Duration.ofSeconds(2), policy.of(FailureClass.TRANSIENT).ladder().base());
        assertEquals(Duration.ofMinutes(5), policy.of(FailureClass.TRANSIENT).ladder().cap());
        assertEquals(Optional.empty(), policy.of(FailureClass.TRANSIENT).cutoff());
        assertEquals(Duration.ofSeconds(60), policy.lease());
        assertEquals(10, policy.historySize());
        for (FailureClass c : FailureClass.values()) {
            assertTrue(policy.of(c).maxAttempts() >= 1, c.name());
        }
    }

    @Test
    void theShippedDefaultsBuildAClassifierAndAdmissionLimits() {
        PoisonGuardConfig config = defaults().build();

        assertDoesNotThrow(() -> Settings.classifier(config.failure()));
        assertEquals(262_144, Settings.admission(config.admission()).maxBodyBytes());
    }

    @ParameterizedTest
    @EnumSource(value = Jitter.class, names = {"NONE", "EQUAL"})
    void seed002SettingsOnTheThrottledClassRefuseToBootNamingItsMaxAttempts(Jitter jitter) {
        ConfigurationException e = refused(() -> Settings.policy(seed002(FailureClass.THROTTLED, jitter).build()),
                "poison-guard.failure.throttled.max-attempts");

        assertTrue(e.getMessage().contains("can never be reached"), e.getMessage());
        assertTrue(e.getMessage().contains("poison-guard.failure.throttled.cutoff"), e.getMessage());
    }

    @ParameterizedTest
    @EnumSource(FailureClass.class)
    void seed002SettingsOnAnyClassRefuseToBootNamingThatClassesMaxAttempts(FailureClass c) {
        refused(() -> Settings.policy(seed002(c, Jitter.NONE).build()), "poison-guard.failure." + c.key() + ".max-attempts");
    }

    @Test
    void seed002LadderWithALimitItCanReachBoots() {
        Policy policy = Settings.policy(seed002(FailureClass.THROTTLED, Jitter.NONE)
                .set("poison-guard.failure.throttled.max-attempts", "8").build());

        assertEquals(Optional.of(Duration.ofHours(16)), policy.of(FailureClass.THROTTLED).cutoff());
    }

    /** A replay holds its dead-letter copies 60 s while it waits its turn: a rate that would make it wait longer is refused. */
    @Test
    void aReplayRateBelowOneEveryTenSecondsRefusesToBootNamingIt() {
        refused(() -> Settings.policy(defaults().set("poison-guard.replay.rate", "0.05").build()), "poison-guard.replay.rate");
        assertDoesNotThrow(() -> Settings.policy(defaults().set("poison-guard.replay.rate", "0.1").build()));
    }

    @Test
    void aFleetCheckIntervalBelowATenthOfASecondRefusesToBootNamingIt() {
        refused(() -> Settings.policy(defaults().set("poison-guard.systemic.fleet-check-interval", "50ms").build()),
                "poison-guard.systemic.fleet-check-interval");
        assertDoesNotThrow(() -> Settings.policy(defaults().set("poison-guard.systemic.fleet-check-interval", "100ms").build()));
    }

    @Test
    void aLedgerProbeIntervalNotShorterThanTheVisibilityTimeoutRefusesToBootNamingIt() {
        // Each probe keeps hidden the copies whose endings wait for the ledger; probing less often than they show again would
        // let another worker charge their jobs a crash and run them again.
        refused(() -> Settings.policy(defaults().set("poison-guard.consumer.visibility-timeout", "60s")
                .set("poison-guard.ledger-gate.probe-interval", "60s").build()), "poison-guard.ledger-gate.probe-interval");
        assertDoesNotThrow(() -> Settings.policy(defaults().set("poison-guard.consumer.visibility-timeout", "60s")
                .set("poison-guard.ledger-gate.probe-interval", "59s").build()));
    }

    @Test
    void aDeadSettingBootsOnlyWhenDeadSettingsAreExplicitlyAllowed() {
        Policy policy = Settings.policy(seed002(FailureClass.THROTTLED, Jitter.NONE)
                .set("poison-guard.failure.allow-dead-settings", "true").build());

        assertEquals(10, policy.of(FailureClass.THROTTLED).maxAttempts());
    }

    @Test
    void theShippedLimitsAllFitASixHourQueueRetention() {
        assertDoesNotThrow(() -> Settings.policy(defaults().set("poison-guard.resources.queue-retention", "6h").build()));
    }

    @Test
    void aLimitBeyondTheQueueRetentionRefusesToBootNamingMaxAttempts() {
        ConfigurationException e = refused(() -> Settings.policy(defaults()
                .set("poison-guard.resources.queue-retention", "6h")
                .set("poison-guard.failure.transient.max-attempts", "1000").build()), "poison-guard.failure.transient.max-attempts");

        assertTrue(e.getMessage().contains("queue retention"), e.getMessage());
    }

    @Test
    void aTimeoutLimitTheDeadlineKeepsBeyondTheQueueRetentionRefusesToBootNamingIt() {
        // A TIMEOUT attempt lasts its whole deadline: the fourth attempt of a 9-hour job starts 27 hours after the first, when
        // SQS has already deleted the message (no quarantine, no alert). Judged with a visibility timeout's attempt, it booted.
        refused(() -> Settings.policy(defaults().set("poison-guard.resources.queue-retention", "1d")
                .set("poison-guard.attempt.deadline", "9h").set("poison-guard.failure.timeout.max-attempts", "4").build()),
                "poison-guard.failure.timeout.max-attempts");
        refused(() -> Settings.policy(defaults().set("poison-guard.resources.queue-retention", "1d")
                .set("poison-guard.attempt.deadlines.\"report\"", "9h").set("poison-guard.failure.timeout.max-attempts", "4").build()),
                "poison-guard.failure.timeout.max-attempts");
        assertDoesNotThrow(() -> Settings.policy(defaults().set("poison-guard.resources.queue-retention", "1d")
                .set("poison-guard.attempt.deadline", "9h").set("poison-guard.failure.timeout.max-attempts", "3").build()));
    }

    @Test
    void aReceiveWaitUnderASecondRefusesToBootNamingIt() {
        // SQS takes whole seconds: 500ms is a short poll, and an idle worker would ask SQS again at once, for ever.
        refused(() -> Settings.policy(defaults().set("poison-guard.consumer.receive-wait", "500ms").build()),
                "poison-guard.consumer.receive-wait");
        refused(() -> Settings.policy(defaults().set("poison-guard.consumer.receive-wait", "0s").build()),
                "poison-guard.consumer.receive-wait");
        assertDoesNotThrow(() -> Settings.policy(defaults().set("poison-guard.consumer.receive-wait", "1s").build()));
    }

    @Test
    void aCapAboveTheSqsVisibilityLimitRefusesToBootNamingTheCap() {
        refused(() -> Settings.policy(defaults().set("poison-guard.failure.transient.cap", "43201s").build()),
                "poison-guard.failure.transient.cap");
    }

    @Test
    void aMultiplierBelowOneRefusesToBootNamingTheMultiplier() {
        refused(() -> Settings.policy(defaults().set("poison-guard.failure.crash.multiplier", "0.5").build()),
                "poison-guard.failure.crash.multiplier");
    }

    @Test
    void aZeroAttemptLimitRefusesToBootNamingIt() {
        refused(() -> Settings.policy(defaults().set("poison-guard.failure.permanent.max-attempts", "0").build()),
                "poison-guard.failure.permanent.max-attempts");
    }

    @Test
    void elevenMessagesPerReceiveRefusesToBootNamingMaxMessages() {
        refused(() -> Settings.policy(defaults().set("poison-guard.consumer.max-messages", "11").build()),
                "poison-guard.consumer.max-messages");
    }

    @Test
    void theLedgerItemFormatIsCompactByDefaultOrAttributesAndAMisspellingRefusesToBootNamingIt() {
        assertEquals(PoisonGuardConfig.Ledger.ItemFormat.COMPACT, defaults().build().ledger().itemFormat());
        assertEquals(PoisonGuardConfig.Ledger.ItemFormat.ATTRIBUTES,
                defaults().set("poison-guard.ledger.item-format", "attributes").build().ledger().itemFormat());
        RuntimeException e = assertThrows(RuntimeException.class,
                () -> defaults().set("poison-guard.ledger.item-format", "compakt").build());
        assertTrue(e.getMessage().contains("poison-guard.ledger.item-format"), e.getMessage());
    }

    @Test
    void anAlertNotifiersTimeoutOfZeroOrAboveAMinuteRefusesToBootNamingIt() {
        assertEquals(java.time.Duration.ofSeconds(5), defaults().build().alerts().sns().timeout());
        Settings.policy(defaults().set("poison-guard.alerts.sns.timeout", "1m").build());
        refused(() -> Settings.policy(defaults().set("poison-guard.alerts.sns.timeout", "0s").build()), "poison-guard.alerts.sns.timeout");
        refused(() -> Settings.policy(defaults().set("poison-guard.alerts.webhook.timeout", "61s").build()), "poison-guard.alerts.webhook.timeout");
    }

    @Test
    void operatorSettingsThatWouldBreakTheApiAtRuntimeRefuseToBootNamingThem() {
        Settings.policy(defaults().set("poison-guard.replay.settle-time", "0s").set("poison-guard.ops-api.listing-read-budget", "1")
                .set("poison-guard.tokens.clock-skew", "0s").build());
        refused(() -> Settings.policy(defaults().set("poison-guard.replay.settle-time", "-1s").build()), "poison-guard.replay.settle-time");
        refused(() -> Settings.policy(defaults().set("poison-guard.replay.settle-time", "4d").set("poison-guard.retention.quarantine", "4d").build()), "poison-guard.replay.settle-time");
        refused(() -> Settings.policy(defaults().set("poison-guard.ops-api.listing-read-budget", "0").build()),
                "poison-guard.ops-api.listing-read-budget");
        refused(() -> Settings.policy(defaults().set("poison-guard.tokens.max-lifetime", "0s").build()), "poison-guard.tokens.max-lifetime");
        refused(() -> Settings.policy(defaults().set("poison-guard.tokens.clock-skew", "-5s").build()), "poison-guard.tokens.clock-skew");
    }

    @Test
    void aPrefetchOfAHundredBootsAndAHundredAndOneRefusesNamingPrefetch() {
        // The largest reserve the poller sizes for itself (Reserve.CEILING) may also be set.
        Settings.policy(defaults().set("poison-guard.consumer.prefetch", "100").build());
        refused(() -> Settings.policy(defaults().set("poison-guard.consumer.prefetch", "101").build()),
                "poison-guard.consumer.prefetch");
    }

    @Test
    void aVisibilityTimeoutAboveTwelveHoursRefusesToBootNamingIt() {
        refused(() -> Settings.policy(defaults().set("poison-guard.consumer.visibility-timeout", "12h1s").build()),
                "poison-guard.consumer.visibility-timeout");
    }

    @Test
    void aRedriveBackstopThatCouldFireBeforeTheServicesOwnLimitsRefusesToBootNamingIt() {
        int bound = Settings.policy(defaults().build()).attemptBound();

        ConfigurationException e = refused(() -> Settings.policy(defaults()
                        .set("poison-guard.resources.redrive-max-receive-count", Integer.toString(bound + 10)).build()),
                "poison-guard.resources.redrive-max-receive-count");

        assertTrue(e.getMessage().contains(Integer.toString(bound)), e.getMessage());
        assertDoesNotThrow(() -> Settings.policy(defaults()
                .set("poison-guard.resources.redrive-max-receive-count", Integer.toString(bound + 11)).build()));
    }

    @Test
    void anUnknownFailureClassInARuleRefusesToBootNamingTheRulesKey() {
        PoisonGuardConfig config = defaults().set("poison-guard.failure.rules", "java.lang.IllegalStateException=FLAKY").build();

        ConfigurationException e = refused(() -> Settings.classifier(config.failure()), "poison-guard.failure.rules");

        assertTrue(e.getMessage().contains("FLAKY"), e.getMessage());
    }

    @Test
    void aRuleNamingAMissingOrNonExceptionTypeRefusesToBootNamingTheRulesKey() {
        PoisonGuardConfig missing = defaults().set("poison-guard.failure.rules", "com.example.NoSuchException=PERMANENT").build();
        PoisonGuardConfig notAThrowable = defaults().set("poison-guard.failure.rules", "java.lang.String=PERMANENT").build();
        PoisonGuardConfig noClass = defaults().set("poison-guard.failure.rules", "java.lang.IllegalStateException").build();

        refused(() -> Settings.classifier(missing.failure()), "poison-guard.failure.rules");
        refused(() -> Settings.classifier(notAThrowable.failure()), "poison-guard.failure.rules");
        refused(() -> Settings.classifier(noClass.failure()), "poison-guard.failure.rules");
    }

    @Test
    void aConfiguredRuleClassifiesItsExceptionAndComesBeforeTheBuiltInRules() {
        PoisonGuardConfig config = defaults()
                .set("poison-guard.failure.rules", "java.lang.IllegalStateException=THROTTLED,java.lang.IllegalArgumentException=dependency-down")
                .build();

        Classifier classifier = Settings.classifier(config.failure());

        assertEquals(FailureClass.THROTTLED, classifier.classify(new IllegalStateException("quota")).failureClass());
        assertEquals(FailureClass.DEPENDENCY_DOWN, classifier.classify(new IllegalArgumentException("x")).failureClass(),
                "a configured rule overrides the built-in IllegalArgumentException=PERMANENT");
        assertEquals(FailureClass.TRANSIENT, classifier.classify(new IOException("reset")).failureClass(), "built-ins still apply");
    }

    @Test
    void theConfiguredUnknownClassIsUsedForUnmatchedExceptions() {
        PoisonGuardConfig config = defaults().set("poison-guard.failure.unknown-class", "PERMANENT").build();

        assertEquals(FailureClass.PERMANENT, Settings.classifier(config.failure()).classify(new IllegalStateException()).failureClass());
    }
}
