package dev.lattice.spi;

import dev.lattice.spi.support.ProviderOptions;
import dev.lattice.spi.memory.InMemoryStorage;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SpiTypesTest {

    @Test
    void logIdRules() {
        assertThat(new LogId("orders", 7).key()).isEqualTo("orders.0007");
        assertThat(new LogId("_catalog", 0).tree()).isEqualTo("_catalog");
        assertThatThrownBy(() -> new LogId(null, 0)).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> new LogId("", 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new LogId("a b", 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must match");
        assertThatThrownBy(() -> new LogId("x".repeat(LogId.MAX_TREE_NAME_LENGTH + 1), 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("64");
        assertThatThrownBy(() -> new LogId("t", -1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new LogId("t", LogId.MAX_PARTITION + 1)).isInstanceOf(IllegalArgumentException.class);
        assertThat(new LogId("a", 2)).isLessThan(new LogId("a", 10)).isLessThan(new LogId("b", 0));
    }

    @Test
    void batchIdRoundTrips() {
        BatchId id = BatchId.random();
        assertThat(BatchId.fromBytes(id.toBytes())).isEqualTo(id);
        assertThat(BatchId.parse(id.toString())).isEqualTo(id);
        assertThat(id.toString()).hasSize(32);
        assertThat(new BatchId(-1, 1).toString()).isEqualTo("ffffffffffffffff0000000000000001");
        assertThatThrownBy(() -> BatchId.parse("xyz")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> BatchId.fromBytes(new byte[3])).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void encodedBatchShape() {
        EncodedBatch b = EncodedBatch.of(5, List.of(new byte[3], new byte[0], new byte[4]));
        assertThat(b.lastOffset()).isEqualTo(7);
        assertThat(b.payloadBytes()).isEqualTo(7);
        assertThat(b.entryAt(7)).hasSize(4);
        assertThatThrownBy(() -> b.entryAt(8)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> EncodedBatch.of(0, List.of())).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> EncodedBatch.of(-1, List.of(new byte[1]))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> EncodedBatch.of(Long.MAX_VALUE, List.of(new byte[1])))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void limitsCheckNamesTheLimit() {
        ProviderLimits limits = new ProviderLimits(10, 20, 3, 100);
        LogId log = new LogId("t", 0);
        limits.check(log, EncodedBatch.of(0, List.of(new byte[10], new byte[10])));
        assertThatThrownBy(() -> limits.check(log, EncodedBatch.of(0, List.of(new byte[11]))))
                .isInstanceOf(EntryTooLargeException.class).hasMessageContaining("11 bytes").hasMessageContaining("10");
        assertThatThrownBy(() -> limits.check(log, EncodedBatch.of(0, List.of(new byte[10], new byte[10], new byte[1]))))
                .isInstanceOf(BatchTooLargeException.class).hasMessageContaining("21").hasMessageContaining("20");
        assertThatThrownBy(() -> limits.check(log, EncodedBatch.of(0, List.of(new byte[1], new byte[1], new byte[1],
                new byte[1])))).isInstanceOf(BatchTooLargeException.class).hasMessageContaining("3 entries");
        assertThatThrownBy(() -> new ProviderLimits(10, 5, 1, 1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void providersFindFactoriesAndNameTheKnownSchemesOnAMiss() {
        assertThat(Providers.schemes()).contains("memory");
        try (WalStorageProvider p = Providers.open("memory:spi-types-test?maxEntryBytes=100")) {
            assertThat(p.describe().limits().maxEntryBytes()).isEqualTo(100);
        } finally {
            InMemoryStorage.dropNamed("spi-types-test");
        }
        assertThatThrownBy(() -> Providers.open("nosuch:x")).isInstanceOf(UnknownSchemeException.class)
                .hasMessageContaining("nosuch").hasMessageContaining("memory");
        assertThatThrownBy(() -> Providers.open("no-scheme-here")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no scheme");
        assertThatThrownBy(() -> Providers.open("memory:x?bogus=1")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("bogus").hasMessageContaining("maxEntryBytes");
    }

    @Test
    void optionsParseTypedValuesWithClearErrors() {
        ProviderOptions o = ProviderOptions.of(URI.create("x://h/db?a=1&d=5s&b=TRUE&e=fsync&s=a%20b"),
                Map.of("a", "2"));
        assertThat(o.getLong("a", 0, 0, 10)).as("explicit map wins over the query").isEqualTo(2);
        assertThat(o.getDuration("d", Duration.ZERO)).isEqualTo(Duration.ofSeconds(5));
        assertThat(o.getBoolean("b", false)).isTrue();
        assertThat(o.getDouble("a", 0, 0, 10)).isEqualTo(2.0);
        assertThatThrownBy(() -> o.getDouble("s", 0, 0, 10)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("number");
        assertThat(o.get("s")).isEqualTo("a b");
        assertThat(o.getEnum("absent", DurabilityLevel.class, DurabilityLevel.MEMORY)).isEqualTo(DurabilityLevel.MEMORY);
        assertThatThrownBy(() -> o.getLong("a", 0, 5, 10)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("5..10");
        assertThatThrownBy(() -> o.getEnum("e", DurabilityLevel.class, null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("fsync");
        assertThatThrownBy(() -> o.require("missing")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("missing");
        assertThatThrownBy(() -> o.requireKnown(Set.of("a"))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("[b, d, e, s]");
        assertThat(ProviderOptions.of("x", Map.of("secret", "hunter2")).toString()).doesNotContain("hunter2");
        assertThat(ProviderOptions.of(URI.create("chronicle:./d?durability=fsync"), Map.of()).get("durability"))
                .isEqualTo("fsync");
    }

    @Test
    void replayCostModelEstimates() {
        ReplayCostModel m = new ReplayCostModel(5.7, 80);
        assertThat(m.estimateMillis(100, 1024 * 1024)).isEqualTo(570 + 80, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(ReplayCostModel.UNKNOWN.isUnknown()).isTrue();
        assertThatThrownBy(() -> new ReplayCostModel(-1, 0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void providerUrisReadNameAndEndpoint() {
        assertThat(ProviderUris.resourceName(URI.create("azure-tables:lattice?x=1"))).isEqualTo("lattice");
        assertThat(ProviderUris.resourceName(URI.create("azure-tables:///lattice"))).isEqualTo("lattice");
        assertThat(ProviderUris.resourceName(URI.create("azure-tables://h:10002/acct/lattice/"))).isEqualTo("lattice");
        assertThat(ProviderUris.resourceName(URI.create("azure-tables://h/"))).isNull();
        assertThat(ProviderUris.httpsEndpoint(URI.create("azure-tables://h:10002/acct/lattice")))
                .isEqualTo("https://h:10002/acct");
        assertThat(ProviderUris.httpsEndpoint(URI.create("azure-tables://acct.table.core.windows.net/lattice")))
                .isEqualTo("https://acct.table.core.windows.net");
        assertThat(ProviderUris.httpsEndpoint(URI.create("azure-tables:lattice"))).isNull();
    }
}
