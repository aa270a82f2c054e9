package io.poisonguard.failure;

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;

/**
 * Turns whatever a handler threw into a {@link Failure}. A {@link JobFailure} anywhere in the cause
 * chain decides first (the handler knew best); then the ordered rules, outermost throwable first;
 * then the configured default class, so an unknown exception is still bounded by a limit.
 */
public final class Classifier {
    private final List<ClassificationRule> rules;
    private final FailureClass unknownClass;
    private final int maxMessageChars;

    public Classifier(List<ClassificationRule> rules, FailureClass unknownClass, int maxMessageChars) {
        if (maxMessageChars < 16) {
            throw new IllegalArgumentException("maxMessageChars must be at least 16");
        }
        this.rules = List.copyOf(rules);
        this.unknownClass = unknownClass;
        this.maxMessageChars = maxMessageChars;
    }

    public Failure classify(Throwable thrown) {
        Failure raw = classifyRaw(thrown);
        return new Failure(raw.failureClass(), raw.errorType(), withoutInputEcho(thrown, raw.message()));
    }

    /**
     * Parser errors quote the input they choked on (Jackson: "Unrecognized token 'sk_live_...'"), so
     * for them only the error's position is kept, never its text: payload fragments must not reach
     * history, quarantine records, the DLQ reason attribute or alerts.
     */
    private String withoutInputEcho(Throwable thrown, String scrubbed) {
        for (Throwable t : causeChain(thrown)) {
            if (t instanceof com.fasterxml.jackson.core.JsonProcessingException j) {
                var at = j.getLocation();
                return at == null ? "input is not valid JSON" : "input is not valid JSON at line " + at.getLineNr() + ", column " + at.getColumnNr();
            }
        }
        return scrubbed;
    }

    private Failure classifyRaw(Throwable thrown) {
        List<Throwable> chain = causeChain(thrown);
        for (Throwable t : chain) {
            if (t instanceof JobFailure jf) {
                return new Failure(jf.failureClass(), t.getClass().getSimpleName(), Scrubber.scrub(t.getMessage(), maxMessageChars));
            }
        }
        for (Throwable t : chain) {
            for (ClassificationRule rule : rules) {
                if (rule.matches(t)) {
                    return new Failure(rule.failureClass(), thrown.getClass().getSimpleName(), Scrubber.scrub(thrown.getMessage(), maxMessageChars));
                }
            }
        }
        return new Failure(unknownClass, thrown.getClass().getSimpleName(), Scrubber.scrub(thrown.getMessage(), maxMessageChars));
    }

    /**
     * Where a failure was thrown: {@code Class.method} of the top frame of the innermost cause (the
     * place the trouble started), skipping {@link JobFailure}'s own factories so a handler's
     * {@code JobFailure.permanent(...)} is placed where the handler called it; an empty string when the
     * JVM left no stack trace.
     */
    public static String origin(Throwable thrown) {
        List<Throwable> chain = causeChain(thrown);
        for (StackTraceElement frame : chain.get(chain.size() - 1).getStackTrace()) {
            if (!frame.getClassName().startsWith(JobFailure.class.getName())) {
                String cls = frame.getClassName();
                return cls.substring(cls.lastIndexOf('.') + 1) + "." + frame.getMethodName();
            }
        }
        return "";
    }

    /** Outermost first; stops at cycles. */
    public static List<Throwable> causeChain(Throwable thrown) {
        List<Throwable> chain = new ArrayList<>();
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Throwable t = thrown; t != null && seen.add(t); t = t.getCause()) {
            chain.add(t);
        }
        return chain;
    }
}
