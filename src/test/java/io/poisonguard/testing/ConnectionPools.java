package io.poisonguard.testing;

import io.quarkus.arc.ClientProxy;
import org.apache.http.pool.ConnPoolControl;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayDeque;
import java.util.Collections;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.OptionalInt;
import java.util.Set;

/**
 * The connection pool an SDK client really runs with: its Apache connection manager, found by walking the client's
 * fields (the SDK keeps it several private objects deep, behind names that are not its API), so a test can tell the
 * size the service was built with from the size configuration says it should have.
 */
public final class ConnectionPools {
    private static final int MAX_DEPTH = 12;

    private ConnectionPools() {
    }

    /** The most connections the Apache pool under {@code client} opens at once, if it has one. */
    public static OptionalInt maxTotal(Object client) {
        Object root = client instanceof ClientProxy proxy ? proxy.arc_contextualInstance() : client;
        Set<Object> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        Deque<Object[]> todo = new ArrayDeque<>();
        todo.add(new Object[] {root, 0});
        while (!todo.isEmpty()) {
            Object[] next = todo.poll();
            Object o = next[0];
            int depth = (int) next[1];
            if (o == null || !seen.add(o)) {
                continue;
            }
            if (o instanceof ConnPoolControl<?> pool) {
                return OptionalInt.of(pool.getMaxTotal());
            }
            if (depth >= MAX_DEPTH) {
                continue;
            }
            // The SDK keeps a client's HTTP client among its options (a map) and wraps the connection manager in a proxy.
            if (o instanceof java.util.Map<?, ?> map) {
                map.values().forEach(v -> todo.add(new Object[] {v, depth + 1}));
                continue;
            }
            if (o instanceof java.util.Collection<?> items) {
                items.forEach(v -> todo.add(new Object[] {v, depth + 1}));
                continue;
            }
            if (java.lang.reflect.Proxy.isProxyClass(o.getClass())) {
                todo.add(new Object[] {java.lang.reflect.Proxy.getInvocationHandler(o), depth + 1});
                continue;
            }
            if (!inLibraries(o.getClass())) {
                continue;
            }
            for (Class<?> c = o.getClass(); c != null && c != Object.class; c = c.getSuperclass()) {
                for (Field f : c.getDeclaredFields()) {
                    if (Modifier.isStatic(f.getModifiers()) || f.getType().isPrimitive()) {
                        continue;
                    }
                    try {
                        f.setAccessible(true);
                        todo.add(new Object[] {f.get(o), depth + 1});
                    } catch (RuntimeException | IllegalAccessException e) {
                        // A field the module system keeps closed: not where the SDK keeps its pool.
                    }
                }
            }
        }
        return OptionalInt.empty();
    }

    /** Only the SDK's and HttpClient's own objects are walked: not the JDK's, nor whatever a client happens to reference. */
    private static boolean inLibraries(Class<?> c) {
        String name = c.getName();
        return name.startsWith("software.amazon.awssdk.") || name.startsWith("org.apache.http.");
    }
}
