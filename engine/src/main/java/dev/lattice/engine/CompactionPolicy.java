package dev.lattice.engine;

import java.util.ArrayList;
import java.util.List;

/**
 * Which runs of a partition are compacted next, and into which level (docs/engine.md, "Flush and compaction"): the
 * regular leveled rules ({@link #next}) and the merge of an idle partition's level 0 ({@link #idle}). Decides only;
 * {@link RunMaintenance} merges, writes and publishes.
 *
 * <p>Immutable; thread-safe.
 */
final class CompactionPolicy {

    /**
     * Level 0 is merged into level 1 at the latest when it holds this many times {@code level0CompactionTrigger}
     * runs, however small it is against level 1 (see {@link #next}).
     */
    static final int LEVEL0_MAX_RUNS_FACTOR = 4;

    /**
     * One compaction to run.
     *
     * @param inputs the runs merged (they retire once its manifest is published)
     * @param outputLevel the level its runs go to: 0 only for an idle merge of level 0 into one run
     * @param idle whether it is an idle merge ({@link #idle})
     */
    record Pick(List<RunHandle> inputs, int outputLevel, boolean idle) {
    }

    private final LatticeConfig config;

    CompactionPolicy(LatticeConfig config) {
        this.config = config;
    }

    /**
     * The next regular compaction, or null when none is due.
     *
     * <p>Level 0 is merged into level 1 once it holds {@code level0CompactionTrigger} runs and one of: level 1 holds
     * at most one output run ({@code targetRunBytes}); level 0 holds at least as many bytes as level 1; level 0 holds
     * {@link #LEVEL0_MAX_RUNS_FACTOR} times the trigger (runs are counted one by one, also the key-disjoint runs of
     * one idle merge). Level-0 runs span the whole key range of a partition (its
     * keys are hashed), so each such merge rewrites all of level 1: merging at every trigger made level 1 rewritten
     * once per {@code level0CompactionTrigger} flushes, a cost quadratic in the partition's size. Waiting until
     * level 0 is as large as level 1 makes every merge at least double level 1, so each byte is rewritten a
     * logarithmic number of times while level 1 grows; the run cap bounds what a read looks through meanwhile.
     * Level {@code n >= 1} is compacted when its bytes exceed {@code memtableBytes * ratio^n}: one of its runs (round
     * robin by {@code sequence}) with the runs of level {@code n+1} it overlaps.
     *
     * @param l the partition's layers now
     * @param sequence compactions done so far (picks the round-robin run)
     * @return the compaction, or null
     */
    Pick next(PartitionLayers.Layers l, long sequence) {
        List<RunHandle> l0 = l.level(0);
        if (l0.size() >= config.level0CompactionTrigger) {
            long l0Bytes = bytes(l0);
            long l1Bytes = bytes(l.level(1));
            if (l1Bytes <= config.targetRunBytes || l0Bytes >= l1Bytes
                    || l0.size() >= config.level0CompactionTrigger * LEVEL0_MAX_RUNS_FACTOR) {
                return intoLevel1(l, l0, false);
            }
        }
        int deepest = 0;
        for (RunHandle r : l.runs()) {
            deepest = Math.max(deepest, r.ref.level());
        }
        long target = config.memtableBytes * config.levelSizeRatio;
        for (int level = 1; level < deepest || (level == deepest && level < 7); level++) {
            List<RunHandle> runs = l.level(level);
            if (bytes(runs) > target && !runs.isEmpty()) {
                RunHandle chosen = runs.get((int) (sequence % runs.size()));
                List<RunHandle> in = new ArrayList<>();
                in.add(chosen);
                in.addAll(overlapping(l.level(level + 1), in));
                return new Pick(in, level + 1, false);
            }
            target *= config.levelSizeRatio;
        }
        return null;
    }

