package dev.lattice.pekko.persistence;

import com.typesafe.config.Config;
import dev.lattice.engine.AtomicWrite;
import dev.lattice.engine.ScanCursor;
import dev.lattice.engine.Tree;
import dev.lattice.engine.TreeEntry;
import org.apache.pekko.persistence.SelectedSnapshot;
import org.apache.pekko.persistence.SnapshotMetadata;
import org.apache.pekko.persistence.SnapshotSelectionCriteria;
import org.apache.pekko.persistence.snapshot.japi.SnapshotStore;
import scala.Option;
import scala.concurrent.Future;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;

/**
 * Pekko Persistence snapshot store plugin on a Lattice tree: one key per persistence id and sequence number (a
 * second save with the same sequence number replaces the first), the value holding the timestamp, the snapshot and
 * the optional snapshot metadata, each written with Pekko serialization. Loads scan the id's keys newest first in
 * bounded batches and return the newest snapshot matching the criteria; a snapshot that cannot be read fails the
 * load. A snapshot must fit one value of the tree ({@link Tree#maxValueBytes()}, about the provider's entry size);
 * a larger one fails its save.
 *
 * <p>Saves and deletions run in call order on one thread; loads on reader threads. Pekko creates and drives the
 * instance (one actor); not for direct use.
 */
public final class LatticeSnapshotStore extends SnapshotStore {

    private static final byte FORMAT = 1;

    private final PayloadCodec codec;
    private final Tree tree;
    private final int batchSize;
    private final int maxWriteKeys;
    private final ExecutorService writer;
    private final ExecutorService readers;

    /**
     * Called by Pekko with the plugin's configuration block.
     *
     * @param config the plugin block ({@code connection}, {@code tree}, ...)
     * @throws com.typesafe.config.ConfigException if a setting is missing or malformed
     * @throws IllegalArgumentException if a setting is out of range
     * @throws RuntimeException if Lattice cannot be opened
     */
    public LatticeSnapshotStore(Config config) {
        PluginSettings s = PluginSettings.fromConfig(config);
        this.codec = new PayloadCodec((org.apache.pekko.actor.ExtendedActorSystem) context().system());
        var lattice = LatticeConnections.get(context().system()).lattice(s.connection());
        this.tree = s.openTree(lattice);
        this.batchSize = s.replayBatchSize();
        this.maxWriteKeys = s.maxWriteKeys();
        String name = "lattice-snapshots-" + s.tree();
        this.writer = PluginThreads.pool(name + "-writer", 1);
        this.readers = PluginThreads.pool(name + "-reader", 2);
    }

    /**
     * @param persistenceId the persistence id
     * @param criteria the selection
     * @return the newest matching snapshot, or empty
     */
    @Override
    public Future<Optional<SelectedSnapshot>> doLoadAsync(String persistenceId, SnapshotSelectionCriteria criteria) {
        return LatticeJournal.run(readers, () -> {
            List<TreeEntry> page;
            String upper = upperKey(persistenceId, criteria.maxSequenceNr());
            String lower = Keys.snapshot(persistenceId, Math.max(0, criteria.minSequenceNr()));
            do {
                page = page(lower, upper, true);
                for (TreeEntry e : page) {
                    long ts = timestamp(e.value());
                    if (ts <= criteria.maxTimestamp() && ts >= criteria.minTimestamp()) {
                        return Optional.of(decode(persistenceId, Keys.seqOf(e.key()), e.value()));
                    }
                }
                if (!page.isEmpty()) {
                    upper = page.get(page.size() - 1).key();
                }
            } while (page.size() == batchSize);
            return Optional.empty();
        });
    }

    /**
     * @param metadata the snapshot's persistence id, sequence number, timestamp and optional metadata
     * @param snapshot the snapshot
     * @return completes once durable; fails if it cannot be serialized or is too large
     */
    @Override
    public Future<Void> doSaveAsync(SnapshotMetadata metadata, Object snapshot) {
        return LatticeJournal.run(writer, () -> {
            tree.put(Keys.snapshot(metadata.persistenceId(), metadata.sequenceNr()), encode(metadata, snapshot));
            return null;
        });
    }

