package dev.lattice.pekko.persistence;

import com.typesafe.config.Config;
import org.apache.pekko.persistence.AtomicWrite;
import org.apache.pekko.persistence.PersistentRepr;
import org.apache.pekko.persistence.journal.Tagged;
import org.apache.pekko.persistence.journal.japi.AsyncWriteJournal;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import scala.concurrent.Future;
import scala.jdk.javaapi.FutureConverters;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.function.Consumer;

/**
 * Pekko Persistence journal plugin ({@code AsyncWriteJournal}) on a Lattice tree. Configure it with a plugin block
 * whose {@code class} is this class (the default block is {@code lattice.persistence.journal}; see
 * {@code reference.conf}).
 *
 * <h2>Semantics</h2>
 * <ul>
 *   <li>Each Pekko {@code AtomicWrite} (all events of one {@code persistAll}) is stored all or nothing, in one Lattice
 *       atomic write together with the persistence id's highest sequence number.</li>
 *   <li>An event that cannot be serialized (or is too large for the provider) rejects only its own
 *       {@code AtomicWrite}; the others of the call are written. A write refused by the engine with nothing written
 *       (precondition, saturation, ownership lost to another process, provider failure before the commit point) is
 *       rejected the same way. The returned future fails only when the outcome is unknown
 *       ({@link dev.lattice.engine.WriteOutcomeUnknownException} or an unexpected error).</li>
 *   <li>Writes and deletions run in call order on one writer thread; replays run on reader threads, reading
 *       {@code replay-batch-size} events at a time.</li>
 *   <li>The highest sequence number never goes back, also after deleting every event. Tags ({@link Tagged}) are
 *       accepted and dropped: this plugin offers no event queries.</li>
 * </ul>
 *
 * <p>Pekko creates and drives the instance (one actor); not for direct use.
 */
public final class LatticeJournal extends AsyncWriteJournal {

    private final Serialization serialization;
    private final PayloadCodec codec;
    private final JournalStore store;
    private final ExecutorService writer;
    private final ExecutorService readers;

    /**
     * Called by Pekko with the plugin's configuration block.
     *
     * @param config the plugin block ({@code connection}, {@code tree}, {@code partitions}, ...)
     * @throws com.typesafe.config.ConfigException if a setting is missing or malformed
     * @throws IllegalArgumentException if a setting is out of range
     * @throws RuntimeException if Lattice cannot be opened (the journal actor then fails to start)
     */
    public LatticeJournal(Config config) {
        PluginSettings s = PluginSettings.fromConfig(config);
        this.serialization = SerializationExtension.get(context().system());
        this.codec = new PayloadCodec((org.apache.pekko.actor.ExtendedActorSystem) context().system());
        var lattice = LatticeConnections.get(context().system()).lattice(s.connection());
        var tree = s.openTree(lattice);
        this.store = new JournalStore(tree, s.replayBatchSize(), s.maxWriteKeys(), s.maxWriteBytes());
        String name = "lattice-journal-" + s.tree();
        this.writer = PluginThreads.pool(name + "-writer", 1);
        this.readers = PluginThreads.pool(name + "-reader", 2);
    }

    /**
     * Serializes and stores the writes (see the class description).
     *
     * @param messages the writes, each of one persistence id
     * @return per write, empty when stored or the rejection; fails when the outcome is unknown
     */
    @Override
    public Future<Iterable<Optional<Exception>>> doAsyncWriteMessages(Iterable<AtomicWrite> messages) {
        List<Optional<Exception>> rejections = new ArrayList<>();
        List<JournalStore.Batch> batches = new ArrayList<>();
        for (AtomicWrite aw : messages) {
            try {
                batches.add(batch(aw));
                rejections.add(null);
            } catch (Exception e) {
                rejections.add(Optional.of(e));
            }
        }
        return run(writer, () -> {
            List<Optional<Exception>> written = batches.isEmpty() ? List.of() : store.write(batches);
            List<Optional<Exception>> out = new ArrayList<>(rejections.size());
            int w = 0;
            for (Optional<Exception> r : rejections) {
                out.add(r != null ? r : written.get(w++));
            }
            return out;
        });
    }

    private JournalStore.Batch batch(AtomicWrite aw) throws Exception {
        var payload = aw.payload();
        long[] seqs = new long[payload.size()];
        List<byte[]> events = new ArrayList<>(payload.size());
        var it = payload.iterator();
        int i = 0;
        while (it.hasNext()) {
            PersistentRepr p = it.next();
            if (p.payload() instanceof Tagged t) {
                p = p.withPayload(t.payload());
            }
            seqs[i++] = p.sequenceNr();
            events.add(codec.toBinary(p));
        }
        return new JournalStore.Batch(aw.persistenceId(), seqs, events);
    }

    /**
     * Deletes events up to a sequence number (see {@link JournalStore}: a deleted-to marker, then key deletes in
     * bounded batches).
     *
     * @param persistenceId the persistence id
     * @param toSequenceNr the highest sequence number to delete, inclusive
     * @return completes when the marker is durable and the keys are removed
     */
    @Override
    public Future<Void> doAsyncDeleteMessagesTo(String persistenceId, long toSequenceNr) {
        return run(writer, () -> {
            store.deleteTo(persistenceId, toSequenceNr);
            return null;
        });
    }

    /**
     * Replays events of {@code [fromSequenceNr, toSequenceNr]} in bounded batches.
     *
     * @param persistenceId the persistence id
     * @param fromSequenceNr lowest, inclusive
     * @param toSequenceNr highest, inclusive
     * @param max the most events to replay
     * @param replayCallback called per event, in order, from one reader thread
     * @return completes after the last event was handed to the callback
     */
    @Override
    public Future<Void> doAsyncReplayMessages(String persistenceId, long fromSequenceNr, long toSequenceNr, long max,
                                              Consumer<PersistentRepr> replayCallback) {
        return run(readers, () -> {
            store.replay(persistenceId, fromSequenceNr, toSequenceNr, max, (seq, bytes) ->
                    replayCallback.accept(serialization.deserialize(bytes, PersistentRepr.class).get()));
            return null;
        });
    }

    /**
     * @param persistenceId the persistence id
     * @param fromSequenceNr ignored (the highest is kept in one key)
     * @return the highest sequence number ever written, 0 if none
     */
    @Override
    public Future<Long> doAsyncReadHighestSequenceNr(String persistenceId, long fromSequenceNr) {
        return run(readers, () -> store.highest(persistenceId));
    }

    /**
     * Runs a blocking task on a plugin thread.
     *
     * @param ex the executor
     * @param task the task
     * @param <T> its result type
     * @return completes with the task's result or exactly the exception it threw
     */
    static <T> Future<T> run(ExecutorService ex, java.util.function.Supplier<T> task) {
        CompletableFuture<T> f = new CompletableFuture<>();
        try {
            ex.execute(() -> {
                try {
                    f.complete(task.get());
                } catch (Throwable t) {
                    f.completeExceptionally(t);
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            f.completeExceptionally(new IllegalStateException("the plugin is stopped", e));
        }
        return FutureConverters.asScala(f);
    }

    /** Stops the plugin's threads (the shared Lattice stays open until the actor system terminates). */
    @Override
    public void postStop() {
        writer.shutdown();
        readers.shutdown();
    }
}