    /**
     * The merge of an idle partition's level 0, or null when it is not worth it ({@link #idleMergeWorthwhile}): into
     * level 1 when level 0 holds at least as many bytes as level 1 or level 1 holds at most one output run (what
     * {@link #next} would do at the trigger), else into one level-0 run, which costs level 0's bytes only. Reads of a
     * partition that stopped changing then consult one level-0 run instead of up to
     * {@code LEVEL0_MAX_RUNS_FACTOR * level0CompactionTrigger}. The output into level 0 is split into runs of
     * {@code targetRunBytes} like any other (a run being written is held in the heap), key-disjoint and next to each
     * other in level 0's order: one sorted run for a get and for {@link #idleMergeWorthwhile}, several runs for the
     * trigger of {@link #next}.
     *
     * @param l the partition's layers now
     * @return the compaction, or null
     */
    Pick idle(PartitionLayers.Layers l) {
        List<RunHandle> l0 = l.level(0);
        if (!idleMergeWorthwhile(l0, 0)) {
            return null;
        }
        long l1Bytes = bytes(l.level(1));
        if (l1Bytes <= config.targetRunBytes || bytes(l0) >= l1Bytes) {
            return intoLevel1(l, l0, true);
        }
        return new Pick(new ArrayList<>(l0), 0, true);
    }

    /**
     * Whether merging level 0 (plus a memtable about to be flushed) is worth it: at least two runs, and all but the
     * largest hold at least half the bytes of the largest. Each merge then grows the largest run by half at least,
     * so a byte is rewritten by idle merges a logarithmic number of times before it moves to level 1; a trickle of
     * writes between idle periods does not rewrite a large level-0 run each time.
     *
     * @param l0 the level-0 runs
     * @param memtableBytes bytes of the memtable that would be flushed first, 0 for none
     * @return true when worth it
     */
    static boolean idleMergeWorthwhile(List<RunHandle> l0, long memtableBytes) {
        long[] sorted = sortedRunBytes(l0);
        int runs = sorted.length + (memtableBytes > 0 ? 1 : 0);
        if (runs < 2) {
            return false;
        }
        long largest = memtableBytes;
        long total = memtableBytes;
        for (long b : sorted) {
            largest = Math.max(largest, b);
            total += b;
        }
        return total - largest >= largest / 2;
    }

    /**
     * Level 0 as sorted runs: consecutive runs (in level 0's order, newest first) whose key ranges are pairwise
     * disjoint form one sorted run, as the runs one idle merge writes do; a flush's run, which spans the partition's
     * hashed keys, overlaps its neighbours and is a sorted run of its own. A get consults one run of each.
     *
     * @param l0 the level-0 runs, newest first
     * @return the bytes of each sorted run, newest first
     */
    static long[] sortedRunBytes(List<RunHandle> l0) {
        long[] out = new long[l0.size()];
        int n = 0;
        int groupStart = 0;
        for (int i = 0; i < l0.size(); i++) {
            RunHandle r = l0.get(i);
            if (n == 0 || !overlapping(l0.subList(groupStart, i), List.of(r)).isEmpty()) {
                groupStart = i;
                n++;
            }
            out[n - 1] += r.ref.lengthBytes();
        }
        return java.util.Arrays.copyOf(out, n);
    }

    private static Pick intoLevel1(PartitionLayers.Layers l, List<RunHandle> l0, boolean idle) {
        List<RunHandle> in = new ArrayList<>(l0);
        in.addAll(overlapping(l.level(1), in));
        return new Pick(in, 1, idle);
    }

    /**
     * Total bytes of runs.
     *
     * @param runs runs
     * @return the sum of their lengths in bytes
     */
    static long bytes(List<RunHandle> runs) {
        long n = 0;
        for (RunHandle r : runs) {
            n += r.ref.lengthBytes();
        }
        return n;
    }

    /**
     * The runs of {@code level} whose key range overlaps the union of the key ranges of {@code with}.
     *
     * @param level runs of one level
     * @param with runs whose key ranges are united (runs without keys are ignored)
     * @return the overlapping runs of {@code level}, in its order
     */
    static List<RunHandle> overlapping(List<RunHandle> level, List<RunHandle> with) {
        String lo = null;
        String hi = null;
        for (RunHandle r : with) {
            String f = r.ref.meta().firstKey();
            String t = r.ref.meta().lastKey();
            if (f == null) {
                continue;
            }
            lo = lo == null || f.compareTo(lo) < 0 ? f : lo;
            hi = hi == null || t.compareTo(hi) > 0 ? t : hi;
        }
        List<RunHandle> out = new ArrayList<>();
        if (lo == null) {
            return out;
        }
        for (RunHandle r : level) {
            String f = r.ref.meta().firstKey();
            if (f != null && f.compareTo(hi) <= 0 && r.ref.meta().lastKey().compareTo(lo) >= 0) {
                out.add(r);
            }
        }
        return out;
    }
}
