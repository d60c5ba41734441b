package dev.lattice.engine;

/**
 * A tournament tree of losers over {@code k} ordered sources, each known by its current key: finds the source whose
 * key comes first, ties going to the lower source index (the scans give newer layers lower indexes), and after the
 * winner moves on replays only its path to the root (one key comparison per level, log2 k of them; nothing
 * allocated). A finished source has key {@code null} and comes after every other.
 *
 * <p>Layout: leaves are {@code k..2k-1} (source {@code i} at {@code k + i}), internal nodes {@code 1..k-1} hold the
 * loser of their match, {@code tree[0]} the overall winner; valid for any {@code k >= 1}. Not thread-safe: one scan
 * owns it.
 */
final class LoserTree {

    private final String[] keys;
    private final int[] tree;
    private final boolean reverse;

    /**
     * @param k the number of sources, at least 1
     * @param reverse true when keys come in descending order
     * @throws IllegalArgumentException if {@code k < 1}
     */
    LoserTree(int k, boolean reverse) {
        if (k < 1) {
            throw new IllegalArgumentException("a merge needs at least one source, got " + k);
        }
        this.keys = new String[k];
        this.tree = new int[k];
        this.reverse = reverse;
    }

    /**
     * Sets a source's first key; call for every source, then {@link #start()}.
     *
     * @param source the source's index, {@code 0..k-1}
     * @param key its first key, or null when it has none
     */
    void init(int source, String key) {
        keys[source] = key;
    }

    /** Plays the first tournament once every source's first key is set. */
    void start() {
        tree[0] = build(1);
    }

    /** @return the index of the source whose key comes first (finished sources last) */
    int winner() {
        return tree[0];
    }

    /** @return the winner's key, or null when every source is finished */
    String winnerKey() {
        return keys[tree[0]];
    }

    /**
     * Records the winner's next key and replays its path.
     *
     * @param key the winner's new key, or null when it is finished
     */
    void advanceWinner(String key) {
        int w = tree[0];
        keys[w] = key;
        int[] t = tree;
        for (int node = (w + keys.length) >>> 1; node > 0; node >>>= 1) {
            int other = t[node];
            if (before(other, w)) {
                t[node] = w;
                w = other;
            }
        }
        t[0] = w;
    }

    /** Marks every source finished (a closed scan). */
    void finishAll() {
        java.util.Arrays.fill(keys, null);
    }

    private int build(int node) {
        int k = keys.length;
        if (node >= k) {
            return node - k;
        }
        int a = build(2 * node);
        int b = build(2 * node + 1);
        if (before(b, a)) {
            tree[node] = a;
            return b;
        }
        tree[node] = b;
        return a;
    }

    /** @return true when source {@code a}'s key comes before source {@code b}'s */
    private boolean before(int a, int b) {
        String ka = keys[a];
        String kb = keys[b];
        if (ka == null) {
            return false;
        }
        if (kb == null) {
            return true;
        }
        int c = ka.compareTo(kb);
        if (c != 0) {
            return reverse ? c > 0 : c < 0;
        }
        return a < b;
    }
}
