package io.poisonguard.failure;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeoutException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ClassifierTest {
    private static final List<ClassificationRule> RULES = List.of(
            new ClassificationRule(IOException.class, FailureClass.TRANSIENT),
            new ClassificationRule(IllegalStateException.class, FailureClass.PERMANENT));

    private final Classifier classifier = new Classifier(RULES, FailureClass.DEPENDENCY_DOWN, 80);

    @Test
    void aJobFailureAnywhereInTheCauseChainWinsOverTheRules() {
        JobFailure known = JobFailure.throttled("quota exceeded for tenant");
        Throwable thrown = new IllegalStateException("handler gave up", new UncheckedIOException(new IOException("wrapped", known)));

        Failure failure = classifier.classify(thrown);

        assertEquals(FailureClass.THROTTLED, failure.failureClass());
        assertEquals("JobFailure", failure.errorType());
        assertEquals("quota exceeded for tenant", failure.message());
    }

    @Test
    void theOutermostJobFailureDecidesWhenThereAreSeveral() {
        Throwable thrown = new JobFailure(FailureClass.PERMANENT, "outer", JobFailure.transientFailure("inner"));

        assertEquals(FailureClass.PERMANENT, classifier.classify(thrown).failureClass());
    }

    @Test
    void rulesMatchTheOutermostMatchingThrowableEvenIfALaterRuleNamesIt() {
        // The IOException rule comes first, but the IllegalStateException is further out.
        Throwable thrown = new IllegalStateException("bad input", new IOException("disk"));

        assertEquals(FailureClass.PERMANENT, classifier.classify(thrown).failureClass());
    }

    @Test
    void aCauseDeeperInTheChainIsClassifiedWhenNothingOutsideMatches() {
        Throwable thrown = new RuntimeException("wrapper", new RuntimeException("again", new SocketTimeoutException("read timed out")));

        Failure failure = classifier.classify(thrown);

        assertEquals(FailureClass.TRANSIENT, failure.failureClass());
        assertEquals("RuntimeException", failure.errorType(), "the error type is what the handler threw");
    }

    @Test
    void forOneThrowableTheFirstMatchingRuleInOrderWins() {
        Classifier ordered = new Classifier(List.of(
                new ClassificationRule(IOException.class, FailureClass.THROTTLED),
                new ClassificationRule(SocketTimeoutException.class, FailureClass.TRANSIENT)), FailureClass.PERMANENT, 80);

        assertEquals(FailureClass.THROTTLED, ordered.classify(new SocketTimeoutException()).failureClass());
    }

    @Test
    void aRuleMatchesSubtypesOfItsExceptionType() {
        assertEquals(FailureClass.TRANSIENT, classifier.classify(new SocketTimeoutException("slow")).failureClass());
    }

    @Test
    void anExceptionNoRuleMatchesGetsTheConfiguredDefaultClass() {
        Failure failure = classifier.classify(new TimeoutException("no rule for this"));

        assertEquals(FailureClass.DEPENDENCY_DOWN, failure.failureClass());
        assertEquals("TimeoutException", failure.errorType());
    }

    @Test
    void anErrorIsClassifiedLikeAnyOtherThrowable() {
        assertEquals(FailureClass.DEPENDENCY_DOWN, classifier.classify(new OutOfMemoryError("heap")).failureClass());
    }

    @Test
    void aCauseChainWithACycleTerminates() {
        Exception a = new RuntimeException("a");
        Exception b = new RuntimeException("b");
        a.initCause(b);
        b.initCause(a);

        Failure failure = assertTimeoutPreemptively(Duration.ofSeconds(5), () -> classifier.classify(a));

        assertEquals(FailureClass.DEPENDENCY_DOWN, failure.failureClass());
    }

    @Test
    void aCycleBehindAMatchingCauseStillFindsTheMatch() {
        Exception a = new RuntimeException("a");
        Exception b = new RuntimeException("b", new IOException("io"));
        Exception c = new RuntimeException("c");
        a.initCause(c);
        c.initCause(a);
        Exception outer = new RuntimeException("outer", b);

        assertEquals(FailureClass.TRANSIENT, assertTimeoutPreemptively(Duration.ofSeconds(5), () -> classifier.classify(outer)).failureClass());
        assertEquals(FailureClass.DEPENDENCY_DOWN, assertTimeoutPreemptively(Duration.ofSeconds(5), () -> classifier.classify(a)).failureClass());
    }

    @Test
    void theCauseChainListsEachThrowableOnceOutermostFirst() {
        Exception a = new RuntimeException("a");
        Exception b = new RuntimeException("b");
        a.initCause(b);
        b.initCause(a);

        assertEquals(List.of(a, b), Classifier.causeChain(a));
    }

    @Test
    void messagesAreScrubbedOfPersonalDataAndSecrets() {
        Failure failure = classifier.classify(new IllegalStateException(
                "rejected bob@example.com card 4111111111111111 password=hunter2"));

        String m = failure.message();
        assertFalse(m.contains("bob@example.com"), m);
        assertFalse(m.contains("4111111111111111"), m);
        assertFalse(m.contains("hunter2"), m);
        assertTrue(m.contains("<email>") && m.contains("<digits>") && m.contains("password=***"), m);
    }

    @Test
    void messagesAreTruncatedToTheConfiguredMaximum() {
        Failure failure = classifier.classify(new IllegalStateException("x".repeat(1_000)));

        assertEquals(80, failure.message().length());
        assertTrue(failure.message().endsWith("…"));
    }

    @Test
    void theMessageOfAJobFailureIsScrubbedToo() {
        Failure failure = classifier.classify(JobFailure.permanent("no permit for alice@example.org"));

        assertEquals("no permit for <email>", failure.message());
    }

    @Test
    void aThrowableWithoutAMessageGetsAnEmptyMessage() {
        assertEquals("", classifier.classify(new IllegalStateException()).message());
    }

    @Test
    void aTinyMessageLimitIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> new Classifier(RULES, FailureClass.TRANSIENT, 15));
    }

    @Test
    void jobFailureFactoriesCarryTheirClass() {
        assertEquals(FailureClass.PERMANENT, JobFailure.permanent("p").failureClass());
        assertEquals(FailureClass.TRANSIENT, JobFailure.transientFailure("t").failureClass());
        assertEquals(FailureClass.THROTTLED, JobFailure.throttled("t").failureClass());
        assertEquals(FailureClass.DEPENDENCY_DOWN, JobFailure.dependencyDown("d").failureClass());
        assertThrows(NullPointerException.class, () -> new JobFailure(null, "no class"));
    }

    @Test
    void failureClassKeysAreKebabCase() {
        assertEquals("dependency-down", FailureClass.DEPENDENCY_DOWN.key());
        assertEquals("permanent", FailureClass.PERMANENT.key());
    }
}
