package io.poisonguard.chaos;

import io.poisonguard.ledger.JobKey;
import io.poisonguard.config.Names;
import io.poisonguard.dynamodb.DynamoLedgerStore;
import io.poisonguard.ledger.AttemptEntry;
import io.poisonguard.ledger.LedgerRecord;
import io.poisonguard.testing.Queues;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeName;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The reconciler: what really happened to every job of a chaos run, read from where the outcomes land
 * (the notices queue, the DLQ, the ledger and quarantine tables), as a table and one verdict line.
 *
 * <ul>
 *   <li><b>completed</b>: the job has at least one completion notice;</li>
 *   <li><b>quarantined</b>: it has a quarantine record or a DLQ copy;</li>
 *   <li><b>lost</b>: neither, although its ledger says it is done or the run settled;</li>
 *   <li><b>unfinished</b>: neither, and its ledger says it is still in progress when the bound ran out;</li>
 *   <li><b>innocent quarantine</b>: a healthy, transient or throttled job quarantined;</li>
 *   <li><b>poison completed</b>: a poison, hang or crash job that got a notice;</li>
 *   <li><b>partial quarantine</b>: a quarantine record without its DLQ copy or the reverse.</li>
 * </ul>
 * The run fails on any of those but duplicates (reported only, unless the notices queue is FIFO), on a
 * poison job that is not quarantined, and when the run did not settle within its bound.
 */
public final class ChaosReport {
    private static final int LIST_AT_MOST = 15;

    /** One kind's line of the table. */
    record Row(int sent, int completed, int duplicates, int quarantined, int lost, int unfinished, Map<String, Integer> classes) {
    }

    private final ChaosRun.Outcome outcome;
    private final Map<JobKind, Row> rows;
    private final int duplicates;
    private final List<String> duplicated;
    private final List<String> lost;
    private final List<String> unfinished;
    private final Map<String, String> innocents;
    private final List<String> poisonCompleted;
    private final List<String> poisonUnquarantined;
    private final List<String> partial;
    private final Map<String, String> unexpectedClasses;
    private final Set<String> unknownNotices;
    private final Duration longestGap;
    private final Instant gapFrom;
    private final Instant gapTo;
    private final String details;

    private ChaosReport(ChaosRun.Outcome outcome, Map<JobKind, Row> rows, int duplicates, List<String> duplicated, List<String> lost, List<String> unfinished,
                        Map<String, String> innocents,
                        List<String> poisonCompleted, List<String> poisonUnquarantined, List<String> partial,
                        Map<String, String> unexpectedClasses, Set<String> unknownNotices, Duration longestGap, Instant gapFrom,
                        Instant gapTo, String details) {
        this.outcome = outcome;
        this.rows = rows;
        this.duplicates = duplicates;
        this.duplicated = duplicated;
        this.lost = lost;
        this.unfinished = unfinished;
        this.innocents = innocents;
        this.poisonCompleted = poisonCompleted;
        this.poisonUnquarantined = poisonUnquarantined;
        this.partial = partial;
        this.unexpectedClasses = unexpectedClasses;
        this.unknownNotices = unknownNotices;
        this.longestGap = longestGap;
        this.gapFrom = gapFrom;
        this.gapTo = gapTo;
        this.details = details;
    }

