package dev.lattice.engine;

import dev.lattice.spi.Fence;
import dev.lattice.spi.LogId;
import dev.lattice.spi.ProviderFeature;
import dev.lattice.spi.RunInfo;
import dev.lattice.spi.WalStorageProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reclaiming a dropped tree's storage (docs/engine.md, "Tree lifecycle"): fencing its logs before the drop is
 * recorded, deleting them wholly afterwards on every registered provider that holds any of them (the placed one and
 * the leftovers of moves), and pushing a re-created tree's epochs above the dropped one's. Every step is idempotent,
 * so an interrupted purge is finished by running it again. Thread-safe (no state of its own).
 */
final class TreePurge {

    private static final Logger LOG = LoggerFactory.getLogger(TreePurge.class);

    private final EngineContext ctx;

    TreePurge(EngineContext ctx) {
        this.ctx = ctx;
    }

    /** The registered providers, each instance once (several keys may name one instance). */
    private List<WalStorageProvider> providers() {
        Map<WalStorageProvider, Boolean> seen = new IdentityHashMap<>();
        List<WalStorageProvider> out = new ArrayList<>();
        for (ProviderHandle h : ctx.providers.values()) {
            if (seen.put(h.provider(), Boolean.TRUE) == null) {
                out.add(h.provider());
            }
        }
        return out;
    }

    /** The logs of the tree a provider holds: those it lists plus, for its placed partitions, those with runs. */
    private Set<LogId> logsOn(WalStorageProvider p, Placement placement) {
        String tree = placement.tree();
        Set<LogId> logs = new LinkedHashSet<>(ctx.bounded(null, "logs", () -> p.logs(tree)));
        if (p.describe().features().contains(ProviderFeature.RUNS)) {
            for (int i = 0; i < placement.keys().size(); i++) {
                LogId log = new LogId(tree, i);
                if (ctx.providers.get(placement.keyOf(i)) != null
                        && ctx.providers.get(placement.keyOf(i)).provider() == p && !logs.contains(log)
                        && !ctx.bounded(log, "runs.list", () -> p.runs().list(log)).isEmpty()) {
                    logs.add(log);
                }
            }
        }
        return logs;
    }

    /**
     * Claims every log of the tree on every provider that holds one, so that no writer of the tree (in any process)
     * can commit again.
     *
     * @return the highest epoch claimed (0 when the tree has no log anywhere)
     */
    long fence(Placement placement) {
        long max = 0;
        for (WalStorageProvider p : providers()) {
            for (LogId log : logsOn(p, placement)) {
                Fence f = ctx.bounded(log, "claim", () -> p.claim(log));
                max = Math.max(max, f.epoch());
            }
        }
        return max;
    }

    /**
     * Deletes every log of a dropped tree on every registered provider.
     *
     * @return the number of logs deleted
     * @throws dev.lattice.spi.WalStorageException if a provider fails (what was deleted stays deleted; run again)
     */
    int purge(Placement placement) {
        int dropped = 0;
        for (WalStorageProvider p : providers()) {
            for (LogId log : logsOn(p, placement)) {
                Fence f = ctx.bounded(log, "claim", () -> p.claim(log));
                if (p.describe().features().contains(ProviderFeature.DROP)) {
                    ctx.bounded(log, "drop", () -> {
                        p.drop(log, f);
                        return null;
                    });
                } else {
                    reclaimWithoutDrop(p, log, f);
                }
                dropped++;
            }
        }
        return dropped;
    }

    /** For a provider without {@link ProviderFeature#DROP}: trims everything, deletes runs and older checkpoints. */
    private void reclaimWithoutDrop(WalStorageProvider p, LogId log, Fence f) {
        LOG.warn("provider '{}' cannot drop logs; {} is trimmed and its runs deleted, but its epoch record and "
                + "latest checkpoint stay", p.describe().name(), log);
        long tail = ctx.bounded(log, "state", () -> p.state(log)).committedTail();
        if (tail >= 0) {
            ctx.bounded(log, "trim", () -> {
                p.trim(log, f, tail);
                return null;
            });
        }
        ctx.bounded(log, "deleteBefore", () -> {
            p.checkpoints().deleteBefore(log, WalStorageProvider.MAX_OFFSET);
            return null;
        });
        if (p.describe().features().contains(ProviderFeature.RUNS)) {
            for (RunInfo r : ctx.bounded(log, "runs.list", () -> p.runs().list(log))) {
                ctx.bounded(log, "runs.delete", () -> {
                    p.runs().delete(log, f, r.id());
                    return null;
                });
            }
        }
    }

    /**
     * Claims each log of a tree about to be created again until its epoch is above the dropped tree's, so that a
     * writer of the dropped tree that missed the drop holds a fence the new logs refuse as stale (providers may
     * restart a dropped log's epochs at 1). Costs at most {@code droppedEpoch} claims per log; leaves the logs
     * claimed (the tree's open claims them again).
     */
    void raiseEpochs(String tree, List<String> keys, long droppedEpoch) {
        for (int i = 0; i < keys.size(); i++) {
            LogId log = new LogId(tree, i);
            WalStorageProvider p = ctx.handle(keys.get(i), log).provider();
            long epoch = 0;
            while (epoch <= droppedEpoch) {
                epoch = ctx.bounded(log, "claim", () -> p.claim(log)).epoch();
            }
        }
    }
}
