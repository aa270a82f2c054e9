package io.poisonguard.config;

import io.poisonguard.admission.Preflight;
import io.poisonguard.disposition.Decisions;
import io.poisonguard.disposition.Policy;
import io.poisonguard.failure.Classifier;
import io.poisonguard.handler.JobHandlers;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Named;
import jakarta.inject.Singleton;

import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Clock;
import java.util.random.RandomGenerator;

/** Turns configuration into the domain objects the pipeline uses; each one validates at boot. */
@ApplicationScoped
public class ConfigBeans {

    @Produces
    @Singleton
    Names names(PoisonGuardConfig config) {
        Settings.requirePrefix(config.prefix());
        return new Names(config.prefix(), config.notices().fifo());
    }

    @Produces
    @Singleton
    io.poisonguard.owners.OwnerMap owners(PoisonGuardConfig config) {
        return Settings.owners(config);
    }

    @Produces
    @Singleton
    Clock clock() {
        return Clock.systemUTC();
    }

    @Produces
    @Singleton
    RandomGenerator random() {
        // java.util.Random is safe to share between threads; the pipeline draws jitter from many.
        return new java.util.Random();
    }

    @Produces
    @Singleton
    Policy policy(PoisonGuardConfig config) {
        return Settings.policy(config);
    }

    @Produces
    @Singleton
    Decisions decisions(Policy policy) {
        return new Decisions(policy);
    }

    @Produces
    @Singleton
    Classifier classifier(PoisonGuardConfig config) {
        return Settings.classifier(config.failure());
    }

    @Produces
    @Singleton
    Preflight preflight(PoisonGuardConfig config, JobHandlers handlers) {
        return new Preflight(Settings.admission(config.admission()), handlers);
    }

    @Produces
    @Singleton
    @Named("worker-id")
    String workerId(PoisonGuardConfig config) {
        return config.workerId().filter(s -> !s.isBlank()).orElseGet(ConfigBeans::defaultWorkerId);
    }

    private static String defaultWorkerId() {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            host = "unknown-host";
        }
        return host + "-" + ManagementFactory.getRuntimeMXBean().getPid();
    }
}