    /** Drains the notices queue and the DLQ (receive and delete until empty), scans both tables and compares them with the workload. */
    public static ChaosReport reconcile(ChaosRun.Outcome o, SqsClient sqs, DynamoDbClient dynamo) {
        Names names = o.names();
        Queues queues = new Queues(sqs, names);
        List<Message> notices = queues.drain(names.noticesQueue());
        List<Message> dead = queues.drain(names.deadLetterQueue());
        Map<String, Map<String, String>> ledger = Tables.ledger(dynamo, names.ledgerTable());
        Map<String, Map<String, String>> quarantine = Tables.scan(dynamo, names.quarantineTable(), Set.of("failureClass", "attempts"));

        Map<String, Integer> noticeCount = new HashMap<>();
        Map<String, Long> firstNoticeAt = new HashMap<>();
        for (Message m : notices) {
            String id = Queues.attr(m, "job-id");
            noticeCount.merge(id, 1, Integer::sum);
            String sent = m.attributes().get(MessageSystemAttributeName.SENT_TIMESTAMP);
            if (sent != null) {
                firstNoticeAt.merge(id, Long.parseLong(sent), Math::min);
            }
        }
        Map<String, String> dlqClass = new HashMap<>();
        for (Message m : dead) {
            dlqClass.putIfAbsent(Queues.attr(m, "job-id"), String.valueOf(Queues.attr(m, "failure-class")));
        }

        Map<JobKind, Row> rows = new EnumMap<>(JobKind.class);
        int duplicates = 0;
        List<String> lost = new ArrayList<>();
        List<String> unfinished = new ArrayList<>();
        Map<String, String> innocents = new TreeMap<>();
        List<String> poisonCompleted = new ArrayList<>();
        List<String> poisonUnquarantined = new ArrayList<>();
        List<String> partial = new ArrayList<>();
        Map<String, String> unexpected = new TreeMap<>();
        List<Long> healthyCompletions = new ArrayList<>();
        Set<String> sentIds = new HashSet<>();
        for (JobKind kind : JobKind.values()) {
            List<ChaosRun.Job> ofKind = o.jobs().stream().filter(j -> j.kind() == kind).toList();
            int completed = 0;
            int dup = 0;
            int quarantined = 0;
            int lostOfKind = 0;
            int unfinishedOfKind = 0;
            Map<String, Integer> classes = new TreeMap<>();
            for (ChaosRun.Job j : ofKind) {
                String id = j.id();
                sentIds.add(id);
                int n = noticeCount.getOrDefault(id, 0);
                boolean record = quarantine.containsKey(id);
                boolean dlq = dlqClass.containsKey(id);
                String cls = record ? quarantine.get(id).get("failureClass") : dlq ? dlqClass.get(id) : null;
                if (n > 0) {
                    completed++;
                    dup += n - 1;
                    if (kind == JobKind.HEALTHY) {
                        healthyCompletions.add(firstNoticeAt.getOrDefault(id, 0L));
                    }
                }
                if (record || dlq) {
                    quarantined++;
                    classes.merge(cls, 1, Integer::sum);
                    if (record != dlq) {
                        partial.add(id + (record ? " (record, no DLQ copy)" : " (DLQ copy, no record)"));
                    }
                    if (!kind.poison()) {
                        innocents.put(id, cls);
                    } else if (!kind.expectedClasses().contains(cls)) {
                        unexpected.put(id, cls);
                    }
                }
                if (n == 0 && !record && !dlq) {
                    Map<String, String> l = ledger.get(id);
                    String state = l == null ? null : l.get("state");
                    String where = id + " (ledger " + (l == null ? "none" : state + ", attempt " + l.get("attempt")) + ")";
                    // A job still in progress when the bound ran out is unfinished; one whose ledger says it is done
                    // (or any, once the run settled with an empty queue) and that left no outcome is lost.
                    if (o.settled() || "SUCCEEDED".equals(state) || "QUARANTINED".equals(state)) {
                        lostOfKind++;
                        lost.add(where);
                    } else {
                        unfinishedOfKind++;
                        unfinished.add(where);
                    }
                }
                if (kind.poison() && n > 0) {
                    poisonCompleted.add(id);
                }
                if (kind.poison() && !record && !dlq) {
                    poisonUnquarantined.add(id);
                }
            }
            duplicates += dup;
            rows.put(kind, new Row(ofKind.size(), completed, dup, quarantined, lostOfKind, unfinishedOfKind, classes));
        }
        Set<String> unknown = noticeCount.keySet().stream().filter(id -> !sentIds.contains(id)).collect(Collectors.toCollection(java.util.TreeSet::new));

        // The longest stretch, from the first send on, in which no healthy job completed.
        healthyCompletions.sort(Long::compare);
        long prev = o.firstSend() == null ? 0 : o.firstSend().toEpochMilli();
        long best = 0;
        long bestFrom = prev;
        long bestTo = prev;
        for (long t : healthyCompletions) {
            if (t - prev > best) {
                best = t - prev;
                bestFrom = prev;
                bestTo = t;
            }
            prev = Math.max(prev, t);
        }

        Set<String> problemIds = new java.util.TreeSet<>();
        Stream.of(lost.stream(), unfinished.stream(), innocents.keySet().stream(), poisonCompleted.stream(), poisonUnquarantined.stream(), partial.stream(),
                        unexpected.keySet().stream())
                .flatMap(s -> s).map(s -> s.split(" ")[0]).forEach(problemIds::add);
        String details = details(o, dynamo, problemIds);
        List<String> duplicated = noticeCount.entrySet().stream().filter(e -> e.getValue() > 1).sorted(Map.Entry.comparingByKey())
                .map(e -> e.getKey() + " x" + e.getValue()).toList();
        return new ChaosReport(o, rows, duplicates, duplicated, lost, unfinished, innocents, poisonCompleted, poisonUnquarantined, partial, unexpected, unknown,
                Duration.ofMillis(best), Instant.ofEpochMilli(bestFrom), Instant.ofEpochMilli(bestTo), details);
    }

