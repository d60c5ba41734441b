package dev.lattice.pekko.persistence;

import dev.lattice.engine.Tree;
import dev.lattice.engine.Versioned;
import org.apache.pekko.Done;
import org.apache.pekko.persistence.state.exception.DeleteRevisionException;
import org.apache.pekko.persistence.state.javadsl.DurableStateUpdateStore;
import org.apache.pekko.persistence.state.javadsl.GetObjectResult;
import org.apache.pekko.actor.ExtendedActorSystem;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.function.Supplier;

/**
 * Durable state store (Java API) on a Lattice tree: one key per persistence id holding the revision, the tag and
 * the object (Pekko serialization).
 *
 * <h2>Revisions (optimistic concurrency)</h2>
 * <ul>
 *   <li>{@link #upsertObject} with revision {@code r} succeeds only if the stored revision is {@code r - 1} (absent
 *       counts as 0), decided by a conditional write on the key's Lattice version, so two writers racing for the same
 *       revision cannot both win; otherwise it fails with {@link RevisionMismatchException} and writes nothing.</li>
 *   <li>{@link #deleteObject(String, long)} with revision {@code r} succeeds if the stored revision is {@code r - 1}
 *       (what Pekko's {@code DurableStateBehavior} sends) or {@code r}; it leaves an empty object at revision
 *       {@code r}, so {@link #getObject} returns no value with revision {@code r} and the next upsert is
 *       {@code r + 1}. Otherwise it fails with {@link DeleteRevisionException}.</li>
 *   <li>{@link #deleteObject(String)} (deprecated in Pekko) removes the key; the revision starts again at 0.</li>
 * </ul>
 * Tags are stored but not queryable (no durable state queries).
 *
 * <p>Thread-safe. Blocking Lattice calls run on the store's own threads; futures complete there.
 */
public final class LatticeDurableStateStore implements DurableStateUpdateStore<Object> {

    private static final byte FORMAT = 1;

    private final Tree tree;
    private final PayloadCodec codec;
    private final ExecutorService threads;

    /**
     * @param tree the tree holding the objects
     * @param system the actor system (its serialization writes the objects)
     * @param threads the executor running the Lattice calls (owned by the caller)
     * @throws NullPointerException if an argument is null
     */
    public LatticeDurableStateStore(Tree tree, ExtendedActorSystem system, ExecutorService threads) {
        this.tree = Objects.requireNonNull(tree, "tree");
        this.codec = new PayloadCodec(Objects.requireNonNull(system, "system"));
        this.threads = Objects.requireNonNull(threads, "threads");
    }

    /**
     * @param persistenceId the persistence id
     * @return the object and its revision; no value with revision 0 when absent, no value with the delete's revision
     *     after {@link #deleteObject(String, long)}
     */
    @Override
    public CompletionStage<GetObjectResult<Object>> getObject(String persistenceId) {
        return run(() -> {
            Optional<byte[]> v = tree.get(Keys.state(persistenceId));
            if (v.isEmpty()) {
                return new GetObjectResult<>(Optional.empty(), 0L);
            }
            return decode(persistenceId, v.get());
        });
    }

    /**
     * Writes revision {@code revision} of the object (see the class description).
     *
     * @param persistenceId the persistence id
     * @param revision the new revision, {@code >= 1}
     * @param value the object (Pekko serialization)
     * @param tag a tag, stored but not queryable (may be empty)
     * @return completes when durable; fails with {@link RevisionMismatchException} if the stored revision is not
     *     {@code revision - 1}, {@link IllegalArgumentException} if {@code revision < 1} or the object is too large,
     *     or the engine's exception if the write failed
     */
    @Override
    public CompletionStage<Done> upsertObject(String persistenceId, long revision, Object value, String tag) {
        return run(() -> {
            if (revision < 1) {
                throw new IllegalArgumentException("revision must be >= 1, got " + revision);
            }
            byte[] bytes = encode(revision, value, tag == null ? "" : tag);
            write(persistenceId, revision, bytes, false);
            return Done.getInstance();
        });
    }