    /**
     * Deletes the snapshot of the metadata's sequence number (if its timestamp is 0 or equals the stored one).
     *
     * @param metadata the snapshot's identity
     * @return completes once deleted
     */
    @Override
    public Future<Void> doDeleteAsync(SnapshotMetadata metadata) {
        return LatticeJournal.run(writer, () -> {
            String key = Keys.snapshot(metadata.persistenceId(), metadata.sequenceNr());
            Optional<byte[]> v = tree.get(key);
            if (v.isPresent() && (metadata.timestamp() == 0 || timestamp(v.get()) == metadata.timestamp())) {
                tree.delete(key);
            }
            return null;
        });
    }

    /**
     * Deletes every snapshot of the id matching the criteria, in bounded atomic batches.
     *
     * @param persistenceId the persistence id
     * @param criteria the selection
     * @return completes once deleted
     */
    @Override
    public Future<Void> doDeleteAsync(String persistenceId, SnapshotSelectionCriteria criteria) {
        return LatticeJournal.run(writer, () -> {
            String lower = Keys.snapshot(persistenceId, Math.max(0, criteria.minSequenceNr()));
            String upper = upperKey(persistenceId, criteria.maxSequenceNr());
            List<TreeEntry> page;
            do {
                page = page(lower, upper, false);
                List<String> doomed = new ArrayList<>();
                for (TreeEntry e : page) {
                    long ts = timestamp(e.value());
                    if (ts <= criteria.maxTimestamp() && ts >= criteria.minTimestamp()) {
                        doomed.add(e.key());
                    }
                }
                for (int i = 0; i < doomed.size(); i += maxWriteKeys) {
                    AtomicWrite w = tree.atomic();
                    doomed.subList(i, Math.min(doomed.size(), i + maxWriteKeys)).forEach(w::delete);
                    w.commit();
                }
                if (!page.isEmpty()) {
                    lower = page.get(page.size() - 1).key() + "\u0000";
                }
            } while (page.size() == batchSize);
            return null;
        });
    }

    private static String upperKey(String persistenceId, long maxSeq) {
        return maxSeq == Long.MAX_VALUE ? Keys.pid('s', persistenceId) + ";" : Keys.snapshot(persistenceId, maxSeq + 1);
    }

    private List<TreeEntry> page(String lower, String upper, boolean reverse) {
        List<TreeEntry> page = new ArrayList<>();
        try (ScanCursor c = tree.scan(lower, upper, reverse)) {
            while (page.size() < batchSize && c.hasNext()) {
                page.add(c.next());
            }
        }
        return page;
    }

    private byte[] encode(SnapshotMetadata md, Object snapshot) {
        try {
            ByteArrayOutputStream buf = new ByteArrayOutputStream();
            DataOutputStream out = new DataOutputStream(buf);
            out.writeByte(FORMAT);
            out.writeLong(md.timestamp());
            codec.write(out, snapshot);
            Option<Object> meta = md.metadata();
            out.writeBoolean(meta.isDefined());
            if (meta.isDefined()) {
                codec.write(out, meta.get());
            }
            out.flush();
            return buf.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static long timestamp(byte[] value) {
        if (value.length < 9 || value[0] != FORMAT) {
            throw new IllegalStateException("corrupt snapshot record (" + value.length + " bytes, format "
                    + (value.length > 0 ? value[0] : -1) + ")");
        }
        return ByteBuffer.wrap(value, 1, 8).getLong();
    }

    private SelectedSnapshot decode(String persistenceId, long seq, byte[] value) {
        try {
            DataInputStream in = new DataInputStream(new ByteArrayInputStream(value));
            in.readByte();
            long ts = in.readLong();
            Object snapshot = codec.read(in);
            SnapshotMetadata md = SnapshotMetadata.apply(persistenceId, seq, ts);
            if (in.readBoolean()) {
                md = md.withMetadata(codec.read(in));
            }
            return SelectedSnapshot.create(md, snapshot);
        } catch (IOException e) {
            throw new UncheckedIOException("corrupt snapshot " + persistenceId + "@" + seq, e);
        }
    }

    /** Stops the plugin's threads (the shared Lattice stays open until the actor system terminates). */
    @Override
    public void postStop() {
        writer.shutdown();
        readers.shutdown();
    }
}
