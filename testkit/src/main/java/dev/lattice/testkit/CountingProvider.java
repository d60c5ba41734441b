package dev.lattice.testkit;

import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.StagedBatch;
import dev.lattice.spi.WalStorageProvider;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

/**
 * A decorator that counts what crosses the SPI: calls per {@link SpiOperation} (and how many of them threw),
 * entries and payload bytes staged and read, checkpoint bytes published and read. Benchmarks use it for figures such
 * as "stage calls per key written"; tests use it to prove that a component batches its calls.
 *
 * <p>{@code append} is the SPI's default running through this decorator, so it counts as one {@link SpiOperation#STAGE}
 * and one {@link SpiOperation#COMMIT} (plus an {@link SpiOperation#ABORT} when the commit fails). {@code describe},
 * {@code checkpoints} and {@code close} are not counted; every call of the checkpoint store it returns is.
 *
 * <p>Thread-safe and cheap: every counter is a {@link LongAdder}; {@link #snapshot()} reads them one by one, so a
 * snapshot taken while calls run may mix counts from just before and just after a call.
 */
public final class CountingProvider extends ForwardingProvider {

    /**
     * An immutable snapshot of the counters.
     *
     * @param calls calls per operation (every operation present, zero when never called)
     * @param failures calls per operation that threw
     * @param entriesWritten entries in batches that {@code stage} accepted
     * @param payloadBytesWritten payload bytes in batches that {@code stage} accepted
     * @param entriesRead entries returned by {@code read}
     * @param payloadBytesRead payload bytes returned by {@code read}
     * @param checkpointBytesWritten bytes the provider consumed from {@code publish} streams
     * @param checkpointBytesRead bytes read from streams returned by checkpoint {@code open}
     */
    public record Counts(Map<SpiOperation, Long> calls, Map<SpiOperation, Long> failures, long entriesWritten,
                         long payloadBytesWritten, long entriesRead, long payloadBytesRead,
                         long checkpointBytesWritten, long checkpointBytesRead) {

        /**
         * Copies the maps so the snapshot stays immutable.
         *
         * @param calls calls per operation (every operation present, zero when never called)
         * @param failures calls per operation that threw
         * @param entriesWritten entries in batches that {@code stage} accepted
         * @param payloadBytesWritten payload bytes in batches that {@code stage} accepted
         * @param entriesRead entries returned by {@code read}
         * @param payloadBytesRead payload bytes returned by {@code read}
         * @param checkpointBytesWritten bytes the provider consumed from {@code publish} streams
         * @param checkpointBytesRead bytes read from streams returned by checkpoint {@code open}
         */
        public Counts {
            calls = Collections.unmodifiableMap(new EnumMap<>(calls));
            failures = Collections.unmodifiableMap(new EnumMap<>(failures));
        }

        /**
         * Counts the calls of one operation.
         *
         * @param op an operation
         * @return how many times it was called
         */
        public long calls(SpiOperation op) {
            return calls.getOrDefault(op, 0L);
        }

        /**
         * Counts the calls of one operation that threw.
         *
         * @param op an operation
         * @return how many of its calls threw
         */
        public long failures(SpiOperation op) {
            return failures.getOrDefault(op, 0L);
        }

        /** {@return calls of every operation together} */
        public long totalCalls() {
            return calls.values().stream().mapToLong(Long::longValue).sum();
        }

        /**
         * The difference between this snapshot and an earlier one: what happened in between.
         *
         * @param earlier a snapshot taken before this one
         * @return the counts of the interval
         */
        public Counts minus(Counts earlier) {
            Map<SpiOperation, Long> c = new EnumMap<>(SpiOperation.class);
            Map<SpiOperation, Long> f = new EnumMap<>(SpiOperation.class);
            for (SpiOperation op : SpiOperation.values()) {
                c.put(op, calls(op) - earlier.calls(op));
                f.put(op, failures(op) - earlier.failures(op));
            }
            return new Counts(c, f, entriesWritten - earlier.entriesWritten,
                    payloadBytesWritten - earlier.payloadBytesWritten, entriesRead - earlier.entriesRead,
                    payloadBytesRead - earlier.payloadBytesRead,
                    checkpointBytesWritten - earlier.checkpointBytesWritten,
                    checkpointBytesRead - earlier.checkpointBytesRead);
        }
    }