    public int lost() {
        return lost.size();
    }

    public int unfinished() {
        return unfinished.size();
    }

    public int duplicates() {
        return duplicates;
    }

    public int innocentQuarantines() {
        return innocents.size();
    }

    public int poisonCompleted() {
        return poisonCompleted.size();
    }

    public int poisonUnquarantined() {
        return poisonUnquarantined.size();
    }

    public int partialQuarantines() {
        return partial.size();
    }

    public boolean settled() {
        return outcome.settled();
    }

    public boolean pass() {
        return failures().isEmpty();
    }

    private List<String> failures() {
        List<String> f = new ArrayList<>();
        if (!lost.isEmpty()) {
            f.add("lost=" + lost.size());
        }
        if (!unfinished.isEmpty()) {
            f.add("unfinished=" + unfinished.size());
        }
        if (!innocents.isEmpty()) {
            f.add("innocent-quarantines=" + innocents.size());
        }
        if (!poisonCompleted.isEmpty()) {
            f.add("poison-completed=" + poisonCompleted.size());
        }
        if (!poisonUnquarantined.isEmpty()) {
            f.add("poison-not-quarantined=" + poisonUnquarantined.size());
        }
        if (!partial.isEmpty()) {
            f.add("partial-quarantines=" + partial.size());
        }
        if (!unexpectedClasses.isEmpty()) {
            f.add("unexpected-class=" + unexpectedClasses.size());
        }
        if (outcome.settings().fifoNotices() && duplicates > 0) {
            f.add("duplicate-notices=" + duplicates + " on a FIFO queue");
        }
        if (!outcome.settled()) {
            f.add("not settled within " + ChaosSettings.text(outcome.settings().settleTimeout()));
        }
        if (!outcome.settings().freeze().isZero() && outcome.freezeStart() == null) {
            // The run did not go through the fault it was asked for (it settled before the freeze was due, or SIGSTOP failed).
            f.add("the " + ChaosSettings.text(outcome.settings().freeze()) + " DynamoDB freeze never happened");
        }
        return f;
    }

    /** The freeze as it happened: its length, or none. */
    private String freezeDone() {
        if (outcome.freezeStart() == null) {
            return "none";
        }
        Instant end = outcome.freezeEnd() == null ? outcome.finished() : outcome.freezeEnd();
        return ChaosSettings.text(Duration.ofSeconds(Math.round(Duration.between(outcome.freezeStart(), end).toMillis() / 1000.0)));
    }