    /**
     * Removes the object and its revision (deprecated in Pekko; prefer {@link #deleteObject(String, long)}).
     *
     * @param persistenceId the persistence id
     * @return completes when durable
     * @deprecated as in Pekko: use {@link #deleteObject(String, long)}
     */
    @Override
    @Deprecated
    public CompletionStage<Done> deleteObject(String persistenceId) {
        return run(() -> {
            tree.delete(Keys.state(persistenceId));
            return Done.getInstance();
        });
    }

    /**
     * Empties the object at revision {@code revision} (see the class description).
     *
     * @param persistenceId the persistence id
     * @param revision the stored revision plus one (or the stored revision)
     * @return completes when durable; fails with {@link DeleteRevisionException} on a revision mismatch
     */
    @Override
    public CompletionStage<Done> deleteObject(String persistenceId, long revision) {
        return run(() -> {
            if (revision < 1) {
                throw new DeleteRevisionException("revision must be >= 1 to delete '" + persistenceId + "', got "
                        + revision);
            }
            write(persistenceId, revision, encode(revision, null, ""), true);
            return Done.getInstance();
        });
    }

    private void write(String persistenceId, long revision, byte[] bytes, boolean delete) {
        String key = Keys.state(persistenceId);
        Optional<Versioned> cur = tree.getVersioned(key);
        long stored = cur.map(v -> revisionOf(v.value())).orElse(0L);
        boolean ok = stored == revision - 1 || (delete && stored == revision && cur.isPresent());
        if (!ok) {
            String msg = "durable state '" + persistenceId + "': " + (delete ? "delete" : "upsert") + " of revision "
                    + revision + " needs stored revision " + (revision - 1) + ", found " + stored;
            throw delete ? new DeleteRevisionException(msg) : new RevisionMismatchException(msg);
        }
        if (!tree.putIfVersion(key, bytes, cur.map(Versioned::version).orElse(0L))) {
            String msg = "durable state '" + persistenceId + "' changed concurrently; revision " + revision
                    + " not written";
            throw delete ? new DeleteRevisionException(msg) : new RevisionMismatchException(msg);
        }
    }

    private byte[] encode(long revision, Object value, String tag) {
        try {
            ByteArrayOutputStream buf = new ByteArrayOutputStream();
            DataOutputStream out = new DataOutputStream(buf);
            out.writeByte(FORMAT);
            out.writeLong(revision);
            out.writeUTF(tag);
            out.writeBoolean(value != null);
            if (value != null) {
                codec.write(out, value);
            }
            out.flush();
            return buf.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static long revisionOf(byte[] v) {
        if (v.length < 9 || v[0] != FORMAT) {
            throw new IllegalStateException("corrupt durable state record (" + v.length + " bytes)");
        }
        return ByteBuffer.wrap(v, 1, 8).getLong();
    }

    private GetObjectResult<Object> decode(String persistenceId, byte[] v) {
        try {
            DataInputStream in = new DataInputStream(new ByteArrayInputStream(v));
            in.readByte();
            long revision = in.readLong();
            in.readUTF();
            Object value = in.readBoolean() ? codec.read(in) : null;
            return new GetObjectResult<>(Optional.ofNullable(value), revision);
        } catch (IOException e) {
            throw new UncheckedIOException("corrupt durable state '" + persistenceId + "'", e);
        }
    }

    private <T> CompletionStage<T> run(Supplier<T> task) {
        CompletableFuture<T> f = new CompletableFuture<>();
        try {
            threads.execute(() -> {
                try {
                    f.complete(task.get());
                } catch (Throwable t) {
                    f.completeExceptionally(t);
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            f.completeExceptionally(new IllegalStateException("the durable state store is stopped", e));
        }
        return f;
    }
}
