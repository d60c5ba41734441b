package dev.lattice.provider.dynamodb;

import dev.lattice.provider.dynamodb.CheckpointCatalog.Entry;
import dev.lattice.spi.CheckpointInfo;
import dev.lattice.spi.CheckpointStore;
import dev.lattice.spi.CheckpointTooLargeException;
import dev.lattice.spi.CorruptLogException;
import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.OffsetConflictException;
import dev.lattice.spi.ProviderUnavailableException;
import dev.lattice.spi.WalStorageException;
import dev.lattice.spi.support.SpiChecks;
import dev.lattice.spi.support.VerifyingChunkStream;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.QueryResponse;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.zip.CRC32C;

/**
 * Checkpoints of the DynamoDB heads. A checkpoint's bytes go to chunk items of at most
 * {@value #CHUNK_BYTES} bytes in the log's checkpoint partition ({@code <log>/c}), under a random generation
 * (sort key {@code generation * 2^20 + index}); each chunk carries a CRC32C. Publishing is one conditional update of
 * the head's catalog (condition on epoch and version), so a reader sees the previous checkpoint or the new one,
 * never a part. Before writing, the generation is recorded as pending in the head, so the chunks of a publish that
 * dies half-way are found and deleted by the next {@code reconcile}; chunks of replaced or deleted checkpoints are
 * recorded as garbage until deleted.
 *
 * <p>Largest checkpoint: {@link DynamoDbWalStorageProvider#LIMITS} ({@code maxCheckpointBytes}, 64 MiB); at most
 * {@value CheckpointCatalog#MAX_ENTRIES} checkpoints per log at once ({@code deleteBefore} makes room).
 *
 * <p>Thread-safe; shares its provider's life cycle.
 */
final class DynamoDbCheckpointStore implements CheckpointStore {

    /** Data bytes per checkpoint chunk item. */
    static final int CHUNK_BYTES = DynamoItemSize.MAX_ITEM_BYTES - 1024;
    private static final int MAX_CAS_ATTEMPTS = 16;
    private static final String DATA = "d";

    private final Heads heads;

    /** @param heads the head access shared by the protocol parts */
    DynamoDbCheckpointStore(Heads heads) {
        this.heads = heads;
    }

    private static long sortKey(long generation, int index) {
        return (generation << Layout.CHECKPOINT_INDEX_BITS) | index;
    }

