package dev.lattice.engine;

import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderUnavailableException;

import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * The provider calls of one log's replay, each under the {@link CallWatchdog}: a call still running at its deadline
 * fails the open of that log at once with {@link ProviderUnavailableException} (the replay thread finds out when
 * the call returns, and drops what it built). Used by one replay thread.
 */
final class ReplayCalls {

    private final CallWatchdog watchdog;
    private final LogId log;
    private final CompletableFuture<?> outcome;

    /**
     * @param watchdog the lattice's watchdog
     * @param log the log being replayed
     * @param outcome the open's future for this log, failed when a call is overdue
     */
    ReplayCalls(CallWatchdog watchdog, LogId log, CompletableFuture<?> outcome) {
        this.watchdog = watchdog;
        this.log = log;
        this.outcome = outcome;
    }

    /**
     * Runs a call under the watchdog.
     *
     * @param op the call's name, for the message
     * @param call the call
     * @return its result
     */
    <T> T call(String op, Supplier<T> call) {
        CallWatchdog.Watch w = watchdog.watch(op, log, watch -> outcome.completeExceptionally(
                new ProviderUnavailableException(log, "opening the tree: " + watch.what() + " did not return within "
                        + watchdog.timeoutMillis() + " ms (LatticeConfig providerCallTimeout)", null)));
        try {
            return call.get();
        } finally {
            w.close();
        }
    }
}
