package dev.lattice.testkit;

import dev.lattice.spi.BatchId;
import dev.lattice.spi.BatchTooLargeException;
import dev.lattice.spi.CheckpointTooLargeException;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.EntryTooLargeException;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderDescriptor;
import dev.lattice.spi.ProviderLimits;
import dev.lattice.spi.WalStorageProvider;
import dev.lattice.spi.memory.InMemoryStorage;
import dev.lattice.spi.memory.InMemoryWalStorageProvider;
import org.junit.jupiter.api.Test;

import java.util.List;

import static dev.lattice.testkit.TestData.batch;
import static dev.lattice.testkit.TestData.randomStream;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The limit-enforcing decorator refuses what the real service would, and tells a lenient provider apart. */
class LimitEnforcingProviderTest {

    private static final ProviderLimits SERVICE = LimitEnforcingProvider.serviceLimits()
            .maxEntryBytes(1000).maxBatchBytes(4000).maxEntriesPerBatch(10).maxCheckpointBytes(5000).build();
    private final LogId log = new LogId("t", 0);

    @Test
    void declaredLimitsAreComparedWithTheService() {
        LimitEnforcingProvider.assertWithin(new ProviderLimits(1000, 4000, 10, 5000), SERVICE);
        assertThatThrownBy(() -> LimitEnforcingProvider.assertWithin(InMemoryWalStorageProvider.DEFAULT_LIMITS,
                SERVICE)).isInstanceOf(ServiceLimitExceededError.class)
                .hasMessageContaining("maxEntryBytes 1048576 > service's 1000")
                .hasMessageContaining("maxEntriesPerBatch 100000 > service's 10")
                .hasMessageContaining("maxCheckpointBytes");
        LimitEnforcingProvider p = new LimitEnforcingProvider(InMemoryWalStorageProvider.fresh(), SERVICE);
        assertThatThrownBy(p::checkDeclaredLimits).isInstanceOf(ServiceLimitExceededError.class);
        assertThat(p.enforcedLimits()).isEqualTo(SERVICE);
        assertThat(LimitEnforcingProvider.serviceLimits().build().maxEntryBytes()).isEqualTo(Integer.MAX_VALUE);
    }

    @Test
    void callsWithinTheServiceLimitsPassThrough() {
        LimitEnforcingProvider p = new LimitEnforcingProvider(InMemoryWalStorageProvider.fresh(), SERVICE);
        Fence f = p.claim(log);
        EncodedBatch full = EncodedBatch.of(0, BatchId.random(), List.of(new byte[1000], new byte[1000],
                new byte[1000], new byte[1000]));
        p.append(log, f, full);
        p.append(log, f, batch(1, 4, 10, 1));
        p.checkpoints().publish(log, f, 13, 0, randomStream(1, 5000));
        assertThat(p.state(log).committedTail()).isEqualTo(13);
        assertThat(p.describe()).isEqualTo(p.delegate().describe());
    }

    @Test
    void aCallTheProviderWouldWronglyAcceptFailsBeforeReachingIt() {
        InMemoryWalStorageProvider lenient = InMemoryWalStorageProvider.fresh(); // declares 1 MiB entries
        LimitEnforcingProvider p = new LimitEnforcingProvider(lenient, SERVICE);
        Fence f = p.claim(log);
        assertThatThrownBy(() -> p.append(log, f, EncodedBatch.of(0, BatchId.random(), List.of(new byte[1001]))))
                .isInstanceOf(ServiceLimitExceededError.class).hasMessageContaining("1000");
        assertThatThrownBy(() -> p.append(log, f, batch(1, 0, 11, 1)))
                .isInstanceOf(ServiceLimitExceededError.class).hasMessageContaining("10 entries");
        assertThatThrownBy(() -> p.append(log, f, batch(1, 0, 5, 900)))
                .isInstanceOf(ServiceLimitExceededError.class).hasMessageContaining("4000");
        assertThatThrownBy(() -> p.checkpoints().publish(log, f, -1, 0, randomStream(1, 5001)))
                .isInstanceOf(ServiceLimitExceededError.class).hasMessageContaining("5000");
        assertThat(lenient.state(log).committedTail()).isEqualTo(-1);
        assertThat(lenient.checkpoints().latest(log)).isEmpty();
    }

    @Test
    void aProviderThatDeclaresTheServiceLimitsRejectsByItself() {
        InMemoryWalStorageProvider strict = new InMemoryWalStorageProvider(new InMemoryStorage(), SERVICE);
        LimitEnforcingProvider p = new LimitEnforcingProvider(strict, SERVICE);
        p.checkDeclaredLimits();
        Fence f = p.claim(log);
        assertThatThrownBy(() -> p.append(log, f, EncodedBatch.of(0, BatchId.random(), List.of(new byte[1001]))))
                .isInstanceOf(EntryTooLargeException.class);
        assertThatThrownBy(() -> p.append(log, f, batch(1, 0, 11, 1))).isInstanceOf(BatchTooLargeException.class);
        assertThatThrownBy(() -> p.checkpoints().publish(log, f, -1, 0, randomStream(1, 5001)))
                .isInstanceOf(CheckpointTooLargeException.class);
    }

    @Test
    void aProviderThatAcceptsMoreThanItDeclaresIsCaught() {
        // Declares the service's limits but enforces the in-memory defaults: it would rely on the backend.
        WalStorageProvider liar = new ForwardingProvider(InMemoryWalStorageProvider.fresh()) {
            @Override
            public ProviderDescriptor describe() {
                ProviderDescriptor d = super.describe();
                return new ProviderDescriptor(d.name(), d.version(), SERVICE, d.durability(), d.features());
            }
        };
        LimitEnforcingProvider p = new LimitEnforcingProvider(liar, SERVICE);
        Fence f = p.claim(log);
        assertThatThrownBy(() -> p.stage(log, f, EncodedBatch.of(0, BatchId.random(), List.of(new byte[1001]))))
                .isInstanceOf(ServiceLimitExceededError.class).hasMessageContaining("breaks its own declared limits");
        assertThatThrownBy(() -> p.checkpoints().publish(log, f, -1, 0, randomStream(1, 5001)))
                .isInstanceOf(ServiceLimitExceededError.class).hasMessageContaining("5001 bytes");
    }

    @Test
    void clampingReportsTheTighterLimits() {
        LimitEnforcingProvider p = LimitEnforcingProvider.clamping(InMemoryWalStorageProvider.fresh(), SERVICE);
        assertThat(p.describe().limits()).isEqualTo(SERVICE);
        assertThat(p.describe().name()).isEqualTo("memory");
        ProviderLimits loose = LimitEnforcingProvider.serviceLimits().maxEntryBytes(5 << 20).build();
        assertThat(LimitEnforcingProvider.clamping(InMemoryWalStorageProvider.fresh(), loose).describe().limits())
                .isEqualTo(InMemoryWalStorageProvider.DEFAULT_LIMITS);
    }
}
