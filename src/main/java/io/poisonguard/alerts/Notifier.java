package io.poisonguard.alerts;

/** One way to deliver alerts. Implementations may throw; {@link Alerts} contains the failure. */
public interface Notifier {
    String name();

    void send(Alert alert) throws Exception;
}
