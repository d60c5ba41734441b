package dev.lattice.engine;

import dev.lattice.engine.feed.ChangePosition;
import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import dev.lattice.spi.FencedException;
import dev.lattice.spi.LogEntry;
import dev.lattice.spi.LogId;
import dev.lattice.spi.OffsetConflictException;
import dev.lattice.spi.ReadPage;
import dev.lattice.spi.WalStorageProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.zip.CRC32C;

/**
 * The registered change-feed consumers and their positions, stored durably in the engine's own log
 * {@code _feeds/0} on the {@code default} provider (tree names starting with {@code _} are reserved).
 *
 * <p>Entry: {@code u8 magic 'F', u8 format 1, u8 op (1 set, 2 remove), UTF tree, UTF consumer, UTF position
 * ({@link ChangePosition#toString()}), i64 time (epoch ms), i32 CRC32C of the bytes before}. The last record of a
 * (tree, consumer) wins. Every {@value #COMPACT_EVERY} records written by one process it publishes a checkpoint
 * (format 1: {@code "LFDC", i32 format, i32 n, n x (UTF tree, UTF consumer, UTF position), i32 CRC32C}) and trims
 * the log to it. The log is read without a claim; a writer claims it on its first store and again whenever another
 * process's claim fenced it (every record is a whole value, so writers in several processes interleave safely).
 *
 * <p>Thread-safe.
 */
final class FeedConsumers {

    static final LogId LOG_ID = new LogId("_feeds", 0);
    static final int COMPACT_EVERY = 1000;
    private static final int CHECKPOINT_FORMAT = 1;
    private static final int CHECKPOINT_MAGIC = 0x4C464443; // "LFDC"
    private static final Logger LOG = LoggerFactory.getLogger(FeedConsumers.class);

    private final EngineContext ctx;
    /** tree -> consumer -> position, as of {@link #readThrough}. */
    private final Map<String, Map<String, ChangePosition>> positions = new HashMap<>();
    private long readThrough = -1;
    private Fence fence;
    private int writtenSinceCompact;

    FeedConsumers(EngineContext ctx) {
        this.ctx = ctx;
    }

    private WalStorageProvider provider() {
        return ctx.provider;
    }

    /** The consumers of a tree with their stored positions (re-reads the log's new records first). */
    synchronized Map<String, ChangePosition> of(String tree) {
        refresh();
        return new TreeMap<>(positions.getOrDefault(tree, Map.of()));
    }

    /** @return the stored position of a consumer, empty when it is not registered */
    synchronized Optional<ChangePosition> get(String tree, String consumer) {
        refresh();
        return Optional.ofNullable(positions.getOrDefault(tree, Map.of()).get(consumer));
    }

    /** Stores a consumer's position durably (registers it if new). */
    synchronized void store(String tree, String consumer, ChangePosition position) {
        if (position.isNow()) {
            throw new IllegalArgumentException("resolve the 'now' marker before storing it");
        }
        write((byte) 1, tree, consumer, position);
    }

    /** Removes a consumer; true if it was registered. */
    synchronized boolean remove(String tree, String consumer) {
        refresh();
        if (!positions.getOrDefault(tree, Map.of()).containsKey(consumer)) {
            return false;
        }
        write((byte) 2, tree, consumer, ChangePosition.beginning());
        return true;
    }

    /**
     * How far a log may be trimmed after a checkpoint through {@code through}: held back to the slowest registered
     * consumer of its tree, by at most {@code changeFeedRetentionEntries}. When the consumers cannot be read, keeps
     * the log as far back as the bound allows (never fails the checkpoint).
     */
    long trimThrough(LogId log, long through) {
        long bound = ctx.config.changeFeedRetentionEntries;
        if (bound == 0 || through < 0) {
            return through;
        }
        long floor = Math.max(-1, through - bound);
        Map<String, ChangePosition> cs;
        try {
            cs = of(log.tree());
        } catch (RuntimeException e) {
            LOG.warn("{}: change-feed consumers cannot be read ({}); the trim keeps the last {} entries", log, e, bound);
            return floor;
        }
        long slowest = through;
        for (ChangePosition p : cs.values()) {
            if (p.isBeginning() || p.partitions() > log.partition()) {
                slowest = Math.min(slowest, p.offset(log.partition()));
            }
        }
        return Math.max(floor, slowest);
    }

