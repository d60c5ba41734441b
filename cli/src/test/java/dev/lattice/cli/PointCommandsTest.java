package dev.lattice.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** put, get, scan, delete, wal inspect and providers against one storage across separate invocations. */
class PointCommandsTest {

    @Test
    void putGetScanDeleteRoundTripOnMemory() {
        String uri = Cli.freshMemoryUri();
        roundTrip(uri);
    }

    @Test
    void putGetScanDeleteRoundTripOnChronicle(@TempDir Path dir) {
        roundTrip("chronicle:" + dir.toAbsolutePath());
    }

    private static void roundTrip(String uri) {
        assertThat(Cli.run("put", "--provider", uri, "orders", "o-2", "second").code()).isZero();
        Cli.Run put = Cli.run("put", "--provider", uri, "orders", "o-1", "first");
        assertThat(put.code()).as(put.toString()).isZero();
        assertThat(put.out()).startsWith("ok orders o-1 v");
        assertThat(Cli.run("put", "--provider", uri, "orders", "o-3", "--hex", "0x00ff").code()).isZero();

        Cli.Run get = Cli.run("get", "--provider", uri, "orders", "o-1");
        assertThat(get.code()).as(get.toString()).isZero();
        assertThat(get.out()).isEqualTo("first" + System.lineSeparator());
        assertThat(Cli.run("get", "--provider", uri, "orders", "o-3").out().strip()).isEqualTo("0x00ff");

        Cli.Run scan = Cli.run("scan", "--provider", uri, "orders");
        assertThat(scan.code()).as(scan.toString()).isZero();
        assertThat(scan.out().lines().toList()).containsExactly("o-1\tfirst", "o-2\tsecond", "o-3\t0x00ff");
        assertThat(Cli.run("scan", "--provider", uri, "orders", "--reverse", "--keys-only", "--limit", "2")
                .out().lines().toList()).containsExactly("o-3", "o-2");
        assertThat(Cli.run("scan", "--provider", uri, "orders", "--from", "o-2", "--to", "o-3", "--keys-only")
                .out().lines().toList()).containsExactly("o-2");
        assertThat(Cli.run("scan", "--provider", uri, "orders", "--prefix", "o-", "--count").out().strip())
                .isEqualTo("3");

        Cli.Run del = Cli.run("delete", "--provider", uri, "orders", "o-1");
        assertThat(del.code()).as(del.toString()).isZero();
        Cli.Run gone = Cli.run("get", "--provider", uri, "orders", "o-1");
        assertThat(gone.code()).isEqualTo(ExitCodes.NOT_FOUND);
        assertThat(gone.err()).contains("key 'o-1' not found in tree 'orders'");
        assertThat(Cli.run("delete", "--provider", uri, "orders", "o-1").code()).isEqualTo(ExitCodes.NOT_FOUND);

        Cli.Run noTree = Cli.run("get", "--provider", uri, "customers", "c-1");
        assertThat(noTree.code()).isEqualTo(ExitCodes.NOT_FOUND);
        assertThat(noTree.err()).contains("no tree 'customers'").contains("orders");
        assertThat(Cli.run("scan", "--provider", uri, "customers").code()).isEqualTo(ExitCodes.NOT_FOUND);

        Cli.Run inspect = Cli.run("wal", "inspect", "--provider", uri);
        assertThat(inspect.code()).as(inspect.toString()).isZero();
        assertThat(inspect.out()).contains("_catalog/0").contains("orders/0").contains("orders/7")
                .contains("orders (8 logs)")
                .as("each closed command flushed its memtable: partitions with data name level-0 runs").contains("L0 ");
        Cli.Run md = Cli.run("wal", "inspect", "--provider", uri, "orders", "--markdown");
        assertThat(md.out()).contains("| log |").contains("| orders/0 |").doesNotContain("_catalog");
    }

    @Test
    void enginesArgumentChecksAreUsageErrors() {
        Cli.Run r = Cli.run("put", "--provider", Cli.freshMemoryUri(), "t", "", "v");
        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err().strip()).isEqualTo("lattice: key must not be empty");
        Cli.Run big = Cli.run("put", "--provider", Cli.freshMemoryUri() + "?maxEntryBytes=2000", "t", "k",
                "x".repeat(5000));
        assertThat(big.code()).as(big.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(big.err()).contains("value");
    }

    @Test
    void walInspectOfAMissingDirectoryIsNotFound(@TempDir Path dir) {
        Cli.Run r = Cli.run("wal", "inspect", "--provider", "chronicle:" + dir.resolve("nothing-here"));
        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.NOT_FOUND);
        assertThat(r.err()).contains("no lattice data at");
    }

    @Test
    void providersListsSchemesWithLimitsAndDurability() {
        Cli.Run r = Cli.run("providers");
        assertThat(r.code()).as(r.toString()).isZero();
        assertThat(r.out()).contains("memory").contains("chronicle").contains("MEMORY").contains("PROCESS_CRASH")
                .contains("max entry").contains("entries/batch");
        Cli.Run explicit = Cli.run("providers", "--provider", Cli.freshMemoryUri() + "?maxEntriesPerBatch=7");
        assertThat(explicit.code()).as(explicit.toString()).isZero();
        assertThat(explicit.out()).contains("maxEntriesPerBatch=7").containsPattern("\\s7\\s");
    }
}
