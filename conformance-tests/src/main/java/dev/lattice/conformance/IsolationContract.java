package dev.lattice.conformance;

import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static dev.lattice.conformance.WalTestSupport.batch;
import static dev.lattice.conformance.WalTestSupport.entriesOf;
import static org.assertj.core.api.Assertions.assertThat;

/** Logs of different trees and partitions are independent; logs() and trees() list what exists. */
public abstract class IsolationContract extends ConformanceContract {

    /**
     * The group, working through the running test's fixture.
     *
     * @param fixture the fixture
     */
    protected IsolationContract(ConformanceFixture fixture) {
        super(fixture);
    }

    /** Writes, trims, claims and checkpoints on one log leave every other log unchanged. */
    @Test
    void logsAreIndependent() throws Exception {
        List<LogId> logs = List.of(new LogId("iso", 0), new LogId("iso", 1), new LogId("iso.1", 0),
                new LogId("iso-1", 0), new LogId("iso_1", 0), new LogId("Iso", 0), new LogId("iso", 4095));
        List<List<LogEntry>> contents = new ArrayList<>();
        List<Fence> fences = new ArrayList<>();
        for (int i = 0; i < logs.size(); i++) {
            LogId log = logs.get(i);
            Fence f = claimAndReconcile(provider(), log);
            fences.add(f);
            List<EncodedBatch> bs = new ArrayList<>();
            for (int k = 0; k <= i; k++) {
                EncodedBatch b = batch(SEED * 31 + i, k * 2L, 2, 10 + i);
                provider().append(log, f, b);
                bs.add(b);
            }
            contents.add(entriesOf(bs));
        }
        for (int i = 0; i < logs.size(); i++) {
            assertLogHolds(provider(), logs.get(i), contents.get(i), 2L * (i + 1) - 1);
        }
        LogId target = logs.get(3);
        Fence newer = claimAndReconcile(provider(), target);
        provider().trim(target, newer, 3);
        provider().checkpoints().publish(target, newer, 5, 1, bytes(new byte[10]));
        provider().stage(target, newer, batch(SEED, 8, 2, 5));
        for (int i = 0; i < logs.size(); i++) {
            if (i == 3) {
                continue;
            }
            LogId log = logs.get(i);
            assertLogHolds(provider(), log, contents.get(i), 2L * (i + 1) - 1);
            assertThat(provider().checkpoints().latest(log)).as("latest checkpoint of %s after a checkpoint of %s",
                    log, target).isEmpty();
            assertThat(provider().state(log).trimWatermark()).as("trim watermark of %s after a trim of %s", log,
                    target).isEqualTo(-1);
            Fence f = fences.get(i);
            provider().commit(log, f, 2L * (i + 1) - 1); // still current: other logs' claims did not fence it
        }
        assertLogHolds(provider(), target, contents.get(3).subList(4, 8), 7);
        reopen();
        for (int i = 0; i < logs.size(); i++) {
            if (i != 3) {
                assertLogHolds(provider(), logs.get(i), contents.get(i), 2L * (i + 1) - 1);
            }
        }
    }

    /** logs(tree) and trees() list, sorted, the logs that were claimed, written or checkpointed. */
    @Test
    void listingsShowWhatExists() throws Exception {
        assertThat(provider().trees()).as("trees() of a fresh storage").isEmpty();
        assertThat(provider().logs(TREE)).as("logs(%s) of a fresh storage", TREE).isEmpty();
        provider().claim(log(3));
        Fence f1 = provider().claim(log(1));
        provider().append(log(1), f1, batch(SEED, 0, 1, SMALL));
        Fence f2 = provider().claim(log(2));
        provider().checkpoints().publish(log(2), f2, -1, 0, bytes(new byte[1]));
        Fence o = provider().claim(new LogId("another", 0));
        provider().append(new LogId("another", 0), o, batch(SEED, 0, 1, SMALL));
        provider().claim(new LogId("a-first", 12));
        provider().read(log(7), -1, 10, 100);      // reading or asking the state creates nothing
        provider().state(log(8));
        provider().state(new LogId("only-read", 0));
        provider().checkpoints().latest(log(9));
        List<LogId> expected = List.of(log(1), log(2), log(3));
        assertThat(provider().logs("another")).as("logs(another)").isEqualTo(List.of(new LogId("another", 0)));
        assertThat(provider().logs("absent")).as("logs of a tree never used").isEmpty();
        assertThat(provider().logs("conformanc")).as("logs of a prefix of an existing tree's name").isEmpty();
        assertDurableAcrossReopen(() -> {
            assertThat(provider().logs(TREE)).as("logs(%s): the claimed, written or checkpointed logs, sorted, not"
                    + " those only read or asked for their state", TREE).isEqualTo(expected);
            assertThat(provider().trees()).as("trees(): sorted, only trees with claimed, written or checkpointed"
                    + " logs").isEqualTo(List.of("a-first", "another", TREE));
        });
    }

    /** logs(tree) is sorted by partition number, not by its text. */
    @Test
    void logsAreSortedByPartitionNumber() {
        for (int p : new int[] {10, 2, 100, 0, 9}) {
            provider().claim(log(p));
        }
        assertThat(provider().logs(TREE)).as("logs(tree) must be sorted by partition number")
                .isEqualTo(List.of(log(0), log(2), log(9), log(10), log(100)));
    }
}