    /** A report of a run whose reconciliation found nothing wrong: what the verdict then says depends on the run alone. */
    static ChaosReport clean(ChaosRun.Outcome outcome) {
        return new ChaosReport(outcome, Map.of(), 0, List.of(), List.of(), List.of(), Map.of(), List.of(), List.of(), List.of(), Map.of(), Set.of(),
                Duration.ZERO, outcome.started(), outcome.started(), "");
    }

    public String verdict() {
        String counts = "lost=" + lost.size() + " unfinished=" + unfinished.size() + " duplicates=" + duplicates + " innocent-quarantines=" + innocents.size()
                + " poison-completed=" + poisonCompleted.size() + " poison-not-quarantined=" + poisonUnquarantined.size()
                + " partial-quarantines=" + partial.size() + " unexpected-class=" + unexpectedClasses.size() + " settled=" + (outcome.settled() ? "yes" : "no")
                + " jobs=" + outcome.jobs().size() + " kills=" + outcome.kills()
                + (outcome.kills() == 0 && !outcome.settings().killEvery().isZero() ? " (no SIGKILL landed: that path was not exercised)" : "")
                + " kills-skipped=" + outcome.killsSkipped() + " self-exits=" + outcome.selfExits()
                + " freeze=" + freezeDone() + " notices=" + (outcome.settings().fifoNotices() ? "fifo" : "standard")
                + " ledger-items=" + outcome.settings().itemFormat();
        List<String> f = failures();
        return f.isEmpty() ? "VERDICT: PASS " + counts : "VERDICT: FAIL (" + String.join(", ", f) + ") " + counts;
    }

