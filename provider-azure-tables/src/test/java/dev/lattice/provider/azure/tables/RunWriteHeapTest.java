package dev.lattice.provider.azure.tables;

import com.azure.data.tables.models.TableEntity;
import com.azure.data.tables.models.TableTransactionAction;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.RunId;
import dev.lattice.spi.RunInfo;
import dev.lattice.spi.RunStore;
import dev.lattice.spi.WalStorageException;
import dev.lattice.testbackends.AzuriteExtension;
import dev.lattice.testbackends.AzuriteServer;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The transient heap of run writes is bounded by one chunk row per write, against Azurite:
 * <ul>
 *   <li>two threads writing 16 MiB runs side by side in a child JVM with {@value #CHILD_HEAP} of heap complete and
 *   read back byte-exact (with 3-row transactions, the provider before this test, the same probe needed 72 MiB and
 *   ran out of memory at 64 MiB; one insert per row completes at 20 MiB);</li>
 *   <li>every chunk row goes in its own single-entity insert, and no request body of a run write is larger than one
 *   full row's (~1.31 MB, against 3.9 MB for a 3-row transaction);</li>
 *   <li>over all writes of one provider at most {@code runChunksInFlight} chunk rows are in flight at once (five
 *   writers, two slots: two);</li>
 *   <li>an insert that the SDK retried after its first attempt landed (409 on the retry, the row there with this
 *   write's token) is success; a 409 on a row of another write is refused and the run stays unreadable.</li>
 * </ul>
 */
@ExtendWith(AzuriteExtension.class)
class RunWriteHeapTest {

    /** The child JVM's heap: below half of what 3-row transactions needed, twice what single inserts need. */
    static final String CHILD_HEAP = "-Xmx40m";

    @Test
    void twoThreadsWriting16MiBRunsFitAChildJvmOf40MiB(@TempDir Path dir) throws Exception {
        String table = AzuriteServer.uniqueTableName("runheap");
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add(CHILD_HEAP);
        cmd.add("-Dorg.slf4j.simpleLogger.defaultLogLevel=off");
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(RunWriteHeapProbe.class.getName());
        cmd.add(AzuriteServer.shared().connectionString());
        cmd.add(table);
        cmd.add("2"); // threads
        cmd.add("2"); // runs per thread
        cmd.add(String.valueOf(16 * 1024)); // KiB per run
        Path err = dir.resolve("probe.err");
        Process p = new ProcessBuilder(cmd).redirectError(err.toFile()).start();
        boolean done = p.waitFor(300, TimeUnit.SECONDS);
        if (!done) {
            p.destroyForcibly();
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        String last = out.isEmpty() ? "" : out.substring(out.lastIndexOf('\n') + 1);
        System.out.println("[run-heap] " + CHILD_HEAP + ", 2 threads x 2 runs x 16 MiB: " + last);
        assertThat(done).as("the probe finished").isTrue();
        assertThat(last).as("the probe under %s (stderr: %s)", CHILD_HEAP, tail(err)).startsWith("OK ");
        assertThat(p.exitValue()).isZero();
    }

    @Test
    void everyChunkRowIsItsOwnInsertAndNoRequestBodyExceedsOneRow() {
        String table = AzuriteServer.uniqueTableName("runreq");
        AzuriteTables.Opened opened = AzuriteTables.open(table, Layout.DEFAULT);
        try {
            LogId log = new LogId("runs", 0);
            Fence fence = opened.provider().claim(log);
            RunStore runs = opened.provider().runs();
            int chunk = TablesRunStore.runLayout(Layout.DEFAULT).rowBytes();
            byte[] data = new byte[4 * chunk + 12_345];
            new Random(7).nextBytes(data);
            opened.recording().submitted.clear();
            AzuriteTables.resetLargestBody();
            RunInfo info = runs.write(log, fence, new RunId("five-rows"), new ByteArrayInputStream(data),
                    data.length);
            long largest = AzuriteTables.largestBody();
            List<List<TableTransactionAction>> writes = new ArrayList<>();
            for (List<TableTransactionAction> w : opened.recording().submitted) {
                if (w.get(0).getEntity().getPartitionKey().startsWith("R|")) {
                    writes.add(w);
                }
            }
            assertThat(info.lengthBytes()).isEqualTo(data.length);
            assertThat(opened.recording().inserts.get()).as("one insert per chunk row").isEqualTo(5);
            assertThat(writes).as("5 chunk inserts and the commit, one entity each").hasSize(6)
                    .allSatisfy(w -> assertThat(w).hasSize(1));
            assertThat(writes.get(5).get(0).getEntity().getRowKey()).isEqualTo(TablesRunStore.COMMIT_ROW);
            long oneRow = AzureTableLimits.actionRequestBytes(TablesRunStore.runPartition(log, new RunId("five-rows")),
                    Keys.checkpointRow(0), writes.get(0).get(0).getEntity().getProperties());
            System.out.println("[run-heap] largest request body of a run write: " + largest
                    + " bytes; the provider's estimate of one full row: " + oneRow);
            assertThat(largest).as("the largest request body: one full row, not three")
                    .isGreaterThan(chunk).isLessThanOrEqualTo(oneRow);
            byte[] back = new byte[data.length];
            int n = 0;
            while (n < back.length) {
                n += runs.read(log, new RunId("five-rows"), n, back, n, back.length - n);
            }
            assertThat(back).isEqualTo(data);
        } finally {
            opened.provider().close();
            AzuriteTables.drop(table);
        }
    }

    @Test
    void anInsertRetriedAfterItLandedIsSuccessAndAForeignRowIsRefused() {
        String table = AzuriteServer.uniqueTableName("runretry");
        AtomicInteger chunkInserts = new AtomicInteger();
        AtomicInteger mode = new AtomicInteger(); // 0: pass, 1: send the 3rd insert twice, 2: foreign row first
        TableGateway sdk = new SdkTableGateway(AzuriteTables.client(), table);
        TableGateway retrying = new TableGateway() {
            @Override
            public TableEntity get(String partitionKey, String rowKey) {
                return sdk.get(partitionKey, rowKey);
            }

            @Override
            public void submit(List<TableTransactionAction> actions) {
                sdk.submit(actions);
            }

            @Override
            public void insert(TableEntity entity) {
                if (chunkInserts.getAndIncrement() == 2) {
                    if (mode.get() == 1) {
                        sdk.insert(entity); // the first attempt lands, its response is lost; the SDK retries:
                    } else if (mode.get() == 2) {
                        TableEntity foreign = new TableEntity(entity.getPartitionKey(), entity.getRowKey());
                        entity.getProperties().forEach((k, v) -> {
                            if (!AzureTableLimits.isSystemProperty(k)) {
                                foreign.addProperty(k, v);
                            }
                        });
                        sdk.insert(foreign.addProperty("T", "another write's token"));
                    }
                }
                sdk.insert(entity);
            }

            @Override
            public QueryPage query(String filter, List<String> select, int top, String continuationToken) {
                return sdk.query(filter, select, top, continuationToken);
            }

            @Override
            public void createTableIfNotExists() {
                sdk.createTableIfNotExists();
            }
        };
        Layout small = new Layout(1000, 2);
        try (AzureTablesWalStorageProvider wal = new AzureTablesWalStorageProvider(
                new ServiceLimitCheckingGateway(retrying), table, small, true)) {
            LogId log = new LogId("runs", 0);
            Fence fence = wal.claim(log);
            byte[] data = new byte[5 * small.rowBytes() + 17];
            new Random(3).nextBytes(data);

            mode.set(1);
            chunkInserts.set(0);
            RunInfo info = wal.runs().write(log, fence, new RunId("retried"), new ByteArrayInputStream(data),
                    data.length);
            assertThat(chunkInserts.get()).as("the write got past the retried insert").isEqualTo(6);
            byte[] back = new byte[data.length];
            int n = 0;
            while (n < back.length) {
                n += wal.runs().read(log, new RunId("retried"), n, back, n, back.length - n);
            }
            assertThat(back).isEqualTo(data);
            assertThat(info.lengthBytes()).isEqualTo(data.length);

            mode.set(2);
            chunkInserts.set(0);
            assertThatThrownBy(() -> wal.runs().write(log, fence, new RunId("foreign"),
                    new ByteArrayInputStream(data), data.length))
                    .as("a 409 on another write's row").isInstanceOf(WalStorageException.class)
                    .hasMessageContaining("EntityAlreadyExists");
            assertThatThrownBy(() -> wal.runs().read(log, new RunId("foreign"), 0, new byte[1], 0, 1))
                    .isInstanceOf(dev.lattice.spi.RunNotFoundException.class);
            assertThat(wal.runs().list(log)).filteredOn(r -> r.id().value().equals("foreign"))
                    .allSatisfy(r -> assertThat(r.complete()).isFalse());
        } finally {
            AzuriteTables.drop(table);
        }
    }

    @Test
    void chunkRowsInFlightAreBoundedOverAllWritesOfTheProvider() throws Exception {
        String table = AzuriteServer.uniqueTableName("runslots");
        TableGateway sdk = new SdkTableGateway(AzuriteTables.client(), table);
        AtomicInteger inFlight = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        TableGateway counting = new TableGateway() {
            @Override
            public TableEntity get(String partitionKey, String rowKey) {
                return sdk.get(partitionKey, rowKey);
            }

            @Override
            public void submit(List<TableTransactionAction> actions) {
                sdk.submit(actions);
            }

            @Override
            public void insert(TableEntity entity) {
                most.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
                try {
                    Thread.sleep(3); // keep the insert in flight long enough for the writers to overlap
                    sdk.insert(entity);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                } finally {
                    inFlight.decrementAndGet();
                }
            }

            @Override
            public QueryPage query(String filter, List<String> select, int top, String continuationToken) {
                return sdk.query(filter, select, top, continuationToken);
            }

            @Override
            public void createTableIfNotExists() {
                sdk.createTableIfNotExists();
            }
        };
        Layout small = new Layout(1000, 2);
        int slots = 2;
        int writers = 5;
        try (AzureTablesWalStorageProvider wal = new AzureTablesWalStorageProvider(
                new ServiceLimitCheckingGateway(counting), table, small, true, slots)) {
            byte[] data = new byte[30 * small.rowBytes()];
            new Random(11).nextBytes(data);
            List<Fence> fences = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                fences.add(wal.claim(new LogId("slots", w)));
            }
            List<Thread> threads = new ArrayList<>();
            List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
            for (int w = 0; w < writers; w++) {
                int writer = w;
                Thread t = new Thread(() -> {
                    try {
                        wal.runs().write(new LogId("slots", writer), fences.get(writer), new RunId("r"),
                                new ByteArrayInputStream(data), data.length);
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                });
                threads.add(t);
                t.start();
            }
            for (Thread t : threads) {
                t.join();
            }
            assertThat(failures).isEmpty();
            assertThat(most.get()).as("chunk inserts in flight at once, %d writers, %d slots", writers, slots)
                    .isEqualTo(slots);
            for (int w = 0; w < writers; w++) {
                byte[] back = new byte[data.length];
                int n = 0;
                while (n < back.length) {
                    n += wal.runs().read(new LogId("slots", w), new RunId("r"), n, back, n, back.length - n);
                }
                assertThat(back).isEqualTo(data);
            }
        } finally {
            AzuriteTables.drop(table);
        }
        assertThatThrownBy(() -> new AzureTablesWalStorageProvider(sdk, table, small, false, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("runChunksInFlight");
    }

    private static String tail(Path file) {
        try {
            String s = Files.readString(file);
            return s.length() > 4000 ? s.substring(s.length() - 4000) : s;
        } catch (java.io.IOException e) {
            return "(unreadable: " + e + ")";
        }
    }
}
