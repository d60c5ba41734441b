package dev.lattice.provider.chronicle;

import dev.lattice.spi.BatchId;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.RunId;

import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * The writer a read-only instance follows ({@code ReadOnlyFollowerTest}), run in a child JVM: 1 MiB blocks and a
 * new cycle file every second; appends commit groups to {@link #LOG} (some of several frames, some with a batch
 * staged beyond the commit), trims (deleting old cycle files), publishes checkpoints, writes and deletes runs, for
 * at least a given time and a given number of steps. Lines on stdout:
 * <ul>
 *   <li>{@code OPENED}: the provider is open (it holds the directory lock);</li>
 *   <li>{@code COMMITTING t} before and {@code COMMITTED t} after a commit through {@code t};</li>
 *   <li>{@code TRIMMED w}, {@code CHECKPOINT t}, {@code RUN id}, {@code RUNDEL id} after those calls returned;</li>
 *   <li>{@code HOLD tail staged watermark checkpoint runs}: it waits for a line on stdin before going on, with
 *       batches staged through {@code staged} but committed only through {@code tail} ({@code checkpoint} -1 when
 *       none, {@code runs} the live run ids joined by ',' or '-');</li>
 *   <li>{@code MIDGROUP tail through}: the first frame of a multi-frame commit group through {@code through} is
 *       written, the group is not complete; it waits for a line on stdin;</li>
 *   <li>{@code DONE tail}: finished; it closes the provider on the next stdin line and prints {@code CLOSED}.</li>
 * </ul>
 */
final class FollowWriterMain {

    /** The log written. */
    static final LogId LOG = new LogId("follow", 0);

    private FollowWriterMain() {
    }

    /**
     * The bytes of a run a writer wrote at a step.
     *
     * @param id the run id
     * @return the bytes, derived from the id
     */
    static byte[] runData(String id) {
        byte[] b = new byte[70_000 + Math.floorMod(id.hashCode(), 50_000)];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) (id.hashCode() * 17 + i * 7);
        }
        return b;
    }

    static ChronicleConfig config(Path dir) {
        return ChronicleConfig.builder(dir).blockSize(1 << 20).rollCycle("test_secondly").build();
    }

    static void run(PrintStream out, Path dir, long millis, int minSteps, long seed) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        ChronicleWalStorageProvider p = ChronicleWalStorageProvider.open(config(dir));
        out.println("OPENED");
        Fence f = p.claim(LOG);
        int frameBudget = p.config().maxDocumentBytes() - Frames.FRAME_OVERHEAD;
        long maxBatch = p.describe().limits().maxBatchBytes();
        int[] framesWritten = {0};
        boolean[] holdMid = {false};
        long[] group = {-1, -1};
        p.inspect(LOG, s -> s.afterFrameWritten = () -> {
            if (holdMid[0] && ++framesWritten[0] == 1) {
                out.println("MIDGROUP " + group[0] + " " + group[1]);
                readLine(in);
            }
        });
        Random rnd = new Random(seed);
        long tail = -1;
        long next = 0;
        long watermark = -1;
        long checkpoint = -1;
        List<String> runs = new ArrayList<>();
        long end = System.nanoTime() + millis * 1_000_000L;
        // at least minSteps steps and at least millis ms (the cycles roll every second)
        for (int step = 1; step <= minSteps || System.nanoTime() < end; step++) {
            boolean big = step % 5 == 0;
            long groupBytes = 0;
            int batches = 1 + rnd.nextInt(3);
            for (int k = 0; k < batches; k++) {
                EncodedBatch b = batch(next, big ? Integer.MAX_VALUE : 1 + rnd.nextInt(30), maxBatch);
                groupBytes += Frames.BATCH_OVERHEAD + (long) Frames.ENTRY_OVERHEAD * b.size() + b.payloadBytes();
                p.stage(LOG, f, b);
                next = b.lastOffset() + 1;
            }
            long through = next - 1;
            long staged = through;
            if (step % 4 == 0) {
                // one more batch staged now, committed with the next group
                EncodedBatch extra = batch(next, 1 + rnd.nextInt(10), maxBatch);
                p.stage(LOG, f, extra);
                next = extra.lastOffset() + 1;
                staged = next - 1;
            }
            if (step % 6 == 0) {
                out.println("HOLD " + tail + " " + staged + " " + watermark + " " + checkpoint + " "
                        + (runs.isEmpty() ? "-" : String.join(",", runs)));
                readLine(in);
            }
            holdMid[0] = groupBytes > frameBudget && step % 2 == 0;
            framesWritten[0] = 0;
            group[0] = tail;
            group[1] = through;
            out.println("COMMITTING " + through);
            p.commit(LOG, f, through);
            holdMid[0] = false;
            tail = through;
            out.println("COMMITTED " + through);
            if (staged > through) {
                // the extra batch: the next group starts after it, so commit it on its own now or with the next
                next = staged + 1;
                out.println("COMMITTING " + staged);
                p.commit(LOG, f, staged);
                tail = staged;
                out.println("COMMITTED " + staged);
            }
            if (step % 15 == 0 && tail > 200) {
                watermark = tail - 100 - rnd.nextInt(100);
                p.trim(LOG, f, watermark);
                out.println("TRIMMED " + watermark);
            }
            if (step % 20 == 0) {
                checkpoint = tail;
                p.checkpoints().publish(LOG, f, tail, 1, new ByteArrayInputStream(ChildMains.checkpointData(tail)));
                p.checkpoints().deleteBefore(LOG, tail);
                out.println("CHECKPOINT " + tail);
            }
            if (step % 12 == 0) {
                String id = "r" + step;
                byte[] data = runData(id);
                p.runs().write(LOG, f, new RunId(id), new ByteArrayInputStream(data), data.length);
                runs.add(id);
                out.println("RUN " + id);
                if (runs.size() > 2) {
                    String old = runs.remove(0);
                    p.runs().delete(LOG, f, new RunId(old));
                    out.println("RUNDEL " + old);
                }
            }
            sleepQuietly(rnd.nextInt(15));
        }
        out.println("DONE " + tail);
        readLine(in);
        p.close();
        out.println("CLOSED");
    }

    /** A batch of {@link Payloads#of} entries from {@code first}: {@code want} entries or as many as fit. */
    static EncodedBatch batch(long first, int want, long maxBatch) {
        List<byte[]> entries = new ArrayList<>();
        long bytes = 0;
        while (entries.size() < want && entries.size() < 1000) {
            byte[] e = Payloads.of(first + entries.size());
            if (!entries.isEmpty() && bytes + e.length > maxBatch) {
                break;
            }
            entries.add(e);
            bytes += e.length;
        }
        return EncodedBatch.of(first, BatchId.random(), entries);
    }

    private static void readLine(BufferedReader in) {
        try {
            if (in.readLine() == null) {
                throw new IllegalStateException("stdin ended");
            }
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void sleepQuietly(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
