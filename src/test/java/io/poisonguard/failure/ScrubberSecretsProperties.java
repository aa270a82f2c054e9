package io.poisonguard.failure;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 12, item 3: the common shapes of secrets, generated and embedded in ordinary text, never survive
 * the scrubber (not whole, and not their distinctive part); and its cost stays linear in the input.
 */
class ScrubberSecretsProperties {
    private static final String UPPER_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    private static final String B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    private static final String ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

    /** A secret and the part of it that must not appear after scrubbing. */
    record Secret(String text, String mustNotSurvive) {
    }

    private static Arbitrary<String> from(String alphabet, int length) {
        return Arbitraries.strings().withChars(alphabet.toCharArray()).ofLength(length);
    }

    @Provide
    Arbitrary<Secret> secrets() {
        Arbitrary<Secret> awsKeyId = Combinators.combine(Arbitraries.of("AKIA", "ASIA"), from(UPPER_DIGITS, 16))
                .as((p, rest) -> new Secret(p + rest, p + rest));
        Arbitrary<Secret> awsSecret = Combinators.combine(Arbitraries.of("aws_secret_access_key=", "aws_secret_access_key = ",
                        "AWS_SECRET_ACCESS_KEY:", "\"aws_secret_access_key\": \"", "SecretAccessKey="), from(B64, 40))
                .as((k, v) -> new Secret(k + v, v));
        Arbitrary<Secret> bearer = Combinators.combine(from(ALNUM, 20), from(ALNUM, 30), from(ALNUM, 25))
                .as((a, b, c) -> new Secret("Bearer eyJ" + a + "." + b + "." + c, b));
        Arbitrary<Secret> bareJwt = Combinators.combine(from(ALNUM, 20), from(ALNUM, 30), from(ALNUM, 25))
                .as((a, b, c) -> new Secret("eyJ" + a + ".eyJ" + b + "." + c, b));
        Arbitrary<Secret> stripe = Combinators.combine(Arbitraries.of("sk_live_", "sk_test_", "rk_live_"), from(ALNUM, 24))
                .as((p, v) -> new Secret(p + v, v));
        Arbitrary<Secret> pem = from(B64, 64).map(body -> new Secret(
                "-----BEGIN RSA PRIVATE KEY-----\n" + body + "\n-----END RSA PRIVATE KEY-----", body));
        Arbitrary<Secret> card = Arbitraries.of("4111 1111 1111 1111", "5500-0000-0000-0004", "3400 000000 00009", "4111111111111111")
                .map(c -> new Secret(c, c.replaceAll("[ -]", "").substring(4, 12)));
        Arbitrary<Secret> urlUser = Combinators.combine(Arbitraries.strings().alpha().ofMinLength(4).ofMaxLength(10), from(ALNUM, 12))
                .as((user, pass) -> new Secret("https://" + user + "zq:" + pass + "@db.example.net/x", user + "zq"));
        Arbitrary<Secret> email = Arbitraries.strings().alpha().ofMinLength(3).ofMaxLength(12)
                .map(u -> new Secret("ops." + u + "@corp.example.org", "ops." + u));
        return Arbitraries.oneOf(awsKeyId, awsSecret, bearer, bareJwt, stripe, pem, card, urlUser, email);
    }

    @Provide
    Arbitrary<String> prose() {
        return Arbitraries.of("failed to call provider: ", "header was ", "config ", "", "value '", "{\"x\": ", "caused by ");
    }

    @Property(tries = 400)
    void noSecretSurvives(@ForAll("secrets") Secret secret, @ForAll("prose") String before, @ForAll("prose") String after) {
        String scrubbed = Scrubber.scrub(before + secret.text() + " " + after, 2_000);
        assertFalse(scrubbed.contains(secret.mustNotSurvive()), "survived: " + secret.mustNotSurvive() + " in " + scrubbed);
    }

    @Property(tries = 100)
    void aSecretPastTheTruncationPointDoesNotLeakInPart(@ForAll("secrets") Secret secret) {
        String scrubbed = Scrubber.scrub("x".repeat(150) + " " + secret.text(), 160);
        assertTrue(scrubbed.length() <= 160);
        assertFalse(scrubbed.contains(secret.mustNotSurvive()), scrubbed);
    }

    @Test
    void aLongInputIsScrubbedInLinearTime() {
        // 80,000 characters of one run an e-mail address could start anywhere in, with no '@' to end it: the old
        // pattern tried every start and scanned to the end each time (quadratic: seconds here).
        String hostile = "a".repeat(80_000);
        long start = System.nanoTime();
        String scrubbed = Scrubber.scrub(hostile, 500);
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertTrue(scrubbed.length() <= 500);
        // A generous bound on a shared machine: the quadratic pattern needs seconds here, the bounded one milliseconds.
        assertTrue(took.compareTo(Duration.ofSeconds(5)) < 0, "took " + took);
    }
}