    @Override
    public CheckpointInfo publish(LogId log, Fence fence, long throughOffset, int formatVersion, InputStream data) {
        SpiChecks.publish(log, fence, throughOffset, formatVersion, data);
        heads.ensureOpen();
        DynamoCalls calls = heads.calls();
        LogSlot slot = heads.slot(log);
        Head h = heads.readHead(slot);
        Heads.checkFence(log, h, fence);
        checkThrough(log, h, throughOffset);
        long generation = ThreadLocalRandom.current().nextLong(1, 1L << 40);
        Map<String, AttributeValue> pending = calls.update(log, Heads.headKey(slot),
                "ADD #pg :g", "#e = :e", Map.of("#pg", Layout.PENDING_GENERATIONS, "#e", Layout.EPOCH),
                Map.of(":g", numberSet(List.of(generation)), ":e", Layout.n(fence.epoch())), ReturnValue.NONE);
        if (pending == null) {
            Heads.checkFence(log, heads.readHead(slot), fence);
            throw new ProviderUnavailableException(log, "the head refused the checkpoint's pending mark; retry", null);
        }
        String cpk = heads.layout().checkpointKey(log);
        long limit = DynamoDbWalStorageProvider.LIMITS.maxCheckpointBytes();
        long size = 0;
        int chunks = 0;
        try {
            byte[] buf = new byte[CHUNK_BYTES];
            while (true) {
                int n;
                try {
                    n = data.readNBytes(buf, 0, buf.length);
                } catch (IOException e) {
                    throw new WalStorageException(log, "reading the checkpoint stream failed; nothing was published",
                            e);
                }
                if (n == 0) {
                    break;
                }
                size += n;
                if (size > limit) {
                    throw new CheckpointTooLargeException(log, limit);
                }
                if (chunks >= 1 << Layout.CHECKPOINT_INDEX_BITS) {
                    throw new CheckpointTooLargeException(log, limit);
                }
                putChunk(log, cpk, generation, chunks, Arrays.copyOf(buf, n));
                chunks++;
                if (n < buf.length) {
                    break;
                }
            }
        } catch (RuntimeException e) {
            discard(log, slot, cpk, generation, chunks, e);
            throw e;
        }
        CheckpointInfo info = new CheckpointInfo(throughOffset, formatVersion, size, fence.epoch());
        Entry entry = new Entry(info, generation, chunks);
        for (int attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
            if (attempt > 0) {
                h = heads.readHead(slot);
                Heads.checkFence(log, h, fence);
                try {
                    checkThrough(log, h, throughOffset);
                } catch (OffsetConflictException e) {
                    discard(log, slot, cpk, generation, chunks, e);
                    throw e;
                }
            }
            List<Entry> replaced = new ArrayList<>();
            CheckpointCatalog catalog = h.checkpoints().with(entry, replaced);
            if (catalog.entries().size() > CheckpointCatalog.MAX_ENTRIES) {
                WalStorageException e = new WalStorageException(log, "the log already keeps "
                        + CheckpointCatalog.MAX_ENTRIES + " checkpoints, the provider's limit; deleteBefore first");
                discard(log, slot, cpk, generation, chunks, e);
                throw e;
            }
            Map<String, String> names = new HashMap<>();
            names.put("#ck", Layout.CHECKPOINTS);
            names.put("#v", Layout.VERSION);
            names.put("#e", Layout.EPOCH);
            names.put("#pg", Layout.PENDING_GENERATIONS);
            Map<String, AttributeValue> values = new HashMap<>();
            values.put(":ck", Layout.b(catalog.encode()));
            values.put(":v", Layout.n(h.version()));
            values.put(":nv", Layout.n(h.version() + 1));
            values.put(":e", Layout.n(fence.epoch()));
            values.put(":g", numberSet(List.of(generation)));
            String update = "SET #ck = :ck, #v = :nv DELETE #pg :g";
            List<Long> old = new ArrayList<>();
            for (Entry r : replaced) {
                old.add(r.generation());
            }
            if (!old.isEmpty()) {
                names.put("#gg", Layout.GARBAGE_GENERATIONS);
                values.put(":old", numberSet(old));
                update += " ADD #gg :old";
            }
            Map<String, AttributeValue> done;
            synchronized (slot) {
                try {
                    done = calls.update(log, Heads.headKey(slot), update, "#e = :e AND #v = :v",
                            names, values, ReturnValue.NONE);
                } catch (RuntimeException e) {
                    slot.head = null;
                    throw e;
                }
                if (done != null) {
                    slot.install(withCatalog(h, catalog));
                }
            }
            if (done != null) {
                deleteCheckpoints(log, slot, cpk, replaced);
                return info;
            }
        }
        throw new ProviderUnavailableException(log, "the head changed under " + MAX_CAS_ATTEMPTS
                + " checkpoint publish attempts in a row; retry", null);
    }

    private static Head withCatalog(Head h, CheckpointCatalog catalog) {
        return new Head(h.epoch(), h.version() + 1, h.tail(), h.watermark(), h.entries(), h.payloadBytes(),
                h.chunkBytes(), h.segments(), catalog, h.pendingGenerations(), h.garbageGenerations(), h.registered(),
                h.commits(), h.trims());
    }

    private static void checkThrough(LogId log, Head h, long throughOffset) {
        if (throughOffset > h.tail()) {
            throw new OffsetConflictException(log, "checkpoint through " + throughOffset
                    + " is above the committed tail " + h.tail());
        }
        Optional<Entry> latest = h.checkpoints().latest();
        if (latest.isPresent() && throughOffset < latest.get().info().throughOffset()) {
            throw new OffsetConflictException(log, "checkpoint through " + throughOffset
                    + " is below the latest checkpoint's " + latest.get().info().throughOffset());
        }
    }

