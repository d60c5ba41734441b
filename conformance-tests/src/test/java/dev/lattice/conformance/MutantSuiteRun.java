package dev.lattice.conformance;

import dev.lattice.spi.ProviderLimits;
import dev.lattice.spi.WalStorageProvider;
import dev.lattice.spi.memory.InMemoryStorage;
import dev.lattice.spi.memory.InMemoryWalStorageProvider;

import java.util.Optional;
import java.util.function.Function;

/**
 * The conformance suite over the in-memory provider wrapped in a deliberately broken decorator (a "mutant").
 * Not run by Surefire directly (its name does not end in {@code Test}); {@link SuiteDetectsBrokenProvidersTest}
 * launches it once per mutant and checks that the suite fails where it should.
 */
public class MutantSuiteRun extends WalStorageProviderConformanceTest {

    /** The mutation to apply to every provider instance; set by the launching test before each run. */
    static volatile Function<WalStorageProvider, WalStorageProvider> mutation = Function.identity();
    /** The service limits to hold the provider to, or null for none; set by the launching test. */
    static volatile ProviderLimits service;

    @Override
    protected Optional<ProviderLimits> serviceLimits() {
        return Optional.ofNullable(service);
    }

    @Override
    protected ProviderUnderTest newStorage() {
        InMemoryStorage storage = new InMemoryStorage();
        Function<WalStorageProvider, WalStorageProvider> m = mutation;
        return new ProviderUnderTest() {
            @Override
            public WalStorageProvider open() {
                return m.apply(new InMemoryWalStorageProvider(storage));
            }

            @Override
            public void close() {
                // nothing to delete
            }
        };
    }
}
