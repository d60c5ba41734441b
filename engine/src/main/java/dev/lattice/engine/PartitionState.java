package dev.lattice.engine;

import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.LogId;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32C;
import java.util.zip.CheckedInputStream;
import java.util.zip.CheckedOutputStream;

/**
 * The live state of one partition: a sorted map of committed values. Written only by the partition's single
 * applier (the log pipeline's commit step, or replay before the pipeline starts); read by any thread.
 *
 * <p>Snapshot format (checkpoint format version {@value #SNAPSHOT_FORMAT}):
 * {@code "LTCK", i32 format, i64 through offset, i64 max version, i64 count, then per key: i32 key length, key
 * (UTF-8), i64 version, i32 value length, value; then i32 CRC32C of everything before}.
 */
final class PartitionState {

    static final int SNAPSHOT_FORMAT = 1;
    private static final int SNAPSHOT_MAGIC = 0x4C54434B; // "LTCK"
    /** Estimated JVM bytes per entry besides key and value bytes (skip-list node, index, String, Versioned, array headers). */
    static final int ENTRY_OVERHEAD_BYTES = 128;

    final ConcurrentSkipListMap<String, Versioned> map = new ConcurrentSkipListMap<>();
    private final AtomicLong memoryBudgetUsed;
    long appliedOffset = -1;
    long maxVersion;

    PartitionState(AtomicLong memoryBudgetUsed) {
        this.memoryBudgetUsed = memoryBudgetUsed;
    }

    static long estimate(String key, byte[] value) {
        return ENTRY_OVERHEAD_BYTES + key.length() + (value == null ? 0 : value.length);
    }

    /** Applies one mutation with its version; returns the caller's result (version, or boolean). */
    Object apply(WalRecord.Mutation m, long version) {
        if (version > maxVersion) {
            maxVersion = version;
        }
        switch (m.op()) {
            case WalRecord.Mutation.PUT:
                put(m.key(), m.value(), version);
                return version;
            case WalRecord.Mutation.PUT_IF_VERSION: {
                Versioned cur = map.get(m.key());
                long curVersion = cur == null ? 0 : cur.version();
                if (curVersion != m.expectedVersion()) {
                    return Boolean.FALSE;
                }
                put(m.key(), m.value(), version);
                return Boolean.TRUE;
            }
            case WalRecord.Mutation.DELETE: {
                Versioned old = map.remove(m.key());
                if (old != null) {
                    memoryBudgetUsed.addAndGet(-estimate(m.key(), old.value()));
                }
                return old != null;
            }
            default:
                throw new IllegalStateException("not a tree mutation: op " + m.op());
        }
    }

    private void put(String key, byte[] value, long version) {
        Versioned old = map.put(key, new Versioned(value, version));
        memoryBudgetUsed.addAndGet(estimate(key, value) - (old == null ? 0 : estimate(key, old.value())));
    }

    /** Serialises the state as of {@link #appliedOffset}; call only from the applier. */
    byte[] snapshot() {
        try {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream(64 * 1024);
            CheckedOutputStream checked = new CheckedOutputStream(bytes, new CRC32C());
            DataOutputStream out = new DataOutputStream(checked);
            out.writeInt(SNAPSHOT_MAGIC);
            out.writeInt(SNAPSHOT_FORMAT);
            out.writeLong(appliedOffset);
            out.writeLong(maxVersion);
            out.writeLong(map.size());
            for (Map.Entry<String, Versioned> e : map.entrySet()) {
                byte[] k = e.getKey().getBytes(StandardCharsets.UTF_8);
                out.writeInt(k.length);
                out.write(k);
                out.writeLong(e.getValue().version());
                out.writeInt(e.getValue().value().length);
                out.write(e.getValue().value());
            }
            out.flush();
            int crc = (int) checked.getChecksum().getValue();
            new DataOutputStream(bytes).writeInt(crc);
            return bytes.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Loads a snapshot into this (empty) state.
     *
     * @throws CorruptLogException if the stream fails its checksum or cannot be decoded
     */
    void load(LogId log, long throughOffset, InputStream raw) {
        BufferedInputStream buffered = new BufferedInputStream(raw, 256 * 1024);
        CheckedInputStream checked = new CheckedInputStream(buffered, new CRC32C());
        DataInputStream in = new DataInputStream(checked);
        try {
            if (in.readInt() != SNAPSHOT_MAGIC) {
                throw new CorruptLogException(log, throughOffset, "checkpoint has a wrong magic number");
            }
            int format = in.readInt();
            if (format != SNAPSHOT_FORMAT) {
                throw new CorruptLogException(log, throughOffset, "checkpoint format " + format + " is unknown");
            }
            long through = in.readLong();
            if (through != throughOffset) {
                throw new CorruptLogException(log, throughOffset, "checkpoint says through " + through);
            }
            long maxV = in.readLong();
            long count = in.readLong();
            for (long i = 0; i < count; i++) {
                int kl = in.readInt();
                if (kl < 0 || kl > LatticeConfig.MAX_KEY_BYTES_LIMIT) {
                    throw new CorruptLogException(log, throughOffset, "checkpoint key length " + kl);
                }
                byte[] k = in.readNBytes(kl);
                long version = in.readLong();
                int vl = in.readInt();
                if (vl < 0) {
                    throw new CorruptLogException(log, throughOffset, "checkpoint value length " + vl);
                }
                byte[] v = in.readNBytes(vl);
                if (k.length != kl || v.length != vl) {
                    throw new EOFException();
                }
                put(new String(k, StandardCharsets.UTF_8), v, version);
            }
            int computed = (int) checked.getChecksum().getValue();
            int stored = new DataInputStream(buffered).readInt();
            if (computed != stored) {
                throw new CorruptLogException(log, throughOffset, "checkpoint checksum mismatch");
            }
            if (buffered.read() != -1) {
                throw new CorruptLogException(log, throughOffset, "checkpoint has trailing bytes");
            }
            appliedOffset = through;
            maxVersion = maxV;
        } catch (EOFException e) {
            throw new CorruptLogException(log, throughOffset, "checkpoint is truncated", e);
        } catch (IOException e) {
            throw new CorruptLogException(log, throughOffset, "checkpoint cannot be read: " + e.getMessage(), e);
        }
    }

    /** Drops everything (used when a load fails half-way). */
    void clear() {
        for (Map.Entry<String, Versioned> e : map.entrySet()) {
            memoryBudgetUsed.addAndGet(-estimate(e.getKey(), e.getValue().value()));
        }
        map.clear();
        appliedOffset = -1;
        maxVersion = 0;
    }
}