    private void write(byte op, String tree, String consumer, ChangePosition position) {
        byte[] entry = encode(op, tree, consumer, position);
        RuntimeException last = null;
        for (int attempt = 0; attempt < 8; attempt++) {
            try {
                if (fence == null) {
                    Fence f = ctx.bounded(LOG_ID, "claim", () -> provider().claim(LOG_ID));
                    ctx.bounded(LOG_ID, "reconcile", () -> provider().reconcile(LOG_ID, f));
                    fence = f;
                }
                Fence f = fence;
                long next = ctx.bounded(LOG_ID, "state", () -> provider().state(LOG_ID)).committedTail() + 1;
                EncodedBatch batch = EncodedBatch.of(next, List.of(entry));
                ctx.bounded(LOG_ID, "append", () -> {
                    provider().append(LOG_ID, f, batch);
                    return null;
                });
                refresh();
                if (++writtenSinceCompact >= COMPACT_EVERY) {
                    compact();
                }
                return;
            } catch (FencedException e) {
                fence = null; // another process stored a position meanwhile: claim again
                last = e;
            } catch (OffsetConflictException e) {
                last = e;
            }
        }
        throw last;
    }

    /** Publishes the whole map as a checkpoint and trims the log to it; failures only delay the next attempt. */
    private void compact() {
        writtenSinceCompact = 0;
        try {
            Fence f = fence;
            long through = readThrough;
            byte[] snapshot = snapshot();
            ctx.bounded(LOG_ID, "checkpoint publish", () -> provider().checkpoints().publish(LOG_ID, f, through,
                    CHECKPOINT_FORMAT, new ByteArrayInputStream(snapshot)));
            ctx.bounded(LOG_ID, "trim", () -> {
                provider().trim(LOG_ID, f, through);
                return null;
            });
            ctx.bounded(LOG_ID, "checkpoint delete", () -> {
                provider().checkpoints().deleteBefore(LOG_ID, through);
                return null;
            });
        } catch (RuntimeException e) {
            LOG.warn("compacting the change-feed consumer log failed (retried later): {}", e.toString());
        }
    }

    /** Reads records after {@link #readThrough}; reloads from the checkpoint when the log was trimmed past it. */
    private void refresh() {
        WalStorageProvider p = provider();
        var st = ctx.bounded(LOG_ID, "state", () -> p.state(LOG_ID));
        if (st.trimWatermark() > readThrough) {
            positions.clear();
            readThrough = -1;
            Optional<CheckpointInfo> cp = ctx.bounded(LOG_ID, "checkpoint latest", () -> p.checkpoints().latest(LOG_ID));
            if (cp.isEmpty() || cp.get().throughOffset() < st.trimWatermark()) {
                throw new CorruptLogException(LOG_ID, st.trimWatermark(), "the change-feed consumer log is trimmed "
                        + "through " + st.trimWatermark() + " but has no checkpoint covering it");
            }
            try (InputStream in = ctx.bounded(LOG_ID, "checkpoint open", () -> p.checkpoints().open(LOG_ID, cp.get()))) {
                load(in.readAllBytes(), cp.get().throughOffset());
            } catch (IOException e) {
                throw new UncheckedIOException("reading the change-feed consumer checkpoint", e);
            }
            readThrough = cp.get().throughOffset();
        }
        while (readThrough < st.committedTail()) {
            long from = readThrough;
            ReadPage page = ctx.bounded(LOG_ID, "read", () -> p.read(LOG_ID, from, 10_000, 8L << 20));
            if (page.isEmpty()) {
                break;
            }
            for (LogEntry e : page.entries()) {
                apply(e.offset(), e.payload());
                readThrough = e.offset();
            }
        }
    }