    /** The table, the problem details and the verdict line, as printed and written to report.txt. */
    public String text() {
        ChaosSettings s = outcome.settings();
        StringBuilder b = new StringBuilder();
        b.append("chaos run ").append(outcome.names().prefix()).append(": ").append(s.describe()).append('\n');
        b.append(String.format(Locale.ROOT, "%-16s %6s %10s %12s %12s %6s %11s  %s%n", "kind", "sent", "completed", "dup-notices", "quarantined",
                "lost", "unfinished", "quarantine classes seen (expected)"));
        int sent = 0;
        int completed = 0;
        int quarantined = 0;
        int lostTotal = 0;
        int unfinishedTotal = 0;
        for (Map.Entry<JobKind, Row> e : rows.entrySet()) {
            JobKind k = e.getKey();
            Row r = e.getValue();
            if (r.sent() == 0) {
                continue;
            }
            sent += r.sent();
            completed += r.completed();
            quarantined += r.quarantined();
            lostTotal += r.lost();
            unfinishedTotal += r.unfinished();
            String label = k == JobKind.CRASH ? "crash (" + s.crashFault() + ")" : k.label();
            String classes = r.classes().isEmpty() ? "-" : r.classes().entrySet().stream().map(c -> c.getKey() + " x" + c.getValue())
                    .collect(Collectors.joining(", "));
            String expected = k.poison() ? " (" + String.join(" or ", new java.util.TreeSet<>(k.expectedClasses())) + ")" : " (none)";
            b.append(String.format(Locale.ROOT, "%-16s %6d %10d %12d %12d %6d %11d  %s%s%n", label, r.sent(), r.completed(), r.duplicates(),
                    r.quarantined(), r.lost(), r.unfinished(), classes, expected));
        }
        b.append(String.format(Locale.ROOT, "%-16s %6d %10d %12d %12d %6d %11d%n", "total", sent, completed, duplicates, quarantined, lostTotal,
                unfinishedTotal));
        b.append('\n');
        line(b, "completed (unique notices)", Integer.toString(completed));
        line(b, "duplicate notices", duplicates + (duplicated.isEmpty() ? "" : " on " + count(duplicated))
                + (outcome.settings().fifoNotices() ? " (FIFO notices queue: a failure)" : " (reported, not a failure: a standard notices queue is at-least-once)"));
        line(b, "lost (no notice, no quarantine)", count(lost));
        line(b, "unfinished (still in progress at the bound)", count(unfinished));
        line(b, "innocent quarantines", count(innocents.entrySet().stream().map(e -> e.getKey() + " as " + e.getValue()).toList()));
        line(b, "poison completed", count(poisonCompleted));
        line(b, "poison not quarantined", count(poisonUnquarantined));
        line(b, "partial quarantines", count(partial));
        line(b, "poison with another class", count(unexpectedClasses.entrySet().stream().map(e -> e.getKey() + " as " + e.getValue()).toList()));
        line(b, "notices for unknown job ids", count(List.copyOf(unknownNotices)));
        line(b, "worker kills (SIGKILL)", outcome.kills() + (outcome.killsSkipped() == 0 ? ""
                : " (" + outcome.killsSkipped() + " ticks skipped: a worker was still booting)"));
        line(b, "worker self-exits", outcome.selfExits() + (outcome.selfExits() == 0 ? "" : " (" + outcome.selfExitsByCode().entrySet().stream()
                .sorted(Map.Entry.comparingByKey()).map(e -> e.getKey() + " x" + e.getValue()).collect(Collectors.joining(", ")) + ")"));
        line(b, "worker starts", outcome.starts() + " (boot times: " + bootTimes(outcome) + ")");
        line(b, "DynamoDB freeze", outcome.freezeStart() == null ? "none"
                : seconds(Duration.between(outcome.freezeStart(), outcome.freezeEnd() == null ? outcome.finished() : outcome.freezeEnd()))
                + " (SIGSTOP at " + rel(outcome.freezeStart()) + ", SIGCONT at " + (outcome.freezeEnd() == null ? "never" : rel(outcome.freezeEnd())) + ")");
        line(b, "longest stretch without a healthy completion", seconds(longestGap) + " (" + rel(gapFrom) + " to " + rel(gapTo) + ")");
        line(b, "sending", outcome.firstSend() == null || outcome.lastSend() == null ? "incomplete"
                : seconds(Duration.between(outcome.firstSend(), outcome.lastSend())) + " (" + rel(outcome.firstSend()) + " to " + rel(outcome.lastSend()) + ")");
        line(b, "settled", outcome.settled() ? "yes, " + seconds(Duration.between(outcome.lastSend(), outcome.settledAt())) + " after the last send"
                + " (bound " + ChaosSettings.text(s.settleTimeout()) + ")" : "NO, not within " + ChaosSettings.text(s.settleTimeout()) + " after the last send");
        line(b, "wall time", seconds(Duration.between(outcome.started(), outcome.finished())));
        line(b, "worker logs", "target/chaos-logs/" + outcome.names().prefix() + "-*");
        if (!details.isEmpty()) {
            b.append("\nproblem jobs (ledger history, then worker log lines naming them):\n").append(details);
        }
        b.append(verdict()).append('\n');
        return b.toString();
    }

    /** Median and longest Quarkus boot of the run's workers, from their logs (a loaded machine shows here). */
    private static String bootTimes(ChaosRun.Outcome o) {
        List<Double> secs = new ArrayList<>();
        Pattern started = Pattern.compile(" started in (\\d+(?:\\.\\d+)?)s");
        try (Stream<Path> files = Files.list(o.logDir())) {
            for (Path f : files.filter(f -> f.getFileName().toString().startsWith(o.names().prefix() + "-w")).toList()) {
                Matcher m = started.matcher(new String(Files.readAllBytes(f), StandardCharsets.ISO_8859_1));
                if (m.find()) {
                    secs.add(Double.parseDouble(m.group(1)));
                }
            }
        } catch (IOException e) {
            return "unreadable: " + e.getMessage();
        }
        if (secs.isEmpty()) {
            return "none finished";
        }
        secs.sort(Double::compare);
        return String.format(Locale.ROOT, "%d finished, median %.1f s, longest %.1f s", secs.size(), secs.get(secs.size() / 2),
                secs.get(secs.size() - 1));
    }

    private static void line(StringBuilder b, String label, String value) {
        b.append(String.format(Locale.ROOT, "%-46s %s%n", label, value));
    }