    private void putChunk(LogId log, String cpk, long generation, int index, byte[] bytes) {
        Map<String, AttributeValue> item = new HashMap<>();
        long sk = sortKey(generation, index);
        item.put(Layout.PK, Layout.s(cpk));
        item.put(Layout.SK, Layout.n(sk));
        item.put(DATA, Layout.b(bytes));
        item.put(Layout.CRC, Layout.n(crc(sk, bytes)));
        if (DynamoItemSize.of(item) > DynamoItemSize.MAX_ITEM_BYTES) {
            throw new IllegalStateException("checkpoint chunk item exceeds " + DynamoItemSize.MAX_ITEM_BYTES
                    + " bytes");
        }
        heads.calls().put(log, item, null, null, null);
    }

    private static long crc(long sortKey, byte[] bytes) {
        CRC32C crc = new CRC32C();
        crc.update(ByteBuffer.allocate(8).putLong(sortKey).array());
        crc.update(bytes);
        return crc.getValue();
    }

    /** Best effort after a failed publish: delete the chunks written and the pending mark. */
    private void discard(LogId log, LogSlot slot, String cpk, long generation, int chunks, Throwable failure) {
        try {
            List<Map<String, AttributeValue>> keys = new ArrayList<>();
            for (int i = 0; i < chunks; i++) {
                keys.add(Layout.key(cpk, sortKey(generation, i)));
            }
            heads.calls().batchDelete(log, keys);
            heads.calls().update(log, Heads.headKey(slot), "DELETE #pg :g", null,
                    Map.of("#pg", Layout.PENDING_GENERATIONS), Map.of(":g", numberSet(List.of(generation))),
                    ReturnValue.NONE);
        } catch (RuntimeException cleanup) {
            failure.addSuppressed(cleanup);
        }
    }

    private void deleteCheckpoints(LogId log, LogSlot slot, String cpk, Collection<Entry> entries) {
        if (entries.isEmpty()) {
            return;
        }
        List<Map<String, AttributeValue>> keys = new ArrayList<>();
        List<Long> generations = new ArrayList<>();
        for (Entry e : entries) {
            generations.add(e.generation());
            for (int i = 0; i < e.chunks(); i++) {
                keys.add(Layout.key(cpk, sortKey(e.generation(), i)));
            }
        }
        heads.calls().batchDelete(log, keys);
        heads.calls().update(log, Heads.headKey(slot), "DELETE #gg :g", null,
                Map.of("#gg", Layout.GARBAGE_GENERATIONS), Map.of(":g", numberSet(generations)), ReturnValue.NONE);
    }

    static AttributeValue numberSet(Collection<Long> values) {
        List<String> out = new ArrayList<>(values.size());
        for (long v : values) {
            out.add(Long.toString(v));
        }
        return AttributeValue.fromNs(out);
    }

    /**
     * Deletes the chunks of pending and garbage generations that are not in the catalog (a publish that died
     * half-way, a replaced or deleted checkpoint whose deletion was interrupted). Called by reconcile.
     *
     * @return chunk items deleted
     */
    long collectGarbage(LogId log, LogSlot slot, Head h) {
        Set<Long> gens = new HashSet<>(h.pendingGenerations());
        gens.addAll(h.garbageGenerations());
        gens.removeAll(h.checkpoints().generations());
        if (gens.isEmpty()) {
            return 0;
        }
        String cpk = heads.layout().checkpointKey(log);
        long deleted = 0;
        for (long g : gens) {
            deleted += heads.calls().deleteAllBetween(log, cpk, sortKey(g, 0),
                    sortKey(g, 0) + (1L << Layout.CHECKPOINT_INDEX_BITS) - 1);
        }
        heads.calls().update(log, Heads.headKey(slot), "DELETE #pg :g, #gg :g", null,
                Map.of("#pg", Layout.PENDING_GENERATIONS, "#gg", Layout.GARBAGE_GENERATIONS),
                Map.of(":g", numberSet(gens)), ReturnValue.NONE);
        return deleted;
    }

    @Override
    public Optional<CheckpointInfo> latest(LogId log) {
        Objects.requireNonNull(log, "log");
        heads.ensureOpen();
        Head h = heads.readHead(heads.slot(log));
        if (h == null) {
            return Optional.empty();
        }
        return h.checkpoints().latest().map(Entry::info);
    }

