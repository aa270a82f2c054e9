package io.poisonguard.failure;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ScrubberProperties {
    private static final Pattern SIX_DIGITS = Pattern.compile("[0-9]{6,}");
    private static final Pattern CONTROL = Pattern.compile("\\p{Cntrl}");

    @Provide
    Arbitrary<String> messages() {
        Arbitrary<String> words = Arbitraries.oneOf(
                Arbitraries.strings().ofMaxLength(12),
                Arbitraries.strings().numeric().ofMinLength(1).ofMaxLength(12),
                Arbitraries.strings().alpha().ofMinLength(1).ofMaxLength(8).map(s -> s + "@example.com"),
                Arbitraries.of("password=", "token: ", "\"", " ", "\n", "\u0000", "😀", "é", "=", ":"));
        return words.list().ofMaxSize(40).map(parts -> String.join("", parts));
    }

    @Property(tries = 300)
    void aScrubbedMessageNeverExceedsTheMaximum(@ForAll("messages") String message, @ForAll @IntRange(min = 16, max = 300) int max) {
        assertTrue(Scrubber.scrub(message, max).length() <= max);
    }

    @Property(tries = 300)
    void noRunOfSixDigitsNorAControlCharacterSurvives(@ForAll("messages") String message) {
        String scrubbed = Scrubber.scrub(message, 2_000);

        assertFalse(SIX_DIGITS.matcher(scrubbed).find(), scrubbed);
        assertFalse(CONTROL.matcher(scrubbed).find(), scrubbed);
    }

    /** Truncation must not split a surrogate pair: the result is stored in DynamoDB and logs as UTF-8. */
    @Property(tries = 200)
    void truncationNeverLeavesHalfACharacter(
            @ForAll @IntRange(min = 0, max = 80) int asciiPrefix, @ForAll @IntRange(min = 16, max = 60) int max) {
        String message = "a".repeat(asciiPrefix) + "\uD83D\uDE00".repeat(40);

        String scrubbed = Scrubber.scrub(message, max);

        assertTrue(scrubbed.length() <= max);
        try {
            StandardCharsets.UTF_8.newEncoder().onMalformedInput(CodingErrorAction.REPORT).encode(CharBuffer.wrap(scrubbed));
        } catch (CharacterCodingException e) {
            throw new AssertionError("half a surrogate pair left after scrubbing to " + max + ": " + scrubbed, e);
        }
    }
}