    private static String count(List<String> ids) {
        if (ids.isEmpty()) {
            return "0";
        }
        String shown = ids.stream().limit(LIST_AT_MOST).collect(Collectors.joining(", "));
        return ids.size() + ": " + shown + (ids.size() > LIST_AT_MOST ? ", ..." : "");
    }

    private String rel(Instant t) {
        if (outcome.firstSend() == null) {
            return t.toString();
        }
        return String.format(Locale.ROOT, "+%.1fs", Duration.between(outcome.firstSend(), t).toMillis() / 1000.0);
    }

    private static String seconds(Duration d) {
        return String.format(Locale.ROOT, "%.1f s", d.toMillis() / 1000.0);
    }

    /** For each problem job (at most a few dozen): its ledger history, and the worker log lines that name it. */
    private static String details(ChaosRun.Outcome o, DynamoDbClient dynamo, Set<String> ids) {
        if (ids.isEmpty()) {
            return "";
        }
        List<String> shown = ids.stream().limit(40).toList();
        DynamoLedgerStore store = new DynamoLedgerStore(dynamo, o.names().ledgerTable(), Clock.systemUTC());
        Map<String, List<String>> logLines = logLines(o, shown);
        StringBuilder b = new StringBuilder();
        for (String id : shown) {
            b.append("  ").append(id).append(": ");
            try {
                LedgerRecord r = store.find(new JobKey(o.settings().tenant(), id)).orElse(null);
                if (r == null) {
                    b.append("no ledger item\n");
                } else {
                    b.append("ledger ").append(r.state()).append(", attempt ").append(r.attempt())
                            .append(r.quarantineClass() == null ? "" : ", quarantined " + r.quarantineClass() + ": " + r.quarantineReason()).append('\n');
                    for (AttemptEntry e : r.history()) {
                        b.append(String.format(Locale.ROOT, "      #%d %s %s %s worker=%s isolated=%s others=%d started=%s ended=%s %s%n", e.number(),
                                e.outcome(), e.failureClass() == null ? "-" : e.failureClass(), e.errorType() == null ? "" : e.errorType(),
                                e.worker(), e.isolated(), e.othersInFlight(), e.startedAt(), e.endedAt(), e.message() == null ? "" : e.message()));
                    }
                }
            } catch (RuntimeException e) {
                b.append("ledger unreadable: ").append(e).append('\n');
            }
            for (String l : logLines.getOrDefault(id, List.of())) {
                b.append("      log ").append(l).append('\n');
            }
        }
        if (ids.size() > shown.size()) {
            b.append("  ... and ").append(ids.size() - shown.size()).append(" more\n");
        }
        return b.toString();
    }

    private static Map<String, List<String>> logLines(ChaosRun.Outcome o, List<String> ids) {
        Map<String, List<String>> out = new LinkedHashMap<>();
        Pattern p = Pattern.compile("(?<![A-Za-z0-9-])(?:P-)?(" + ids.stream().map(Pattern::quote).collect(Collectors.joining("|")) + ")(?![A-Za-z0-9-])");
        try (Stream<Path> files = Files.list(o.logDir())) {
            for (Path f : files.filter(f -> f.getFileName().toString().startsWith(o.names().prefix())).sorted().toList()) {
                // Decoded leniently: a log cut off by a SIGKILL may end in half a character.
                for (String line : new String(Files.readAllBytes(f), StandardCharsets.UTF_8).split("\n")) {
                    Matcher m = p.matcher(line);
                    Set<String> named = new java.util.TreeSet<>();
                    while (m.find()) {
                        named.add(m.group(1));
                    }
                    for (String id : named) {
                        List<String> l = out.computeIfAbsent(id, k -> new ArrayList<>());
                        if (l.size() < 12) {
                            String text = line.length() > 400 ? line.substring(0, 400) + "..." : line;
                            l.add(f.getFileName() + ": " + text);
                        }
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }
}