    private final LongAdder[] calls = adders();
    private final LongAdder[] failures = adders();
    private final LongAdder entriesWritten = new LongAdder();
    private final LongAdder bytesWritten = new LongAdder();
    private final LongAdder entriesRead = new LongAdder();
    private final LongAdder bytesRead = new LongAdder();
    private final LongAdder checkpointBytesWritten = new LongAdder();
    private final LongAdder checkpointBytesRead = new LongAdder();

    /**
     * Wraps a provider.
     *
     * @param delegate the provider that does the work
     * @throws NullPointerException if {@code delegate} is null
     */
    public CountingProvider(WalStorageProvider delegate) {
        super(delegate);
    }

    private static LongAdder[] adders() {
        LongAdder[] a = new LongAdder[SpiOperation.values().length];
        for (int i = 0; i < a.length; i++) {
            a[i] = new LongAdder();
        }
        return a;
    }

    /** {@return the counters now} */
    public Counts snapshot() {
        Map<SpiOperation, Long> c = new EnumMap<>(SpiOperation.class);
        Map<SpiOperation, Long> f = new EnumMap<>(SpiOperation.class);
        for (SpiOperation op : SpiOperation.values()) {
            c.put(op, calls[op.ordinal()].sum());
            f.put(op, failures[op.ordinal()].sum());
        }
        return new Counts(c, f, entriesWritten.sum(), bytesWritten.sum(), entriesRead.sum(), bytesRead.sum(),
                checkpointBytesWritten.sum(), checkpointBytesRead.sum());
    }

    /** Sets every counter to zero (not atomic with respect to calls running meanwhile). */
    public void reset() {
        for (SpiOperation op : SpiOperation.values()) {
            calls[op.ordinal()].reset();
            failures[op.ordinal()].reset();
        }
        entriesWritten.reset();
        bytesWritten.reset();
        entriesRead.reset();
        bytesRead.reset();
        checkpointBytesWritten.reset();
        checkpointBytesRead.reset();
    }

    /**
     * Counts the call, and counts it as a failure if it throws.
     *
     * @return the call's result
     */
    @Override
    protected <T> T intercept(SpiOperation op, LogId log, Supplier<T> body) {
        calls[op.ordinal()].increment();
        try {
            return body.get();
        } catch (RuntimeException | Error e) {
            failures[op.ordinal()].increment();
            throw e;
        }
    }

    /** Stages through the delegate (counted as {@link SpiOperation#STAGE}) and counts the batch once accepted. */
    @Override
    public StagedBatch stage(LogId log, Fence fence, EncodedBatch batch) {
        StagedBatch s = super.stage(log, fence, batch);
        entriesWritten.add(batch.size());
        bytesWritten.add(batch.payloadBytes());
        return s;
    }

    /** Reads through the delegate (counted as {@link SpiOperation#READ}) and counts what the page holds. */
    @Override
    public ReadPage read(LogId log, long fromExclusive, int maxEntries, long maxBytes) {
        ReadPage p = super.read(log, fromExclusive, maxEntries, maxBytes);
        entriesRead.add(p.entries().size());
        bytesRead.add(p.payloadBytes());
        return p;
    }

    /** Publishes through the delegate, counting the bytes it consumes from {@code data}. */
    @Override
    protected CheckpointInfo publishCheckpoint(LogId log, Fence fence, long throughOffset, int formatVersion,
                                               InputStream data) {
        InputStream counted = data == null ? null : new CountingStream(data, checkpointBytesWritten);
        return super.publishCheckpoint(log, fence, throughOffset, formatVersion, counted);
    }

    /** Opens through the delegate; the returned stream counts the bytes read from it. */
    @Override
    protected InputStream openCheckpoint(LogId log, CheckpointInfo info) {
        return new CountingStream(super.openCheckpoint(log, info), checkpointBytesRead);
    }

    /** Counts the bytes read through it into an adder. */
    private static final class CountingStream extends FilterInputStream {
        private final LongAdder sink;

        CountingStream(InputStream in, LongAdder sink) {
            super(in);
            this.sink = sink;
        }

        @Override
        public int read() throws IOException {
            int b = super.read();
            if (b >= 0) {
                sink.increment();
            }
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int n = super.read(b, off, len);
            if (n > 0) {
                sink.add(n);
            }
            return n;
        }

        @Override
        public long skip(long n) throws IOException {
            long s = super.skip(n);
            if (s > 0) {
                sink.add(s);
            }
            return s;
        }
    }
}
