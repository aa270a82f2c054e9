package io.poisonguard.testing;

import java.util.HashMap;
import java.util.Map;

/**
 * The emulators, with the application's SQS calls going through a {@link BlackHoleProxy} a test can turn
 * into a black hole. The test reaches SQS directly through {@link #direct()}.
 */
public class BlackHoleSqsResource extends EmulatorsResource {
    private static volatile BlackHoleProxy proxy;
    private static volatile String direct;

    @Override
    public Map<String, String> start() {
        Map<String, String> config = new HashMap<>(super.start());
        direct = config.get("quarkus.sqs.endpoint-override");
        proxy = BlackHoleProxy.to(direct);
        config.put("quarkus.sqs.endpoint-override", proxy.endpoint());
        return config;
    }

    @Override
    public void stop() {
        if (proxy != null) {
            proxy.close();
        }
        super.stop();
    }

    /** The proxy in front of SQS for the running application. */
    public static BlackHoleProxy proxy() {
        return proxy;
    }

    /** SQS's own endpoint, not through the proxy. */
    public static String direct() {
        return direct;
    }
}
