package dev.lattice.conformance;

import dev.lattice.testkit.LimitEnforcingProvider;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderLimits;
import dev.lattice.spi.ReconcileResult;
import dev.lattice.spi.WalStorageProvider;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The storage and provider instances of one conformance test: opens a fresh storage before the test, opens, reopens
 * and tracks provider instances over it, and closes everything after the test. Every contract group of the suite
 * ({@code *Contract}) works through one fixture, which {@link WalStorageProviderConformanceTest} owns and hands to
 * each of its {@code @Nested} groups.
 *
 * <p>When the test's {@code serviceLimits()} are present, every instance opened is wrapped in a
 * {@link LimitEnforcingProvider} with them.
 *
 * <p>Not thread-safe: {@link #open()}, {@link #reopen()} and {@link #close()} run on the test's thread; the provider
 * instances themselves may be used from several threads between those calls.
 */
public final class ConformanceFixture {

    /** Creates the storage of one test; {@link WalStorageProviderConformanceTest#newStorage()} in the suite. */
    @FunctionalInterface
    public interface StorageFactory {
        /**
         * Creates a fresh, empty, isolated storage.
         *
         * @return the storage, never null
         * @throws Exception when it cannot be created (the test fails)
         */
        ProviderUnderTest newStorage() throws Exception;
    }

    /** A check that may throw; run twice by {@link #assertDurable}. */
    @FunctionalInterface
    public interface Check {
        /**
         * Runs the check against the fixture's current {@link #provider()}.
         *
         * @throws Exception when the check fails or the provider throws
         */
        void run() throws Exception;
    }

    private final StorageFactory factory;
    private final Supplier<Optional<ProviderLimits>> serviceLimits;
    private final List<WalStorageProvider> opened = new ArrayList<>();
    private ProviderUnderTest storage;
    private WalStorageProvider provider;

    /**
     * A fixture that has not opened anything yet.
     *
     * @param factory creates the storage in {@link #open()}
     * @param serviceLimits the real service's limits, asked each time an instance is opened; empty for none
     * @throws NullPointerException if an argument is null
     */
    public ConformanceFixture(StorageFactory factory, Supplier<Optional<ProviderLimits>> serviceLimits) {
        this.factory = Objects.requireNonNull(factory, "factory");
        this.serviceLimits = Objects.requireNonNull(serviceLimits, "serviceLimits");
    }

    /**
     * Creates the test's storage and opens the first provider instance over it. Called before each test.
     *
     * @throws Exception when the storage or the instance cannot be created
     * @throws AssertionError when the storage or the opened instance is null
     */
    public void open() throws Exception {
        storage = factory.newStorage();
        assertThat(storage).as("newStorage() must return a storage, returned null").isNotNull();
        provider = track(storage.open());
    }

    /**
     * Closes every instance opened for the test (each once, in opening order), then the storage. Called after each
     * test; a failure of one close does not stop the others.
     *
     * @throws Exception the last failure of an instance's close, or the storage's close failure
     */
    public void close() throws Exception {
        Exception failure = null;
        for (WalStorageProvider p : opened) {
            try {
                p.close();
            } catch (Exception e) {
                failure = e;
            }
        }
        opened.clear();
        if (storage != null) {
            storage.close();
        }
        if (failure != null) {
            throw failure;
        }
    }

    private WalStorageProvider track(WalStorageProvider p) {
        assertThat(p).as("ProviderUnderTest.open() must return a provider, returned null").isNotNull();
        Optional<ProviderLimits> service = serviceLimits();
        WalStorageProvider wrapped = service.isPresent() ? new LimitEnforcingProvider(p, service.get()) : p;
        opened.add(wrapped);
        return wrapped;
    }

    /** @return the provider instance the test currently uses; replaced by {@link #reopen()} */
    public WalStorageProvider provider() {
        return provider;
    }

    /** @return the storage of the running test */
    public ProviderUnderTest storage() {
        return storage;
    }

    /** @return the real service's limits the instances are held to; empty when none */
    public Optional<ProviderLimits> serviceLimits() {
        return serviceLimits.get();
    }

    /** @return the limits the current provider instance declares */
    public ProviderLimits limits() {
        return provider.describe().limits();
    }

    /**
     * Closes the current instance and opens a new one over the same storage, which becomes {@link #provider()}.
     *
     * @return the new instance
     * @throws Exception when opening fails
     */
    public WalStorageProvider reopen() throws Exception {
        provider.close();
        provider = track(storage.open());
        return provider;
    }

    /**
     * Reopens the provider and runs the engine's recovery on a log: {@code claim}, then {@code reconcile}.
     *
     * @param log the log
     * @return the new writer's fence
     * @throws Exception when opening fails
     */
    public Fence reopenAndRecover(LogId log) throws Exception {
        reopen();
        return claimAndReconcile(provider, log);
    }

    /**
     * Opens another instance over the same storage while {@link #provider()} stays open (two processes on one
     * backend); closed after the test.
     *
     * @return the second instance
     * @throws Exception when opening fails
     * @throws IllegalStateException when the storage does not support concurrent instances
     */
    public WalStorageProvider openSecondInstance() throws Exception {
        if (!storage.supportsConcurrentInstances()) {
            throw new IllegalStateException("the provider under test does not support concurrent instances");
        }
        return track(storage.open());
    }

    /**
     * Asserts that a check holds now, and still holds after reopen + claim + reconcile of {@code log}: durability
     * of whatever the check looks at. A failure of the second run says so in its message.
     *
     * @param log the log to recover after reopening
     * @param check the check, run against {@link #provider()} both times
     * @return the fence of the writer that recovered the log
     * @throws Exception what the check or the reopen throws; an {@link AssertionError} after reopen is prefixed with
     *         "after reopen + claim + reconcile"
     */
    public Fence assertDurable(LogId log, Check check) throws Exception {
        check.run();
        Fence f = reopenAndRecover(log);
        runAfter("after reopen + claim + reconcile of " + log, check);
        return f;
    }

    /**
     * Asserts that a check holds now, and still holds after a plain reopen (no claim, no reconcile): what a reader
     * sees on a restarted process before any writer recovered the log.
     *
     * @param check the check, run against {@link #provider()} both times
     * @throws Exception what the check or the reopen throws; an {@link AssertionError} after reopen is prefixed with
     *         "after reopen"
     */
    public void assertDurableAcrossReopen(Check check) throws Exception {
        check.run();
        reopen();
        runAfter("after reopen (no claim)", check);
    }

    private static void runAfter(String when, Check check) throws Exception {
        try {
            check.run();
        } catch (AssertionError e) {
            throw new AssertionError(when + ": " + e.getMessage(), e);
        }
    }

    /**
     * The engine's recovery step: claim the log, then reconcile it; checks that reconcile reports the state's tail.
     *
     * @param p the provider
     * @param log the log
     * @return the fence
     */
    public static Fence claimAndReconcile(WalStorageProvider p, LogId log) {
        Fence f = p.claim(log);
        ReconcileResult r = p.reconcile(log, f);
        assertThat(r.committedTail()).as("reconcile(%s) must report the committed tail that state() reports", log)
                .isEqualTo(p.state(log).committedTail());
        return f;
    }
}
