package io.poisonguard.failure;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.NullSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ScrubberTest {

    @Test
    void emailAddressesAreMasked() {
        assertEquals("no permit for <email> and <email>",
                Scrubber.scrub("no permit for jane.doe+permits@city.example.gov and x_y@a-b.io", 200));
    }

    @Test
    void runsOfSixOrMoreDigitsAreMaskedAndShorterNumbersKept() {
        assertEquals("account <digits> row 12345", Scrubber.scrub("account 0012345678 row 12345", 200));
    }

    @ParameterizedTest
    @ValueSource(strings = {"password=hunter2", "PASSWORD: hunter2", "passwd=hunter2", "secret=hunter2", "token=hunter2",
            "api_key=hunter2", "apiKey=hunter2", "api-key: hunter2"})
    void credentialValuesAreMaskedButTheirNameKept(String credential) {
        String scrubbed = Scrubber.scrub("login failed: " + credential + ", retry", 200);

        assertFalse(scrubbed.contains("hunter2"), scrubbed);
        assertTrue(scrubbed.contains("***"), scrubbed);
        assertTrue(scrubbed.startsWith("login failed: ") && scrubbed.endsWith(", retry"), scrubbed);
    }

    @Test
    void aQuotedJsonCredentialIsMasked() {
        // Parsers quote the offending input in their messages, JSON included.
        String scrubbed = Scrubber.scrub("Unexpected field in {\"user\": \"bob\", \"password\": \"hunter2\"}", 200);

        assertFalse(scrubbed.contains("hunter2"), scrubbed);
    }

    @Test
    void aBearerTokenInAnAuthorizationValueIsMaskedWhole() {
        String scrubbed = Scrubber.scrub("401 from permits API, sent Authorization: Bearer eyJhbGciOiJIUzI1NiJ9abc", 200);

        assertFalse(scrubbed.contains("eyJhbGciOiJIUzI1NiJ9abc"), scrubbed);
    }

    @Test
    void longQuotedTextIsReplacedAndShortQuotedTextKept() {
        assertEquals("bad value \"<text>\" in field \"name\"",
                Scrubber.scrub("bad value \"the quick brown fox jumps over\" in field \"name\"", 200));
    }

    @Test
    void controlCharactersBecomeSpacesAndTheEndsAreTrimmed() {
        assertEquals("line one line two tab", Scrubber.scrub("\nline one\r\nline two\ttab\u0000", 200));
    }

    @Test
    void aLongMessageIsCutToExactlyTheMaximumWithAnEllipsis() {
        String scrubbed = Scrubber.scrub("abcdefghij".repeat(10), 16);

        assertEquals("abcdefghijabcde…", scrubbed);
        assertEquals(16, scrubbed.length());
    }

    @Test
    void truncationKeepsAnEmojiWholeOrDropsIt() {
        // 14 letters, then an emoji (two UTF-16 chars) across the cut at 15.
        String scrubbed = Scrubber.scrub("abcdefghijklmn\uD83D\uDE00 and more", 16);

        assertFalse(Character.isHighSurrogate(scrubbed.charAt(scrubbed.length() - 2)), "cut inside a surrogate pair: " + scrubbed);
        assertTrue(scrubbed.length() <= 16);
    }

    @Test
    void aMessageAtTheMaximumIsKeptWhole() {
        assertEquals("abcdefghijklmnop", Scrubber.scrub("abcdefghijklmnop", 16));
    }

    @ParameterizedTest
    @NullSource
    @ValueSource(strings = {"", "   ", "\n\t"})
    void aMissingOrBlankMessageBecomesEmpty(String message) {
        assertEquals("", Scrubber.scrub(message, 100));
    }
}
