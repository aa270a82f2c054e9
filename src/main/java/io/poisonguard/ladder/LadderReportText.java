package io.poisonguard.ladder;

import io.poisonguard.ladder.ClassPolicy;

import java.io.PrintWriter;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;

/** Writes a {@link LadderReport} as the tables of seed 002: the zero-jitter schedule, then the simulated shares. */
public final class LadderReportText {
    private final PrintWriter out;

    public LadderReportText(PrintWriter out) {
        this.out = out;
    }

    public void print(LadderReport report) {
        ClassPolicy policy = report.policy();
        Ladder ladder = policy.ladder();
        out.printf(Locale.ROOT, "%s: max-attempts %d; ladder %s jitter, base %s, multiplier %s, cap %s; cutoff %s; queue retention %s; attempt time %s%n",
                report.failureClass().key(), policy.maxAttempts(), ladder.jitter(), DurationText.human(ladder.base()),
                BigDecimal.valueOf(ladder.multiplier()).stripTrailingZeros().toPlainString(), DurationText.human(ladder.cap()),
                policy.cutoff().map(DurationText::human).orElse("none"), DurationText.human(report.retention()),
                DurationText.human(report.attemptTime()));
        out.println();
        schedule(report);
        out.println();
        simulated(report);
    }

    private void schedule(LadderReport report) {
        out.println("  zero jitter (fastest possible climb: every delay draws its floor)");
        out.printf(Locale.ROOT, "  %9s  %12s  %13s  %12s  %s%n", "attempt", "floor delay", "ceiling delay", "starts at", "result");
        for (ScheduleRow row : report.schedule()) {
            boolean limit = row.stop().filter(s -> s == StopCondition.ATTEMPT_LIMIT).isPresent();
            out.printf(Locale.ROOT, "  %9d  %12s  %13s  %12s  %s%n", row.attempt(),
                    limit ? "-" : ElapsedText.of(row.floor()), limit ? "-" : ElapsedText.of(row.ceiling()),
                    ElapsedText.of(row.start()), result(report, row));
        }
        int last = report.fastest().lastAttempt();
        int limit = report.policy().maxAttempts();
        if (last < limit) {
            String never = last + 1 == limit ? String.valueOf(limit) : (last + 1) + "-" + limit;
            out.printf(Locale.ROOT, "  %9s  %12s  %13s  %12s  %s%n", never, "-", "-", "-", "never reached");
        }
        out.println("  (starts at: elapsed since the first receive)");
        Chain slowest = report.slowest();
        out.printf(Locale.ROOT, "  slowest climb (every delay draws its ceiling): attempt %d starts at %s, then %s%n",
                slowest.lastAttempt(), ElapsedText.of(slowest.start(slowest.lastAttempt())), stopWords(report, slowest.stop()));
    }

    private String result(LadderReport report, ScheduleRow row) {
        if (row.retried()) {
            return "retry scheduled";
        }
        StopCondition stop = row.stop().orElseThrow();
        Duration retryAt = row.start().plus(report.attemptTime()).plus(row.floor());
        return switch (stop) {
            case ATTEMPT_LIMIT -> "STOP: attempt limit (quarantined)";
            case CUTOFF -> "STOP: cutoff (its retry at " + ElapsedText.of(retryAt) + " is past "
                    + ElapsedText.of(report.policy().cutoff().orElseThrow()) + "; quarantined)";
            case RETENTION -> "STOP: retention (its retry at " + ElapsedText.of(retryAt) + " is past "
                    + ElapsedText.of(report.retention()) + "; SQS deletes the message)";
        };
    }

    private static String stopWords(LadderReport report, StopCondition stop) {
        return stop == StopCondition.ATTEMPT_LIMIT ? "the attempt limit stops it" : report.window(stop) + " stops it";
    }

    private void simulated(LadderReport report) {
        SimulatedChains sim = report.simulated();
        out.printf(Locale.ROOT, "  live jitter, %,d simulated chains%n", sim.chains());
        out.printf(Locale.ROOT, "  %-24s  %9s  %8s%n", "last attempt scheduled", "chains", "share");
        for (Map.Entry<Integer, Integer> e : sim.lastScheduled().entrySet()) {
            out.printf(Locale.ROOT, "  %-24d  %,9d  %8s%n", e.getKey(), e.getValue(), LadderReport.percent(sim.share(e.getValue())));
        }
        out.printf(Locale.ROOT, "  %-24s  %9s  %8s%n", "stop condition", "chains", "share");
        for (Map.Entry<StopCondition, Integer> e : sim.stops().entrySet()) {
            out.printf(Locale.ROOT, "  %-24s  %,9d  %8s%n", e.getKey().words(), e.getValue(), LadderReport.percent(sim.share(e.getValue())));
        }
        out.printf(Locale.ROOT, "  chains that reached max-attempts=%d: %,d%n", report.policy().maxAttempts(), sim.reachedLimit());
    }
}
