package io.poisonguard.failure;

import java.util.regex.Pattern;

/**
 * Makes an error message safe to store and log: strips control characters, masks values that look
 * like secrets or personal data (long digit runs, e-mail addresses, key=value credentials) and
 * truncates. Exception messages often quote the input that caused them; this keeps payload
 * fragments out of quarantine records and logs.
 */
public final class Scrubber {
    private static final Pattern CONTROL = Pattern.compile("[\\p{Cntrl}&&[^ ]]+");
    private static final Pattern EMAIL = Pattern.compile("[\\w.+-]+@[\\w-]+\\.[\\w.-]+");
    private static final Pattern DIGITS = Pattern.compile("\\d{6,}");
    /**
     * A credential-looking key, its separator (JSON quotes included), then the value: a quoted
     * string, or an optional auth scheme ("Bearer", "Basic") followed by one unquoted token.
     */
    private static final Pattern CREDENTIAL = Pattern.compile(
            "(?i)(password|passwd|secret|token|api[-_]?key|authorization)([\"']?\\s*[:=]\\s*)"
                    + "(\"[^\"]*\"|'[^']*'|(?:(?:bearer|basic|digest)\\s+)?[^\\s,;\"'}]+)");
    private static final Pattern QUOTED = Pattern.compile("\"[^\"]{24,}\"");
    /** Single-quoted runs: parsers quote offending tokens this way ("Unrecognized token 'abc…'"). */
    private static final Pattern SINGLE_QUOTED = Pattern.compile("'[^']{8,}'");

    private Scrubber() {
    }

    public static String scrub(String message, int maxChars) {
        if (message == null || message.isBlank()) {
            return "";
        }
        String s = CONTROL.matcher(message).replaceAll(" ");
        s = CREDENTIAL.matcher(s).replaceAll("$1$2***");
        s = EMAIL.matcher(s).replaceAll("<email>");
        s = DIGITS.matcher(s).replaceAll("<digits>");
        s = QUOTED.matcher(s).replaceAll("\"<text>\"");
        s = SINGLE_QUOTED.matcher(s).replaceAll("'<text>'");
        s = s.strip();
        if (s.length() > maxChars) {
            int end = maxChars - 1;
            if (Character.isHighSurrogate(s.charAt(end - 1))) {
                end--; // never split a surrogate pair: half a character is invalid UTF-16
            }
            s = s.substring(0, end) + "…";
        }
        return s;
    }
}
