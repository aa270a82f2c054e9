package io.poisonguard.cli;

import io.poisonguard.config.ClassPolicies;
import io.poisonguard.config.PoisonGuardConfig;
import io.poisonguard.config.Settings;
import io.poisonguard.config.StandaloneConfig;
import io.poisonguard.ladder.ClassPolicy;
import io.poisonguard.ladder.LadderLint;
import io.poisonguard.ladder.LadderReport;
import io.poisonguard.ladder.LadderReportText;
import io.poisonguard.ladder.Reach;
import io.poisonguard.failure.FailureClass;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * Prints each failure class's retry ladder as the service would run it and lints it: exit 0 when
 * every attempt limit can be reached, 3 when one is a dead setting (scripts/ladder-report.sh).
 */
@Command(name = "ladder-report", mixinStandardHelpOptions = true, version = "poison-guard ladder-report", sortOptions = false,
        description = {"Prints, per failure class, the retry delays, when each attempt starts, which stop condition fires first"
                + " (attempt limit, cutoff, queue retention), and flags attempt limits no chain can reach.",
                "Reads the configuration the service would: application.properties (prod profile), environment variables,"
                        + " system properties, then -D overrides."},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:no dead setting", "1:the configuration cannot be read or is refused", "2:bad options",
                "3:an attempt limit is a dead setting"})
public final class LadderReportCommand implements Callable<Integer> {
    /** Exit code when some attempt limit can never be reached, so CI can lint a configuration. */
    public static final int DEAD_SETTING = 3;
    /** Exit code when the configuration cannot be read or holds a value the service refuses. */
    public static final int BAD_CONFIGURATION = 1;

    @Spec
    CommandSpec spec;

    @Option(names = "--chains", defaultValue = "100000", description = "Chains simulated with live jitter per class (default ${DEFAULT-VALUE}).")
    int chains;

    @Option(names = "--attempt-time", defaultValue = "0s", converter = DurationOption.class,
            description = "How long an attempt runs before it fails, e.g. 60s (default ${DEFAULT-VALUE}, as in seed 002).")
    Duration attemptTime;

    @Option(names = "--class", converter = ClassOption.class, paramLabel = "NAME",
            description = "Only this failure class: permanent, transient, throttled, dependency-down, crash or admission.")
    FailureClass only;

    @Option(names = "--seed", defaultValue = "2", description = "Seed of the simulated jitter (default ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "-D", paramLabel = "KEY=VALUE", mapFallbackValue = "",
            description = "Overrides a configuration key, e.g. -Dpoison-guard.failure.throttled.cutoff=16h.")
    Map<String, String> overrides = new LinkedHashMap<>();

    public static void main(String[] args) {
        System.exit(new CommandLine(new LadderReportCommand()).execute(args));
    }

    @Override
    public Integer call() {
        if (chains < 1) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--chains must be at least 1, was " + chains);
        }
        if (attemptTime.isNegative()) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--attempt-time must not be negative");
        }
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        PoisonGuardConfig config;
        Map<FailureClass, ClassPolicy> classes;
        try {
            config = StandaloneConfig.load(overrides);
            classes = ClassPolicies.of(config.failure());
        } catch (RuntimeException e) {
            err.println("configuration refused: " + e.getMessage());
            return BAD_CONFIGURATION;
        }
        Duration retention = config.resources().queueRetention();
        if (retention.isNegative() || retention.isZero()) {
            err.println("configuration refused: poison-guard.resources.queue-retention must be positive");
            return BAD_CONFIGURATION;
        }
        if (only != null) {
            classes = new EnumMap<>(Map.of(only, classes.get(only)));
        }
        List<LadderReport> reports = LadderLint.lint(classes, retention, attemptTime, chains, seed);
        LadderReportText text = new LadderReportText(out);
        for (LadderReport report : reports) {
            text.print(report);
            out.println();
        }
        List<LadderReport> dead = reports.stream().filter(LadderReport::dead).toList();
        for (LadderReport report : reports) {
            String key = Settings.classKey(report.failureClass(), "max-attempts");
            String mark = report.dead() ? "DEAD" : report.reach() == Reach.SOMETIMES ? "WARN" : "OK";
            out.printf(Locale.ROOT, "%-4s  %s=%d%s: %s%n", mark, key, report.policy().maxAttempts(),
                    report.dead() ? " is a dead setting" : "", report.verdict());
        }
        out.println(dead.isEmpty() ? "no dead settings"
                : dead.size() + " dead setting" + (dead.size() == 1 ? "" : "s") + ": "
                + String.join(", ", dead.stream().map(r -> Settings.classKey(r.failureClass(), "max-attempts")).toList()));
        out.flush();
        return dead.isEmpty() ? 0 : DEAD_SETTING;
    }

    /** Reads {@code --attempt-time} like a configuration duration. */
    static final class DurationOption implements CommandLine.ITypeConverter<Duration> {
        @Override
        public Duration convert(String value) {
            return StandaloneConfig.duration(value);
        }
    }

    /** Reads {@code --class} as its configuration spelling ({@code dependency-down}) or its constant. */
    static final class ClassOption implements CommandLine.ITypeConverter<FailureClass> {
        @Override
        public FailureClass convert(String value) {
            for (FailureClass c : FailureClass.values()) {
                if (c.key().equalsIgnoreCase(value) || c.name().equalsIgnoreCase(value)) {
                    return c;
                }
            }
            throw new CommandLine.TypeConversionException("'" + value + "' is not a failure class; one of "
                    + String.join(", ", Arrays.stream(FailureClass.values()).map(FailureClass::key).toList()));
        }
    }
}
