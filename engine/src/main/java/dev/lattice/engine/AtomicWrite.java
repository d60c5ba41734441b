package dev.lattice.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * Builds one atomic write: puts, deletes and preconditions on keys of one or several trees of one lattice, then
 * {@link #commit()}. Obtained from {@link Lattice#atomic()} or {@link Tree#atomic()} (bound to that tree, so the
 * methods without a tree argument may be used).
 *
 * <h2>Guarantees</h2>
 * All or nothing; durable before {@link #commit()} returns; a concurrent reader (point reads, {@link Tree#getAll},
 * scans) sees all of the write or none of it; replay after a crash at any point yields all or none; every mutation
 * carries the same version ({@link AtomicResult#version()}). See {@code docs/consistency.md}.
 *
 * <h2>Limits</h2>
 * At most {@code LatticeConfig.maxAtomicKeys} puts and deletes (default 4,096); each log's part must fit one log
 * entry of its provider ({@code ProviderLimits.maxEntryBytes}, e.g. about 400 KB on DynamoDB whose items hold at
 * most 400 KB) and one batch ({@code LatticeConfig.maxBatchBytes}). One key may be written once per atomic write.
 * Violations throw {@link IllegalArgumentException} naming the limit, before anything is written.
 *
 * <p>Not thread-safe: build and commit on one thread. A builder may be committed once.
 *
 * <p>Another implementation of {@link Tree} may return its own builder (lattice-cluster does, for trees served by
 * several processes): it extends this class through {@link #AtomicWrite()} and overrides every public method.
 */
public class AtomicWrite {

    /**
     * One operation of the write: {@code expected} is the expected version of an EXPECT, the expiry of a PUT_TTL;
     * {@code value} the end key (UTF-8) of a DELETE_RANGE.
     */
    record Op(TreeImpl tree, String key, byte kind, byte[] value, long expected) {
    }

    private final AtomicWrites engine;
    private final Lattice lattice;
    private final Tree bound;
    final List<Op> ops = new ArrayList<>();
    String idempotencyKey;
    private boolean committed;

    /**
     * For another implementation of the builder (see the class comment): it must override every public method, since
     * this class's own ones need an embedded lattice.
     */
    protected AtomicWrite() {
        this(null, null, null);
    }

    AtomicWrite(AtomicWrites engine, Lattice lattice, Tree bound) {
        this.engine = engine;
        this.lattice = lattice;
        this.bound = bound;
    }

    private TreeImpl own(Tree tree) {
        Objects.requireNonNull(tree, "tree");
        if (!(tree instanceof TreeImpl t) || t.lattice() != lattice) {
            throw new IllegalArgumentException("tree '" + tree.name() + "' belongs to another lattice");
        }
        return t;
    }

    private TreeImpl boundTree() {
        if (bound == null) {
            throw new IllegalStateException("this atomic write is not bound to a tree; pass the tree "
                    + "(Lattice.atomic().put(tree, key, value))");
        }
        return own(bound);
    }

    private AtomicWrite add(TreeImpl t, String key, byte kind, byte[] value, long expected) {
        if (committed) {
            throw new IllegalStateException("this atomic write was already committed");
        }
        t.keyBytes(key);
        if (kind == WalRecord.Mutation.PUT_TTL) {
            value = t.valueWithTtl(value);
        } else if (kind == WalRecord.Mutation.PUT) {
            value = t.value(value);
        } else if (kind != WalRecord.Mutation.DELETE_RANGE) {
            value = null;
        }
        ops.add(new Op(t, key, kind, value, expected));
        return this;
    }

    /**
     * Puts a value that expires {@code ttl} from now (see {@link Tree#put(String, byte[], java.time.Duration)}).
     *
     * @param tree a tree of this lattice
     * @param key the key (the tree's key rules)
     * @param value the value (copied; the tree's size limit less 8 bytes)
     * @param ttl how long the value lives, positive
     * @return this
     * @throws NullPointerException if the tree, key or value is null
     * @throws IllegalArgumentException if {@code ttl} is null, zero or negative, the key or value breaks the tree's
     *     limits, or the tree is another lattice's
     * @throws IllegalStateException if already committed
     */
    public AtomicWrite put(Tree tree, String key, byte[] value, java.time.Duration ttl) {
        TreeImpl t = own(tree);
        Objects.requireNonNull(value, "value");
        long expiresAt = Expiry.expiresAt(t.context().config.clock, ttl);
        return add(t, key, WalRecord.Mutation.PUT_TTL, value, expiresAt);
    }

    /**
     * Deletes every key of the tree in {@code [fromInclusive, toExclusive)} (see {@link Tree#deleteRange}): one
     * range tombstone in each of the tree's partitions. Keys this write puts survive it, whatever the order of the
     * calls; one range per tree and write is the usual use, several are allowed.
     *
     * @param tree a tree of this lattice
     * @param fromInclusive first key deleted
     * @param toExclusive first key after the range, greater than {@code fromInclusive}
     * @return this
     * @throws IllegalArgumentException if a bound is null, empty or breaks the key limits, {@code fromInclusive >=
     *     toExclusive}, or the tree is another lattice's
     * @throws IllegalStateException if already committed
     */
    public AtomicWrite deleteRange(Tree tree, String fromInclusive, String toExclusive) {
        TreeImpl t = own(tree);
        Expiry.checkRange(fromInclusive, toExclusive);
        t.keyBytes(toExclusive);
        return add(t, fromInclusive, WalRecord.Mutation.DELETE_RANGE,
                toExclusive.getBytes(java.nio.charset.StandardCharsets.UTF_8), 0);
    }

    /**
     * {@link #put(Tree, String, byte[], java.time.Duration)} on the bound tree.
     *
     * @param key the key
     * @param value the value
     * @param ttl how long the value lives, positive
     * @return this
     * @throws IllegalStateException if the write is not bound to a tree
     */
    public AtomicWrite put(String key, byte[] value, java.time.Duration ttl) {
        return put(boundTree(), key, value, ttl);
    }

    /**
     * {@link #deleteRange(Tree, String, String)} on the bound tree.
     *
     * @param fromInclusive first key deleted
     * @param toExclusive first key after the range
     * @return this
     * @throws IllegalStateException if the write is not bound to a tree
     */
    public AtomicWrite deleteRange(String fromInclusive, String toExclusive) {
        return deleteRange(boundTree(), fromInclusive, toExclusive);
    }

    /**
     * Puts a value.
     *
     * @param tree a tree of this lattice
     * @param key the key (the tree's key rules)
     * @param value the value (copied; the tree's size limit)
     * @return this
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the key or value breaks the tree's limits, or the tree is another lattice's
     * @throws IllegalStateException if already committed
     */
    public AtomicWrite put(Tree tree, String key, byte[] value) {
        return add(own(tree), key, WalRecord.Mutation.PUT, Objects.requireNonNull(value, "value"), 0);
    }

    /**
     * Deletes a key (no-op for the key if absent; still part of the write).
     *
     * @param tree a tree of this lattice
     * @param key the key
     * @return this
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the key breaks the tree's key rules, or the tree is another lattice's
     * @throws IllegalStateException if already committed
     */
    public AtomicWrite delete(Tree tree, String key) {
        return add(own(tree), key, WalRecord.Mutation.DELETE, null, 0);
    }

    /**
     * Precondition: the key's current version must be {@code version} ({@code 0} = the key must be absent). If it
     * does not hold when the write commits, nothing is written and {@link #commit()} throws
     * {@link PreconditionFailedException} naming the key.
     *
     * @param tree a tree of this lattice
     * @param key the key
     * @param version the expected version, {@code >= 0}
     * @return this
     * @throws IllegalArgumentException if {@code version < 0}, or as {@link #put(Tree, String, byte[])}
     */
    public AtomicWrite expectVersion(Tree tree, String key, long version) {
        if (version < 0) {
            throw new IllegalArgumentException("expected version must be >= 0 (0 = absent), got " + version);
        }
        return add(own(tree), key, WalRecord.Mutation.EXPECT, null, version);
    }

    /**
     * Precondition: the key must not exist.
     *
     * @param tree a tree of this lattice
     * @param key the key
     * @return this
     * @throws IllegalArgumentException as {@link #put(Tree, String, byte[])}
     */
    public AtomicWrite expectAbsent(Tree tree, String key) {
        return expectVersion(tree, key, 0);
    }

    /**
     * {@link #put(Tree, String, byte[])} on the bound tree.
     *
     * @param key the key
     * @param value the value
     * @return this
     * @throws IllegalStateException if the write is not bound to a tree ({@link Lattice#atomic()})
     */
    public AtomicWrite put(String key, byte[] value) {
        return put(boundTree(), key, value);
    }

    /**
     * {@link #delete(Tree, String)} on the bound tree.
     *
     * @param key the key
     * @return this
     * @throws IllegalStateException if the write is not bound to a tree
     */
    public AtomicWrite delete(String key) {
        return delete(boundTree(), key);
    }

    /**
     * {@link #expectVersion(Tree, String, long)} on the bound tree.
     *
     * @param key the key
     * @param version the expected version ({@code 0} = absent)
     * @return this
     * @throws IllegalStateException if the write is not bound to a tree
     */
    public AtomicWrite expectVersion(String key, long version) {
        return expectVersion(boundTree(), key, version);
    }

    /**
     * {@link #expectAbsent(Tree, String)} on the bound tree.
     *
     * @param key the key
     * @return this
     * @throws IllegalStateException if the write is not bound to a tree
     */
    public AtomicWrite expectAbsent(String key) {
        return expectAbsent(boundTree(), key);
    }

    /**
     * Makes the write idempotent: committing a write with the same key again (in this process or after a restart)
     * re-attaches to the first one's outcome instead of writing twice, for {@code LatticeConfig.atomicRetention}
     * (default 24 hours) after it was decided. A write that was interrupted by a crash before its decision has no
     * outcome; its retry writes anew.
     *
     * @param key 1..256 characters
     * @return this
     * @throws IllegalArgumentException if the key is empty or longer than 256 characters
     */
    public AtomicWrite idempotencyKey(String key) {
        Objects.requireNonNull(key, "key");
        if (key.isEmpty() || key.length() > 256) {
            throw new IllegalArgumentException("idempotency key must be 1..256 characters, got " + key.length());
        }
        this.idempotencyKey = key;
        return this;
    }

    /**
     * Commits the write and waits for it.
     *
     * @return the outcome (version, whether re-attached, keys, logs)
     * @throws IllegalArgumentException if the write is empty, writes a key twice, or breaks a limit (nothing written),
     *     or if its idempotency key was used before for a different set of keys
     * @throws PreconditionFailedException if a precondition did not hold (nothing written)
     * @throws AtomicWriteAbortedException if re-attached to an earlier write with this idempotency key that aborted
     * @throws MemoryBudgetExceededException if the memory budget would be exceeded (nothing written)
     * @throws LatticeSaturatedException if the keys stayed locked by other atomic writes, or admission stayed full,
     *     for the admission timeout (nothing written)
     * @throws LatticeShuttingDownException if the lattice is closing (nothing written)
     * @throws WriteFailedException if the provider failed a step before the commit point (nothing written)
     * @throws WriteOutcomeUnknownException if the commit record's outcome could not be determined (all or nothing,
     *     resolved by this process if the log recovers, else at the next open)
     * @throws IllegalStateException if already committed
     */
    public AtomicResult commit() {
        if (committed) {
            throw new IllegalStateException("this atomic write was already committed");
        }
        committed = true;
        return engine.commit(this);
    }

    /**
     * {@link #commit()} on the lattice's I/O threads.
     *
     * @return completes as {@link #commit()} returns or throws
     */
    public CompletableFuture<AtomicResult> commitAsync() {
        if (committed) {
            return CompletableFuture.failedFuture(new IllegalStateException("this atomic write was already committed"));
        }
        committed = true;
        return CompletableFuture.supplyAsync(() -> engine.commit(this), engine.executor());
    }
}
