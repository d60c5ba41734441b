package dev.lattice.pekko.persistence;

/**
 * Key layout of the plugins' trees. A persistence id is written length-prefixed ({@code <len:5 digits>:<id>:}), so
 * the prefix of one id is never a prefix of another id's keys and a range scan of one id sees only its keys; sequence
 * numbers are 19 zero-padded digits, so key order is numeric order.
 *
 * <ul>
 *   <li>{@code e<pid>:<seq>} an event ({@link LatticeJournal})</li>
 *   <li>{@code h<pid>} the highest sequence number ever written (never lowered)</li>
 *   <li>{@code d<pid>} the deleted-to marker: events up to it are treated as deleted</li>
 *   <li>{@code s<pid>:<seq>} a snapshot ({@link LatticeSnapshotStore})</li>
 *   <li>{@code v<pid>} a durable state object ({@link LatticeDurableStateStore})</li>
 * </ul>
 *
 * <p>Stateless and thread-safe.
 */
final class Keys {

    /** The longest persistence id, in characters. */
    static final int MAX_PERSISTENCE_ID = 99_999;

    private Keys() {
    }

    static String pid(char kind, String persistenceId) {
        int n = persistenceId.length();
        if (n == 0 || n > MAX_PERSISTENCE_ID) {
            throw new IllegalArgumentException("persistence id must be 1.." + MAX_PERSISTENCE_ID
                    + " characters, got " + n);
        }
        StringBuilder b = new StringBuilder(n + 8);
        b.append(kind);
        String len = Integer.toString(n);
        b.append("00000", 0, 5 - len.length()).append(len).append(':').append(persistenceId).append(':');
        return b.toString();
    }

    static String seq(String prefix, long sequenceNr) {
        String s = Long.toString(sequenceNr);
        return prefix + "0000000000000000000".substring(s.length()) + s;
    }

    static long seqOf(String key) {
        return Long.parseLong(key, key.length() - 19, key.length(), 10);
    }

    static String event(String persistenceId, long seq) {
        return seq(pid('e', persistenceId), seq);
    }

    static String highest(String persistenceId) {
        return pid('h', persistenceId);
    }

    static String deletedTo(String persistenceId) {
        return pid('d', persistenceId);
    }

    static String snapshot(String persistenceId, long seq) {
        return seq(pid('s', persistenceId), seq);
    }

    static String state(String persistenceId) {
        return pid('v', persistenceId);
    }

    static byte[] longBytes(long v) {
        return java.nio.ByteBuffer.allocate(8).putLong(v).array();
    }

    static long bytesLong(byte[] b) {
        if (b.length != 8) {
            throw new IllegalStateException("corrupt counter: " + b.length + " bytes, expected 8");
        }
        return java.nio.ByteBuffer.wrap(b).getLong();
    }
}