    private static byte[] encode(byte op, String tree, String consumer, ChangePosition position) {
        try {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            DataOutputStream out = new DataOutputStream(bytes);
            out.writeByte('F');
            out.writeByte(1);
            out.writeByte(op);
            out.writeUTF(tree);
            out.writeUTF(consumer);
            out.writeUTF(position.toString());
            out.writeLong(System.currentTimeMillis());
            return withCrc(bytes.toByteArray());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void apply(long offset, byte[] entry) {
        checkCrc(entry, offset);
        try {
            DataInputStream in = new DataInputStream(new ByteArrayInputStream(entry, 0, entry.length - 4));
            if (in.readByte() != 'F' || in.readByte() != 1) {
                throw new IOException("unknown magic or format");
            }
            byte op = in.readByte();
            String tree = in.readUTF();
            String consumer = in.readUTF();
            ChangePosition pos = ChangePosition.parse(in.readUTF());
            if (op == 1) {
                positions.computeIfAbsent(tree, t -> new HashMap<>()).put(consumer, pos);
            } else if (op == 2) {
                Map<String, ChangePosition> m = positions.get(tree);
                if (m != null) {
                    m.remove(consumer);
                }
            } else {
                throw new IOException("unknown op " + op);
            }
        } catch (IOException | IllegalArgumentException e) {
            throw new CorruptLogException(LOG_ID, offset, "change-feed consumer record cannot be decoded: " + e, e);
        }
    }

    private byte[] snapshot() {
        try {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            DataOutputStream out = new DataOutputStream(bytes);
            out.writeInt(CHECKPOINT_MAGIC);
            out.writeInt(CHECKPOINT_FORMAT);
            int n = 0;
            for (Map<String, ChangePosition> m : positions.values()) {
                n += m.size();
            }
            out.writeInt(n);
            for (Map.Entry<String, Map<String, ChangePosition>> t : positions.entrySet()) {
                for (Map.Entry<String, ChangePosition> c : t.getValue().entrySet()) {
                    out.writeUTF(t.getKey());
                    out.writeUTF(c.getKey());
                    out.writeUTF(c.getValue().toString());
                }
            }
            return withCrc(bytes.toByteArray());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void load(byte[] data, long through) {
        checkCrc(data, through);
        try {
            DataInputStream in = new DataInputStream(new ByteArrayInputStream(data, 0, data.length - 4));
            if (in.readInt() != CHECKPOINT_MAGIC || in.readInt() != CHECKPOINT_FORMAT) {
                throw new IOException("unknown magic or format");
            }
            int n = in.readInt();
            for (int i = 0; i < n; i++) {
                String tree = in.readUTF();
                String consumer = in.readUTF();
                positions.computeIfAbsent(tree, t -> new HashMap<>()).put(consumer, ChangePosition.parse(in.readUTF()));
            }
        } catch (IOException | IllegalArgumentException e) {
            throw new CorruptLogException(LOG_ID, through, "change-feed consumer checkpoint cannot be decoded: " + e, e);
        }
    }

    private static byte[] withCrc(byte[] body) {
        CRC32C crc = new CRC32C();
        crc.update(body, 0, body.length);
        byte[] out = java.util.Arrays.copyOf(body, body.length + 4);
        java.nio.ByteBuffer.wrap(out).putInt(body.length, (int) crc.getValue());
        return out;
    }

    private static void checkCrc(byte[] data, long offset) {
        if (data.length < 4) {
            throw new CorruptLogException(LOG_ID, offset, "change-feed consumer record of " + data.length + " bytes");
        }
        CRC32C crc = new CRC32C();
        crc.update(data, 0, data.length - 4);
        if (java.nio.ByteBuffer.wrap(data).getInt(data.length - 4) != (int) crc.getValue()) {
            throw new CorruptLogException(LOG_ID, offset, "change-feed consumer record fails its checksum");
        }
    }
}
