package io.poisonguard.failure;

import java.util.regex.Pattern;

/**
 * Makes sender- or error-supplied text safe to store, alert and log: bounds it first (every pattern then
 * runs over at most a few times the output size, so the cost is linear), strips control characters, masks
 * what looks like a secret or personal data, and truncates. Exception messages often quote the input that
 * caused them; this keeps payload fragments and credentials out of records, alerts and logs.
 *
 * <p>Masked shapes: PEM blocks; URL user info; key=value credentials (password, secret, token, API and
 * access keys, {@code aws_secret_access_key}, authorization) whatever their quoting; {@code Bearer}/{@code Basic}
 * tokens; JWTs; AWS access key ids; provider keys ({@code sk_live_…}, {@code ghp_…}, {@code xoxb-…},
 * {@code AIza…}); e-mail addresses; card-like digit groups and any run of six or more digits; long quoted text.
 */
public final class Scrubber {
    private static final Pattern CONTROL = Pattern.compile("[\\p{Cntrl}&&[^ ]]+");
    private static final Pattern PEM = Pattern.compile("-----BEGIN [A-Z0-9 ]{1,40}-----.*?(?:-----END [A-Z0-9 ]{1,40}-----|$)", Pattern.DOTALL);
    private static final Pattern URL_USER_INFO = Pattern.compile("(?i)\\b([a-z][a-z0-9+.-]{0,20}://)[^/\\s@]{1,256}@");
    /**
     * A credential-looking key (any name containing one of the words), its separator (JSON quotes included),
     * then the value: a quoted string, or an optional auth scheme followed by one unquoted token.
     */
    private static final Pattern CREDENTIAL = Pattern.compile(
            "(?i)([\\w-]{0,40}(?:password|passwd|pwd|secret|token|api[-_]?key|access[-_]?key|private[-_]?key|credential|authorization)[\\w-]{0,40})"
                    + "([\"']?\\s*[:=]\\s*)"
                    + "(\"[^\"]*+\"?|'[^']*+'?|(?:(?:bearer|basic|digest)\\s+)?[^\\s,;\"'}]++)");
    private static final Pattern AUTH_SCHEME = Pattern.compile("(?i)\\b(bearer|basic)\\s+[\\w.~+/=-]{8,}+");
    private static final Pattern JWT = Pattern.compile("\\beyJ[\\w-]{4,}+\\.[\\w-]{4,}+(?:\\.[\\w-]*+)?");
    private static final Pattern AWS_KEY_ID = Pattern.compile("\\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{12,20}\\b");
    private static final Pattern PROVIDER_KEY = Pattern.compile(
            "\\b(?:(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{6,}+|gh[pousr]_[A-Za-z0-9]{16,}+|xox[abprs]-[A-Za-z0-9-]{8,}+|AIza[\\w-]{20,}+)");
    /** Starts only where a run of address characters starts (the lookbehind), so each run is scanned once: linear. */
    private static final Pattern EMAIL = Pattern.compile("(?<![\\w.+-])[\\w.+-]++@[\\w-]++(?:\\.[\\w-]++)+");
    private static final Pattern CARD = Pattern.compile("(?<!\\d)\\d(?:[ -]?\\d){11,18}(?!\\d)");
    private static final Pattern DIGITS = Pattern.compile("\\d{6,}+");
    private static final Pattern QUOTED = Pattern.compile("\"[^\"]{24,}+\"");
    /** Single-quoted runs: parsers quote offending tokens this way ("Unrecognized token 'abc…'"). */
    private static final Pattern SINGLE_QUOTED = Pattern.compile("'[^']{8,}+'");

    private Scrubber() {
    }

    /**
     * Masks only the secret shapes (PEM blocks, URL user info, key=value credentials, auth scheme tokens, JWTs, AWS and
     * provider keys), strips control characters and truncates: for an operator's own reason, kept in the audit trail and
     * shown to every viewer of the tenant, where a ticket number or a colleague's name is the point and stays.
     */
    public static String secrets(String text, int maxChars) {
        if (text == null || text.isBlank()) {
            return "";
        }
        return truncated(maskSecrets(bounded(text, maxChars)).strip(), maxChars);
    }

    public static String scrub(String message, int maxChars) {
        if (message == null || message.isBlank()) {
            return "";
        }
        String s = maskSecrets(bounded(message, maxChars));
        s = EMAIL.matcher(s).replaceAll("<email>");
        s = CARD.matcher(s).replaceAll("<digits>");
        s = DIGITS.matcher(s).replaceAll("<digits>");
        s = QUOTED.matcher(s).replaceAll("\"<text>\"");
        s = SINGLE_QUOTED.matcher(s).replaceAll("'<text>'");
        return truncated(s.strip(), maxChars);
    }

    /**
     * Bounds the work before any pattern runs. What is cut here could never reach the output; a token cut in half at
     * the bound is dropped whole when a space lies past the output's length.
     */
    private static String bounded(String s, int maxChars) {
        int bound = maxChars * 4 + 256;
        if (s.length() <= bound) {
            return s;
        }
        String cut = s.substring(0, bound);
        int lastSpace = cut.lastIndexOf(' ');
        return lastSpace > maxChars ? cut.substring(0, lastSpace) : cut;
    }

    /** Control characters to spaces, then every secret shape masked. */
    private static String maskSecrets(String s) {
        s = CONTROL.matcher(s).replaceAll(" ");
        s = PEM.matcher(s).replaceAll("<pem>");
        s = URL_USER_INFO.matcher(s).replaceAll("$1***@");
        s = CREDENTIAL.matcher(s).replaceAll("$1$2***");
        s = AUTH_SCHEME.matcher(s).replaceAll("$1 ***");
        s = JWT.matcher(s).replaceAll("<jwt>");
        s = AWS_KEY_ID.matcher(s).replaceAll("<aws-key-id>");
        return PROVIDER_KEY.matcher(s).replaceAll("<key>");
    }

    private static String truncated(String s, int maxChars) {
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
