package io.poisonguard.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP forwarder in front of an endpoint that can turn into a black hole, as a wedged load balancer or a
 * half-dead server does: while {@link #swallow() swallowing}, every byte sent on any connection (open or new)
 * is read and dropped, and nothing comes back (an answer already on its way is dropped too). {@link #restore()}
 * ends it: connections that lost a request or its answer stay open and silent for good (nothing will ever answer
 * it), idle ones are closed, new ones are forwarded.
 * A client that bounds its calls gives up on the lost request; one that waits on the socket alone waits as
 * long as its read timeout, or for ever without one.
 */
public final class BlackHoleProxy implements AutoCloseable {
    private final ServerSocket server;
    private final String targetHost;
    private final int targetPort;
    private final Set<Link> links = ConcurrentHashMap.newKeySet();
    private final AtomicLong swallowed = new AtomicLong();
    private volatile boolean swallowing;

    private BlackHoleProxy(URI target) throws IOException {
        this.targetHost = target.getHost();
        this.targetPort = target.getPort();
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread.ofPlatform().daemon().name("black-hole-proxy").start(this::acceptLoop);
    }

    /** A proxy forwarding to {@code endpoint} (an http URL with a port). */
    public static BlackHoleProxy to(String endpoint) {
        try {
            return new BlackHoleProxy(URI.create(endpoint));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The URL clients use instead of the target's. */
    public String endpoint() {
        return "http://" + server.getInetAddress().getHostAddress() + ":" + server.getLocalPort();
    }

    /** From now on every byte sent is dropped unanswered. */
    public void swallow() {
        swallowing = true;
        links.forEach(l -> l.lost = true);
    }

    /** Ends the black hole: see the class comment. */
    public void restore() {
        swallowing = false;
        for (Link l : links) {
            if (l.lost && l.swallowed.get() == 0) {
                l.close();
            }
        }
    }

    /** Bytes dropped (either way) since the proxy started. */
    public long swallowed() {
        return swallowed.get();
    }

    /** Connections holding a request that will never be answered (or whose answer was dropped). */
    public long connectionsWithALostRequest() {
        return links.stream().filter(l -> l.lost && l.swallowed.get() > 0).count();
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            try {
                Socket client = server.accept();
                Link link = new Link(client);
                links.add(link);
                link.lost = swallowing;
                if (!link.lost) {
                    link.connect();
                }
                Thread.ofPlatform().daemon().name("black-hole-in").start(() -> link.pump(client, true));
            } catch (IOException e) {
                if (!server.isClosed()) {
                    throw new UncheckedIOException(e);
                }
            }
        }
    }

    /** One client connection and, unless it was born in the black hole, its connection to the target. */
    private final class Link {
        final Socket client;
        volatile Socket target;
        volatile boolean lost;
        final AtomicLong swallowed = new AtomicLong();

        Link(Socket client) {
            this.client = client;
        }

        void connect() throws IOException {
            Socket t = new Socket();
            t.connect(new InetSocketAddress(targetHost, targetPort), 5000);
            target = t;
            Thread.ofPlatform().daemon().name("black-hole-out").start(() -> pump(t, false));
        }

        /** Copies one direction until either side closes, dropping what arrives while the link is lost. */
        void pump(Socket from, boolean fromClient) {
            byte[] buffer = new byte[16 * 1024];
            try {
                InputStream in = from.getInputStream();
                int n;
                while ((n = in.read(buffer)) >= 0) {
                    if (lost) {
                        swallowed.addAndGet(n);
                        BlackHoleProxy.this.swallowed.addAndGet(n);
                        continue;
                    }
                    OutputStream out = (fromClient ? target : client).getOutputStream();
                    out.write(buffer, 0, n);
                    out.flush();
                }
            } catch (IOException | RuntimeException e) {
                // A side closed or reset: the link ends.
            }
            // A client that hung up ends its link; a target that hung up ends it unless the link is lost (whose
            // client must keep waiting on a silent connection).
            if (fromClient || !lost) {
                close();
            }
        }

        void close() {
            links.remove(this);
            closeQuietly(client);
            closeQuietly(target);
        }
    }

    private static void closeQuietly(Socket s) {
        if (s != null) {
            try {
                s.close();
            } catch (IOException ignored) {
                // Already closed.
            }
        }
    }

    @Override
    public void close() {
        try {
            server.close();
        } catch (IOException ignored) {
            // Already closed.
        }
        links.forEach(Link::close);
    }
}
