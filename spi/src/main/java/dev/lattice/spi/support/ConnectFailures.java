package dev.lattice.spi.support;

import dev.lattice.spi.ProviderUnavailableException;

import java.util.Objects;

/**
 * For providers whose open reaches a server: tells a failure to connect (refused, unknown host, no route, a connect or
 * socket timeout anywhere in the cause chain) from other failures, and words it as "could not connect to WHAT (tried
 * for N ms...): cause" instead of a generic "outcome unknown". Stateless and thread-safe.
 */
public final class ConnectFailures {

    private ConnectFailures() {
    }

    /**
     * Whether the cause chain holds a network failure to reach the server.
     *
     * @param t the failure (may be null)
     * @return true for {@link java.net.ConnectException}, {@link java.net.UnknownHostException},
     *     {@link java.net.NoRouteToHostException}, {@link java.net.SocketTimeoutException} or
     *     {@link java.net.http.HttpTimeoutException} in the chain
     */
    public static boolean isUnreachable(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof java.net.ConnectException || c instanceof java.net.UnknownHostException
                    || c instanceof java.net.NoRouteToHostException || c instanceof java.net.SocketTimeoutException
                    || c instanceof java.net.http.HttpTimeoutException) {
                return true;
            }
        }
        return false;
    }

    /**
     * The exception for an open that could not connect.
     *
     * @param what the server and resource, never a secret (e.g. {@code DynamoDB at http://127.0.0.1:8000 (table t)})
     * @param elapsedMillis how long the open tried, in milliseconds
     * @param bounds the bounds that applied (e.g. {@code "3 attempts, apiCallTimeout 30000 ms"}), or null
     * @param cause the failure
     * @return a {@link ProviderUnavailableException} (no log) whose message names all of them and the root cause
     * @throws NullPointerException if {@code what} or {@code cause} is null
     */
    public static ProviderUnavailableException couldNotConnect(String what, long elapsedMillis, String bounds,
                                                               Throwable cause) {
        Objects.requireNonNull(what, "what");
        Objects.requireNonNull(cause, "cause");
        Throwable root = cause;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return new ProviderUnavailableException(null, "could not connect to " + what + " (tried for " + elapsedMillis
                + " ms" + (bounds == null || bounds.isEmpty() ? "" : ", " + bounds) + "): "
                + root.getClass().getSimpleName() + ": " + root.getMessage(), cause);
    }
}