    @Override
    public InputStream open(LogId log, CheckpointInfo info) {
        Objects.requireNonNull(log, "log");
        Objects.requireNonNull(info, "info");
        heads.ensureOpen();
        Head h = heads.readHead(heads.slot(log));
        Optional<Entry> entry = h == null ? Optional.empty() : h.checkpoints().find(info);
        if (entry.isEmpty()) {
            throw new WalStorageException(log, "checkpoint through " + info.throughOffset() + " (epoch "
                    + info.epoch() + ") no longer exists");
        }
        return VerifyingChunkStream.checkpoint(log, entry.get().info(), entry.get().chunks(),
                new Chunks(log, heads.layout().checkpointKey(log), entry.get()));
    }

    @Override
    public void deleteBefore(LogId log, long throughOffsetExclusive) {
        Objects.requireNonNull(log, "log");
        heads.ensureOpen();
        LogSlot slot = heads.slot(log);
        String cpk = heads.layout().checkpointKey(log);
        for (int attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
            Head h = heads.readHead(slot);
            if (h == null) {
                return;
            }
            List<Entry> removed = new ArrayList<>();
            CheckpointCatalog catalog = h.checkpoints().without(throughOffsetExclusive, removed);
            if (removed.isEmpty()) {
                return;
            }
            List<Long> gens = new ArrayList<>();
            for (Entry e : removed) {
                gens.add(e.generation());
            }
            Map<String, AttributeValue> done;
            synchronized (slot) {
                try {
                    done = heads.calls().update(log, Heads.headKey(slot),
                            "SET #ck = :ck, #v = :nv ADD #gg :g", "#v = :v",
                            Map.of("#ck", Layout.CHECKPOINTS, "#v", Layout.VERSION, "#gg", Layout.GARBAGE_GENERATIONS),
                            Map.of(":ck", Layout.b(catalog.encode()), ":v", Layout.n(h.version()),
                                    ":nv", Layout.n(h.version() + 1), ":g", numberSet(gens)),
                            ReturnValue.NONE);
                } catch (RuntimeException e) {
                    slot.head = null;
                    throw e;
                }
                if (done != null) {
                    slot.install(withCatalog(h, catalog));
                }
            }
            if (done != null) {
                deleteCheckpoints(log, slot, cpk, removed);
                return;
            }
        }
        throw new ProviderUnavailableException(log, "the head changed under " + MAX_CAS_ATTEMPTS
                + " deleteBefore attempts in a row; retry", null);
    }

    /**
     * Fetches a checkpoint's chunks in order for {@link VerifyingChunkStream}, a {@code Query} page at a time,
     * checking each chunk's sort key (a missing chunk was deleted meanwhile) and its CRC32C, which covers the sort key
     * and the bytes. Not thread-safe.
     */
    private final class Chunks implements VerifyingChunkStream.ChunkSource {
        private final LogId log;
        private final String cpk;
        private final Entry entry;
        private final Deque<Map<String, AttributeValue>> page = new ArrayDeque<>();
        private Map<String, AttributeValue> startKey;
        private boolean queried;

        Chunks(LogId log, String cpk, Entry entry) {
            this.log = log;
            this.cpk = cpk;
            this.entry = entry;
        }

        @Override
        public byte[] chunk(int index) {
            while (page.isEmpty()) {
                if (queried && startKey == null) {
                    throw lost(index);
                }
                heads.ensureOpen();
                long base = sortKey(entry.generation(), 0);
                QueryResponse r = heads.calls().query(log, Layout.rangeQuery(cpk, base, base + entry.chunks() - 1,
                        startKey, false, 0));
                queried = true;
                page.addAll(r.items());
                startKey = r.hasLastEvaluatedKey() && !r.lastEvaluatedKey().isEmpty() ? r.lastEvaluatedKey() : null;
            }
            Map<String, AttributeValue> item = page.poll();
            long sk = Layout.num(item, Layout.SK);
            if (sk != sortKey(entry.generation(), index)) {
                throw lost(index);
            }
            byte[] bytes = Layout.bin(item, DATA);
            if (crc(sk, bytes) != Layout.num(item, Layout.CRC)) {
                throw new CorruptLogException(log, entry.info().throughOffset(), "checkpoint chunk " + index
                        + " fails its CRC32C");
            }
            return bytes;
        }

        private WalStorageException lost(int index) {
            return new WalStorageException(log, "checkpoint through " + entry.info().throughOffset()
                    + " lost chunk " + index + " of " + entry.chunks() + " (deleted meanwhile?)");
        }
    }
}
