package dev.lattice.spring;

import dev.lattice.engine.LatticeConfig;
import dev.lattice.engine.PlacementPolicy;

import java.util.Map;
import java.util.function.Consumer;

/**
 * Turns {@link LatticeProperties} into a {@link LatticeConfig.Builder}: every property that is set is passed to the
 * builder method of the same name, every unset one keeps the engine's default. Stateless and thread-safe.
 */
final class LatticeConfigMapper {

    private LatticeConfigMapper() {
    }

    /**
     * @param p the bound properties
     * @return a builder with the URI, options, named providers, placement and engine settings applied
     * @throws IllegalStateException if {@code lattice.uri} or a named provider's URI is missing
     * @throws IllegalArgumentException if a value is out of the engine's range (the message names the setting)
     */
    static LatticeConfig.Builder toBuilder(LatticeProperties p) {
        if (p.getUri() == null || p.getUri().isBlank()) {
            throw new IllegalStateException("lattice.uri is not set: give the provider URI, e.g. "
                    + "lattice.uri=chronicle:./lattice-data (with lattice-provider-local-chronicle on the classpath) "
                    + "or lattice.uri=memory:app; or set lattice.enabled=false");
        }
        LatticeConfig.Builder b = LatticeConfig.builder().uri(p.getUri()).providerOptions(p.getProviderOptions());
        for (Map.Entry<String, LatticeProperties.NamedProvider> e : p.getProviders().entrySet()) {
            String uri = e.getValue().getUri();
            if (uri == null || uri.isBlank()) {
                throw new IllegalStateException("lattice.providers." + e.getKey() + ".uri is not set");
            }
            b.namedProvider(e.getKey(), uri, e.getValue().getOptions());
        }
        if (!p.getPlacementRoundRobin().isEmpty()) {
            b.placement(PlacementPolicy.roundRobin(p.getPlacementRoundRobin().toArray(String[]::new)));
        }
        set(p.getPartitions(), b::partitions);
        set(p.getMaxPendingBatches(), b::maxPendingBatches);
        set(p.getCoalescingThreshold(), b::coalescingThreshold);
        set(p.getMaxBatchEntries(), b::maxBatchEntries);
        set(p.getMaxBatchBytes(), b::maxBatchBytes);
        set(p.getMaxQueuedEntriesPerLog(), b::maxQueuedEntriesPerLog);
        set(p.getMaxQueuedBytesPerLog(), b::maxQueuedBytesPerLog);
        set(p.getAdmissionTimeout(), b::admissionTimeout);
        set(p.getMaxRetries(), b::maxRetries);
        set(p.getRetryBackoff(), b::retryBackoff);
        set(p.getCheckpointEveryEntries(), b::checkpointEveryEntries);
        set(p.getCheckpointEveryBytes(), b::checkpointEveryBytes);
        set(p.getCheckpointReplayBudget(), b::checkpointReplayBudget);
        set(p.getReplayParallelism(), b::replayParallelism);
        set(p.getCloseTimeout(), b::closeTimeout);
        set(p.getProviderCallTimeout(), b::providerCallTimeout);
        set(p.getOwnershipCheckInterval(), b::ownershipCheckInterval);
        set(p.getMemoryBudgetBytes(), b::memoryBudgetBytes);
        set(p.getMaxKeyBytes(), b::maxKeyBytes);
        set(p.getMaxAtomicKeys(), b::maxAtomicKeys);
        set(p.getAtomicRetention(), b::atomicRetention);
        set(p.getMetrics().getName(), b::metricsName);
        b.meterPartitionTag(p.getMetrics().isPartitionTag());
        return b;
    }

    private static <T> void set(T value, Consumer<T> setter) {
        if (value != null) {
            setter.accept(value);
        }
    }

}
