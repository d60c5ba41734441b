package dev.lattice.engine;

import dev.lattice.spi.LogId;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * How a read-only follower keeps multi-log atomic writes whole (docs/engine.md, "Read-only followers"). Every
 * followed log of one follower shares the {@link Txn} of a write's id, so one publish makes the write's parts visible
 * in all of them at once. A follower applies PREPARE entries as the owner's replay does (pending, invisible), but
 * applies neither the DECISION nor the RESOLVE entries' resolution directly: it publishes a write only once it has
 * read the decision (the coordinator's DECISION entry, which names the participants) <em>and</em> every followed
 * participant has applied its prepare, wherever the poller happens to be in each log. Nothing waits and nothing
 * recurses across logs.
 *
 * <p>A RESOLVE read before the decision (the poller reached the participant first) waits for the decision; if the
 * coordinator log was polled up to a tail taken after the RESOLVE was read and still shows no decision, the
 * coordinator forgot it (its checkpoint covers it, so every participant's resolution is durable) and the RESOLVE's
 * outcome is used. Participants in trees this follower has not opened are not waited for. Not thread-safe: used only
 * by the follower's poller thread (lookups of {@link #txn} are safe from any thread).
 */
final class FollowerTxns {

    /** What the follower knows of one multi-log write not published yet. */
    private static final class Pending {
        final long createdNanos = System.nanoTime();
        LogId coordinator;
        PartitionState.Decision decision;
        PartitionState.ResolveFields resolve;
        long resolveSeenRound = -1;
        final Set<LogId> prepared = new HashSet<>();
    }

    /** A write still waiting this long for a participant's prepare has it behind the follower's loaded state. */
    private static final long STALE_NANOS = 60_000_000_000L;

    /** How long a published write's outcome is remembered for states rebuilt from older checkpoints. */
    private static final long RECENT_NANOS = 600_000_000_000L;

    /** A published write: its (already visible) txn, so states rebuilt later attach their part to the same one. */
    private record Published(Txn txn, boolean commit, long version, long nanos) {
    }

    private final Map<String, Txn> txns = new ConcurrentHashMap<>();
    private final java.util.concurrent.locks.ReentrantReadWriteLock readers =
            new java.util.concurrent.locks.ReentrantReadWriteLock();
    private final Map<LogId, FollowerLog> logs = new ConcurrentHashMap<>();
    private final Map<String, Pending> pending = new HashMap<>();
    /** Writes published in the last {@link #RECENT_NANOS}: a state rebuilt from an older checkpoint resolves them. */
    private final java.util.LinkedHashMap<String, Published> recent = new java.util.LinkedHashMap<>();
    /** Counts finished polls of each log, to tell "the decision is not read yet" from "it was forgotten". */
    private final Map<LogId, Long> pollRounds = new HashMap<>();

    /** @return the shared write of this id (prepares of one write in several logs get the same object) */
    Txn txn(String id) {
        Published done = recent.get(id); // poller thread only: states are built and applied there
        return done != null ? done.txn() : txns.computeIfAbsent(id, Txn::new);
    }

    void register(FollowerLog l) {
        logs.put(l.log, l);
    }

    void unregister(FollowerLog l) {
        logs.remove(l.log, l);
    }

    /** Applies one decoded entry of {@code self} to its state {@code ps}. */
    void apply(FollowerLog self, PartitionState ps, WalRecord.Decoded d) {
        switch (d.kind()) {
            case WalRecord.KIND_DECISION: {
                PartitionState.Decision dec = PartitionState.peekDecision(d.mutations(), d.version());
                if (d.version() > ps.maxVersion) {
                    ps.maxVersion = d.version();
                }
                if (ps.decisions.containsKey(dec.id)) {
                    return; // the first decision for an id wins
                }
                ps.addDecision(dec);
                Pending p = pending(dec.id);
                p.decision = dec;
                p.coordinator = self.log;
                tryPublish(dec.id);
                return;
            }
            case WalRecord.KIND_RESOLVE: {
                PartitionState.ResolveFields r = PartitionState.peekResolve(d.mutations().get(0));
                if (!ps.unresolved.containsKey(r.id())) {
                    return; // published already (or resolved before this state's checkpoint)
                }
                Pending p = pending(r.id());
                p.resolve = r;
                p.coordinator = r.coordinator();
                p.resolveSeenRound = pollRounds.getOrDefault(r.coordinator(), 0L);
                tryPublish(r.id());
                return;
            }
            case WalRecord.KIND_PREPARE: {
                Object result = ps.apply(d.kind(), d.mutations(), d.version(), null);
                String id = d.mutations().get(0).key();
                Published done = recent.get(id);
                if (result == Boolean.TRUE && done != null) {
                    ps.resolve(id, done.commit(), done.version()); // the other parts are visible already
                } else if (result == Boolean.TRUE) {
                    pending(id).prepared.add(self.log);
                    tryPublish(id);
                }
                return;
            }
            default:
                ps.apply(d.kind(), d.mutations(), d.version(), null);
        }
    }

    /** A poll of {@code log} reached the committed tail it read at its start. */
    void pollFinished(LogId log) {
        long round = pollRounds.merge(log, 1L, Long::sum);
        long now = System.nanoTime();
        for (Iterator<Published> it = recent.values().iterator(); it.hasNext(); ) {
            if (now - it.next().nanos() <= RECENT_NANOS) {
                break;
            }
            it.remove();
        }
        for (Iterator<Map.Entry<String, Pending>> it = pending.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<String, Pending> e = it.next();
            Pending p = e.getValue();
            if (p.decision == null && p.resolve != null && p.resolve.coordinator().equals(log)
                    && round > p.resolveSeenRound + 1) {
                // polled the coordinator through a tail read after the RESOLVE: the decision was forgotten
                publish(e.getKey(), p, p.resolve.commit(), p.resolve.version());
                it.remove();
            } else if (now - p.createdNanos > STALE_NANOS) {
                // a participant's prepare lies before the state the follower loaded for it: publish what is here
                if (p.decision != null) {
                    publish(e.getKey(), p, p.decision.commit, p.decision.version);
                } else if (p.resolve != null) {
                    publish(e.getKey(), p, p.resolve.commit(), p.resolve.version());
                }
                it.remove();
            }
        }
    }

    private Pending pending(String id) {
        return pending.computeIfAbsent(id, k -> new Pending());
    }

    private void tryPublish(String id) {
        Pending p = pending.get(id);
        if (p == null || p.decision == null) {
            return;
        }
        for (LogId l : p.decision.outstanding) {
            FollowerLog f = logs.get(l);
            if (f != null && f.isBuilding()) {
                return; // readers still read its old state: publish after the swap (afterSwap)
            }
            if (f != null && f.txnState() != null && !p.prepared.contains(l) && f.txnState().unresolved.containsKey(id)) {
                p.prepared.add(l); // prepared in a state built from a checkpoint (pending section)
            }
            if (f != null && f.txnState() != null && !p.prepared.contains(l)) {
                return; // a followed participant has not applied its prepare yet
            }
        }
        publish(id, p, p.decision.commit, p.decision.version);
        pending.remove(id);
    }

    /** Resolves the write in every followed log that prepared it: one publish, all parts visible at once. */
    private void publish(String id, Pending p, boolean commit, long version) {
        for (LogId l : p.prepared) {
            FollowerLog f = logs.get(l);
            PartitionState s = f == null ? null : f.txnState();
            if (s != null) {
                s.resolve(id, commit, version);
            }
        }
        FollowerLog c = p.coordinator == null ? null : logs.get(p.coordinator);
        if (c != null && c.txnState() != null) {
            c.txnState().decisions.remove(id);
        }
        Txn t = txns.remove(id);
        if (t != null) {
            recent.put(id, new Published(t, commit, version, System.nanoTime()));
        }
    }

    /**
     * A state was just built from a checkpoint (it is not yet the log's state): registers its prepared writes and
     * decisions, and publishes the writes that are complete with it.
     */
    void resolveLoaded(FollowerLog self, PartitionState ps) {
        for (Map.Entry<String, PartitionState.Unresolved> e : ps.unresolvedSnapshot().entrySet()) {
            Published done = recent.get(e.getKey());
            if (done != null) {
                ps.resolve(e.getKey(), done.commit(), done.version());
            } else {
                pending(e.getKey()).prepared.add(self.log);
            }
        }
        for (PartitionState.Decision d : ps.decisions.values()) {
            if (recent.containsKey(d.id)) {
                continue;
            }
            Pending p = pending(d.id);
            p.decision = d;
            p.coordinator = self.log;
        }
    }

    /** @return the lock readers hold while they read states; a reload holds its write side (see FollowerLog) */
    java.util.concurrent.locks.ReentrantReadWriteLock readers() {
        return readers;
    }

    /**
     * After {@code rebuilt} was swapped in from a newer checkpoint, whose runs may hold parts of atomic writes flattened
     * (resolved before the checkpoint) while their other parts are still pending in the other followed logs: catches
     * every other followed log up to its committed tail of now, then {@code rebuilt} once more, and publishes
     * <ul>
     * <li>each decided write whose only participant not prepared is {@code rebuilt} (its part is in the runs), and</li>
     * <li>each write known only from RESOLVE entries whose coordinator is {@code rebuilt}: that log was just read
     * through a tail later than those entries without finding the decision, so the checkpoint forgot it.</li>
     * </ul>
     * Writes that happened while this ran keep the normal rule (all parts prepared). Runs under the readers' write lock.
     */
    void settleAfterReload(FollowerLog rebuilt) {
        for (FollowerLog f : logs.values()) {
            if (f != rebuilt && f.state() != null) {
                f.poll();
            }
        }
        rebuilt.poll();
        for (Iterator<Map.Entry<String, Pending>> it = pending.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<String, Pending> e = it.next();
            Pending p = e.getValue();
            if (p.decision != null && onlyMissing(e.getKey(), p, rebuilt)) {
                publish(e.getKey(), p, p.decision.commit, p.decision.version);
                it.remove();
            } else if (p.decision == null && p.resolve != null && p.resolve.coordinator().equals(rebuilt.log)) {
                publish(e.getKey(), p, p.resolve.commit(), p.resolve.version());
                it.remove();
            }
        }
    }

    /** @return true when every followed participant of the write but {@code rebuilt} has applied its prepare */
    private boolean onlyMissing(String id, Pending p, FollowerLog rebuilt) {
        for (LogId l : p.decision.outstanding) {
            FollowerLog f = logs.get(l);
            if (f == null || f == rebuilt || f.txnState() == null) {
                continue;
            }
            if (!p.prepared.contains(l) && !f.txnState().unresolved.containsKey(id)) {
                return false;
            }
        }
        return true;
    }

    /** After {@link #resolveLoaded} and the swap: publishes whatever the new state completed. */
    void afterSwap() {
        for (String id : new HashSet<>(pending.keySet())) {
            tryPublish(id);
        }
    }
}
