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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.zip.CRC32C;
import java.util.zip.CheckedInputStream;
import java.util.zip.CheckedOutputStream;

/**
 * The encodings of a partition's state: the whole-partition snapshot (checkpoint formats 1 and 2, for providers
 * without a run store and for data written before runs; layout in {@link PartitionState}'s class comment) and its
 * pending and decision sections, which a manifest (format 3) carries as its engine state. Static; the state passed
 * in is used from its applier only.
 */
final class PartitionSnapshotCodec {

    private PartitionSnapshotCodec() {
    }

    // ------------------------------------------------------------------ snapshots

    /** Serialises the state as of the state's {@code appliedOffset}; call only from the applier. */
    static byte[] snapshot(PartitionState ps) {
        try {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream(64 * 1024);
            CheckedOutputStream checked = new CheckedOutputStream(bytes, new CRC32C());
            DataOutputStream out = new DataOutputStream(checked);
            List<Map.Entry<String, PartitionState.Unresolved>> pending = ps.pendingNow();
            Set<Txn> pendingTxns = PartitionState.txnsOf(pending);
            List<Map.Entry<String, Versioned>> committed = new ArrayList<>(ps.map.size());
            List<MemRange> ranges = ps.ranges.list;
            PartitionLayers.Layers layers = ps.layers.current();
            long now = ps.nowMillis();
            boolean expiring = false;
            for (Map.Entry<String, Object> e : ps.map.entrySet()) {
                Versioned v = committedView(e.getValue(), pendingTxns);
                // range deletes are applied here (the snapshot holds no ranges): committed ones hide at MAX_VALUE
                if (v != null && !ReadFilter.hidden(e.getKey(), v, Long.MAX_VALUE, now, ranges, layers,
                        ps.ranges.gates)) {
                    committed.add(Map.entry(e.getKey(), v));
                    expiring |= v.expiresAtMillis() != 0;
                }
            }
            out.writeInt(PartitionState.SNAPSHOT_MAGIC);
            out.writeInt(expiring ? PartitionState.SNAPSHOT_FORMAT_TTL : PartitionState.SNAPSHOT_FORMAT);
            out.writeLong(ps.appliedOffset);
            out.writeLong(ps.maxVersion);
            out.writeLong(committed.size());
            for (Map.Entry<String, Versioned> e : committed) {
                byte[] k = e.getKey().getBytes(StandardCharsets.UTF_8);
                out.writeInt(k.length);
                out.write(k);
                out.writeLong(e.getValue().version());
                if (expiring) {
                    out.writeLong(e.getValue().expiresAtMillis());
                }
                out.writeInt(e.getValue().value().length);
                out.write(e.getValue().value());
            }
            writeAtomicSections(ps, out, pending);
            out.flush();
            int crc = (int) checked.getChecksum().getValue();
            new DataOutputStream(bytes).writeInt(crc);
            return bytes.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The pending and decision sections (snapshot format 2, and a manifest's engine state). */
    static void writeAtomicSections(PartitionState ps, DataOutputStream out, List<Map.Entry<String, PartitionState.Unresolved>> pending)
            throws IOException {
        out.writeInt(pending.size());
        for (Map.Entry<String, PartitionState.Unresolved> e : pending) {
            out.writeUTF(e.getKey());
            out.writeUTF(e.getValue().coordinator().tree());
            out.writeInt(e.getValue().coordinator().partition());
            out.writeInt(e.getValue().mutations().size());
            for (WalRecord.Mutation m : e.getValue().mutations()) {
                out.writeByte(m.op());
                writeKey(out, m.key());
                if (m.op() == WalRecord.Mutation.PUT || m.op() == WalRecord.Mutation.PUT_TTL
                        || m.op() == WalRecord.Mutation.DELETE_RANGE) {
                    out.writeInt(m.value().length);
                    out.write(m.value());
                }
                if (m.op() == WalRecord.Mutation.PUT_TTL) {
                    out.writeLong(m.expiresAtMillis());
                }
            }
        }
        List<PartitionState.Decision> kept = new ArrayList<>();
        long now = System.currentTimeMillis();
        for (PartitionState.Decision d : ps.decisions.values()) {
            if (ps.atomics.forgettable(d, now)) {
                ps.decisions.remove(d.id);
                if (d.idempotencyKey != null) {
                    ps.decisionsByIdempotencyKey.remove(d.idempotencyKey, d);
                }
            } else {
                kept.add(d);
            }
        }
        out.writeInt(kept.size());
        for (PartitionState.Decision d : kept) {
            out.writeUTF(d.id);
            out.writeBoolean(d.commit);
            out.writeLong(d.version);
            out.writeLong(d.timeMillis);
            out.writeBoolean(d.idempotencyKey != null);
            if (d.idempotencyKey != null) {
                writeKey(out, d.idempotencyKey);
                out.writeLong(d.digest);
            }
            List<LogId> outstanding = List.copyOf(d.outstanding);
            out.writeInt(outstanding.size());
            for (LogId l : outstanding) {
                out.writeUTF(l.tree());
                out.writeInt(l.partition());
            }
        }
    }

    /** The newest value published and not in {@code pending}: what the checkpoint holds as committed. */
    private static Versioned committedView(Object o, Set<Txn> pending) {
        while (o instanceof PartitionState.TxnNode n) {
            if (n.txn.seq > 0 && !pending.contains(n.txn)) {
                return n.value == null ? null : new Versioned(n.value, n.txn.version, n.expiresAt);
            }
            o = n.prev;
        }
        return o instanceof Versioned v ? v : null;
    }

    private static void writeKey(DataOutputStream out, String key) throws IOException {
        byte[] k = key.getBytes(StandardCharsets.UTF_8);
        out.writeInt(k.length);
        out.write(k);
    }

    private static String readKey(PartitionState ps, DataInputStream in, long throughOffset) throws IOException {
        int kl = in.readInt();
        if (kl < 0 || kl > LatticeConfig.MAX_KEY_BYTES_LIMIT) {
            throw new CorruptLogException(ps.log, throughOffset, "checkpoint key length " + kl);
        }
        byte[] k = in.readNBytes(kl);
        if (k.length != kl) {
            throw new EOFException();
        }
        return new String(k, StandardCharsets.UTF_8);
    }

    private static byte[] readValue(PartitionState ps, DataInputStream in, long throughOffset) throws IOException {
        int vl = in.readInt();
        if (vl < 0) {
            throw new CorruptLogException(ps.log, throughOffset, "checkpoint value length " + vl);
        }
        byte[] v = in.readNBytes(vl);
        if (v.length != vl) {
            throw new EOFException();
        }
        return v;
    }

    /**
     * Loads a snapshot (format 1 or 2) into this (empty) state.
     *
     * @param budgetBytes the memory budget: loading stops once the estimated live data of all trees exceeds it
     * @throws CorruptLogException if the stream fails its checksum or cannot be decoded
     * @throws MemoryBudgetExceededException if the data does not fit the memory budget
     */
    static void load(PartitionState ps, long throughOffset, InputStream raw, long budgetBytes) {
        BufferedInputStream buffered = new BufferedInputStream(raw, 256 * 1024);
        CheckedInputStream checked = new CheckedInputStream(buffered, new CRC32C());
        DataInputStream in = new DataInputStream(checked);
        try {
            if (in.readInt() != PartitionState.SNAPSHOT_MAGIC) {
                throw new CorruptLogException(ps.log, throughOffset, "checkpoint has a wrong magic number");
            }
            int format = in.readInt();
            if (format != PartitionState.SNAPSHOT_FORMAT && format != PartitionState.SNAPSHOT_FORMAT_V1
                    && format != PartitionState.SNAPSHOT_FORMAT_TTL) {
                throw new CorruptLogException(ps.log, throughOffset, "checkpoint format " + format + " is unknown");
            }
            long through = in.readLong();
            if (through != throughOffset) {
                throw new CorruptLogException(ps.log, throughOffset, "checkpoint says through " + through);
            }
            long maxV = in.readLong();
            long count = in.readLong();
            for (long i = 0; i < count; i++) {
                String k = readKey(ps, in, throughOffset);
                long version = in.readLong();
                long expiresAt = format == PartitionState.SNAPSHOT_FORMAT_TTL ? in.readLong() : 0;
                ps.put(k, readValue(ps, in, throughOffset), version, expiresAt);
                if ((i & 1023) == 1023 && ps.memoryBudgetUsed.get() > budgetBytes) {
                    throw new MemoryBudgetExceededException("loading the checkpoint of " + ps.log + " (" + count
                            + " keys) stopped after " + (i + 1) + " keys: the live data estimate "
                            + ps.memoryBudgetUsed.get() + " bytes exceeds the memory budget of " + budgetBytes
                            + " bytes (LatticeConfig memoryBudgetBytes)");
                }
            }
            if (format >= 2) {
                readAtomicSections(ps, in, throughOffset);
            }
            int computed = (int) checked.getChecksum().getValue();
            int stored = new DataInputStream(buffered).readInt();
            if (computed != stored) {
                throw new CorruptLogException(ps.log, throughOffset, "checkpoint checksum mismatch");
            }
            if (buffered.read() != -1) {
                throw new CorruptLogException(ps.log, throughOffset, "checkpoint has trailing bytes");
            }
            ps.appliedOffset = through;
            ps.maxVersion = maxV;
            ps.legacyCheckpointLoaded = true;
        } catch (EOFException e) {
            throw new CorruptLogException(ps.log, throughOffset, "checkpoint is truncated", e);
        } catch (IOException e) {
            throw new CorruptLogException(ps.log, throughOffset, "checkpoint cannot be read: " + e.getMessage(), e);
        }
    }

    /** Reads the sections {@link #writeAtomicSections} wrote, into this state. */
    static void readAtomicSections(PartitionState ps, DataInputStream in, long throughOffset) throws IOException {
        int pending = in.readInt();
        for (int i = 0; i < pending; i++) {
            String id = in.readUTF();
            LogId coordinator = new LogId(in.readUTF(), in.readInt());
            int n = in.readInt();
            List<WalRecord.Mutation> ms = new ArrayList<>(Math.min(n, 4096));
            for (int j = 0; j < n; j++) {
                byte op = in.readByte();
                String k = readKey(ps, in, throughOffset);
                byte[] kb = k.getBytes(StandardCharsets.UTF_8);
                if (op == WalRecord.Mutation.PUT) {
                    ms.add(WalRecord.Mutation.put(k, kb, readValue(ps, in, throughOffset)));
                } else if (op == WalRecord.Mutation.DELETE) {
                    ms.add(WalRecord.Mutation.delete(k, kb));
                } else if (op == WalRecord.Mutation.PUT_TTL) {
                    byte[] v = readValue(ps, in, throughOffset);
                    ms.add(WalRecord.Mutation.putTtl(k, kb, v, in.readLong()));
                } else if (op == WalRecord.Mutation.DELETE_RANGE) {
                    String to = new String(readValue(ps, in, throughOffset), StandardCharsets.UTF_8);
                    ms.add(WalRecord.Mutation.deleteRange(k, kb, to));
                } else {
                    throw new CorruptLogException(ps.log, throughOffset, "checkpoint pending op " + op);
                }
            }
            Txn t = ps.replayTxns.apply(id);
            ps.insert(ms, t);
            ps.unresolved.put(id, new PartitionState.Unresolved(t, ms, coordinator));
        }
        int decided = in.readInt();
        for (int i = 0; i < decided; i++) {
            String id = in.readUTF();
            boolean commit = in.readBoolean();
            long version = in.readLong();
            long time = in.readLong();
            String idem = null;
            long digest = 0;
            if (in.readBoolean()) {
                idem = readKey(ps, in, throughOffset);
                digest = in.readLong();
            }
            int n = in.readInt();
            List<LogId> parts = new ArrayList<>(Math.min(n, 4096));
            for (int j = 0; j < n; j++) {
                parts.add(new LogId(in.readUTF(), in.readInt()));
            }
            ps.addDecision(new PartitionState.Decision(id, commit, version, time, idem, digest, parts));
        }
    }
}
