package io.poisonguard.alerts;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.jboss.logging.Logger;

/** Always on: one structured JSON line per alert on the {@code poison-guard.events} category. */
final class LogNotifier implements Notifier {
    private static final Logger EVENTS = Logger.getLogger("poison-guard.events");
    private final ObjectMapper json;

    LogNotifier(ObjectMapper json) {
        this.json = json;
    }

    @Override
    public String name() {
        return "log";
    }

    @Override
    public void send(Alert alert) throws Exception {
        EVENTS.info(json.writeValueAsString(alert));
    }
}
