package dev.lattice.provider.chronicle;

import dev.lattice.spi.BatchId;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderLimits;
import dev.lattice.spi.WalStorageProvider;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import net.openhft.chronicle.wire.DocumentContext;

import java.io.ByteArrayInputStream;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Programs the tests run in child JVMs (so they can be killed with SIGKILL):
 * <ul>
 *   <li>{@code kill-writer <dir> <seed> <uri-options>}: appends forever to log {@code kill/0}, printing
 *       {@code S first last} before each commit, {@code C last} after it returned, {@code T w} after a trim,
 *       {@code P through} after a checkpoint publish;</li>
 *   <li>{@code hold-lock <dir>}: opens a provider, prints {@code LOCKED}, closes it when stdin ends;</li>
 *   <li>{@code partial-doc <queueDir> <blockSize> <first> <count>}: opens a log's Chronicle queue directly,
 *       writes a complete, valid frame into a document it never finishes, prints {@code PARTIAL} and waits to be
 *       killed.</li>
 *   <li>{@code open-uri <uri>}: {@code Providers.open(uri)}, claims and appends one entry, closes; prints
 *       {@code OPENED} or {@code FAILED <exception class> <message>} (one line).</li>
 *   <li>{@code follow-writer <dir> <millis> <steps> <seed>}: the writer a read-only instance follows
 *       ({@link FollowWriterMain}).</li>
 *   <li>{@code space-writer <dir> <uri-options> <retainBytes>}: appends and trims forever ({@link SpaceWriterMain}).</li>
 * </ul>
 */
public final class ChildMains {

    /** Log the kill writer appends to. */
    static final LogId KILL_LOG = new LogId("kill", 0);

    private ChildMains() {
    }

    /**
     * Entry point.
     *
     * @param args the command and its arguments
     * @throws Exception on any failure (the child exits non-zero)
     */
    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true,
                StandardCharsets.UTF_8);
        switch (args[0]) {
            case "kill-writer" -> killWriter(out, Path.of(args[1]), Long.parseLong(args[2]), args[3],
                    args.length > 4 && args[4].equals("hang"));
            case "hold-lock" -> holdLock(out, Path.of(args[1]));
            case "partial-doc" -> partialDoc(out, Path.of(args[1]), Long.parseLong(args[2]), Long.parseLong(args[3]),
                    Integer.parseInt(args[4]));
            case "open-uri" -> openUri(out, args[1]);
            case "follow-writer" -> FollowWriterMain.run(out, Path.of(args[1]), Long.parseLong(args[2]),
                    Integer.parseInt(args[3]), Long.parseLong(args[4]));
            case "space-writer" -> SpaceWriterMain.run(out, Path.of(args[1]), args[2], Long.parseLong(args[3]));
            default -> throw new IllegalArgumentException("unknown command " + args[0]);
        }
    }

    private static void openUri(PrintStream out, String uri) {
        try (WalStorageProvider p = dev.lattice.spi.Providers.open(uri)) {
            LogId log = new LogId("flags", 0);
            Fence f = p.claim(log);
            p.append(log, f, EncodedBatch.of(0, List.of(new byte[]{1, 2, 3})));
            out.println("OPENED");
        } catch (Throwable t) {
            out.println("FAILED " + t.getClass().getName() + " " + String.valueOf(t.getMessage()).replace('\n', ' '));
        }
    }

    /**
     * The checkpoint data the kill writer publishes through an offset.
     *
     * @param through the through-offset
     * @return the bytes
     */
    static byte[] checkpointData(long through) {
        byte[] b = new byte[3000 + (int) Math.floorMod(through, 5000L)];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) (through * 31 + i);
        }
        return b;
    }

    private static void killWriter(PrintStream out, Path dir, long seed, String options, boolean hang) {
        WalStorageProvider p = new ChronicleProviderFactory().open(URI.create("chronicle:" + dir + "?" + options),
                Map.of());
        LogId log = KILL_LOG;
        Fence f = p.claim(log);
        p.reconcile(log, f);
        ProviderLimits limits = p.describe().limits();
        int frameBudget = ((ChronicleWalStorageProvider) p).config().maxDocumentBytes() - Frames.FRAME_OVERHEAD;
        boolean[] armed = {false};
        if (hang) {
            // With "hang", the first commit group too big for one frame stops after its first frame, to be killed.
            ((ChronicleWalStorageProvider) p).inspect(log, s -> s.afterFrameWritten = () -> {
                if (armed[0]) {
                    out.println("HANG");
                    try {
                        Thread.sleep(Long.MAX_VALUE);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            });
        }
        long next = p.state(log).committedTail() + 1;
        out.println("READY " + next);
        Random rnd = new Random(seed);
        long commits = 0;
        while (true) {
            long groupFirst = next;
            long groupBytes = 0;
            int batches = 1 + rnd.nextInt(3);
            for (int k = 0; k < batches; k++) {
                int want = 1 + rnd.nextInt(40);
                List<byte[]> entries = new ArrayList<>();
                long bytes = 0;
                while (entries.size() < want) {
                    byte[] e = Payloads.of(next + entries.size());
                    if (!entries.isEmpty() && bytes + e.length > limits.maxBatchBytes()) {
                        break;
                    }
                    entries.add(e);
                    bytes += e.length;
                }
                EncodedBatch b = EncodedBatch.of(next, BatchId.random(), entries);
                groupBytes += Frames.BATCH_OVERHEAD + (long) Frames.ENTRY_OVERHEAD * b.size() + b.payloadBytes();
                p.stage(log, f, b);
                next = b.lastOffset() + 1;
            }
            armed[0] = hang && groupBytes > frameBudget;
            out.println("S " + groupFirst + " " + (next - 1));
            p.commit(log, f, next - 1);
            out.println("C " + (next - 1));
            commits++;
            if (commits % 64 == 0 && next - 1 - 3000 > p.state(log).trimWatermark()) {
                long w = next - 1 - 3000;
                p.trim(log, f, w);
                out.println("T " + w);
            }
            if (commits % 50 == 0) {
                long through = next - 1;
                p.checkpoints().publish(log, f, through, 1, new ByteArrayInputStream(checkpointData(through)));
                out.println("P " + through);
                p.checkpoints().deleteBefore(log, through);
            }
        }
    }

    private static void holdLock(PrintStream out, Path dir) throws Exception {
        WalStorageProvider p = new ChronicleProviderFactory().open(URI.create("chronicle:" + dir), Map.of());
        out.println("LOCKED " + ProcessHandle.current().pid());
        while (System.in.read() >= 0) {
            // wait for stdin to end
        }
        p.close();
        out.println("RELEASED");
    }

    private static void partialDoc(PrintStream out, Path queueDir, long blockSize, long first, int count)
            throws Exception {
        List<byte[]> entries = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            entries.add(Payloads.small(first + i));
        }
        byte[] frame = Frames.assemble(1, first, first + count - 1,
                List.of(EncodedBatch.of(first, BatchId.random(), entries)));
        SingleChronicleQueue q = SingleChronicleQueueBuilder.binary(queueDir).blockSize(blockSize)
                .rollCycle(ChronicleConfig.ROLL_CYCLES.get(ChronicleConfig.DEFAULT_ROLL_CYCLE)).build();
        ExcerptAppender a = q.createAppender();
        DocumentContext dc = a.writingDocument();
        dc.wire().bytes().write(frame);
        out.println("PARTIAL " + frame.length);
        Thread.sleep(Long.MAX_VALUE); // killed here, the document never finished
        dc.close();
    }
}
