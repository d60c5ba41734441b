package dev.lattice.cluster;

import dev.lattice.engine.Versioned;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * Reads the {@link WorkloadNode} histories of every node and checks them against the final state:
 * every acknowledged write is present with its version (or overwritten by a later one), no value of a write that
 * failed is ever read or kept, no atomic group is ever seen partial, and per key a read never returns a version
 * older than one whose write was acknowledged before the read began, nor older than a read that ended before it
 * began (linearizability of point operations; times are the one machine's wall clock). Not thread-safe.
 */
final class HistoryCheck {

    record Write(String id, String kind, String key, int partition, long start, long end, String outcome,
                 long version) {
    }

    record Read(String key, int partition, long start, long end, long version, String value) {
    }

    final Map<String, Write> writes = new HashMap<>();
    final List<Read> reads = new ArrayList<>();
    final List<String[]> groupReads = new ArrayList<>();
    /** getAll reads of the wide group (keys of three partitions): {@code X start end v1 v2 v3}. */
    final List<String[]> wideGetAlls = new ArrayList<>();
    /** Scans of the wide group's key range through every partition: {@code Y start end v1 v2 v3}. */
    final List<String[]> wideScans = new ArrayList<>();
    final List<String[]> wideReads = new ArrayList<>();
    final List<String> violations = new ArrayList<>();
    /**
     * Sequential point reads of the wide group that went back: a multi-partition atomic write seen by one read and
     * missed by a later one (a partial view). Kept apart from {@link #violations} so the report names them;
     * ClusterFaultTest fails on either.
     */
    final List<String> wideAnomalies = new ArrayList<>();

    void load(Path history) {
        List<String> lines;
        try {
            lines = Files.readAllLines(history);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Map<String, String[]> started = new HashMap<>();
        for (String line : lines) {
            String[] f = line.split("\t", -1);
            switch (f[0]) {
                case "S" -> {
                    if (f.length == 7) {
                        started.put(f[1], f);
                    }
                }
                case "E" -> {
                    String[] s = started.remove(f[1]);
                    if (s != null && f.length == 5) {
                        writes.put(f[1], new Write(f[1], s[2], s[3], Integer.parseInt(s[4]), Long.parseLong(s[5]),
                                Long.parseLong(f[3]), f[2], Long.parseLong(f[4])));
                    }
                }
                case "R" -> {
                    if (f.length == 7) {
                        reads.add(new Read(f[1], Integer.parseInt(f[2]), Long.parseLong(f[3]), Long.parseLong(f[4]),
                                Long.parseLong(f[5]), f[6]));
                    }
                }
                case "M" -> {
                    if (f.length == 7 || f.length == 13) { // values and versions, then each read's start and end
                        wideReads.add(f);
                    }
                }
                case "X" -> {
                    if (f.length == 6) {
                        wideGetAlls.add(f);
                    }
                }
                case "Y" -> {
                    if (f.length == 6) {
                        wideScans.add(f);
                    }
                }
                case "G" -> {
                    if (f.length == 6) {
                        groupReads.add(f);
                    }
                }
                default -> {
                    // a line cut by a SIGKILL
                }
            }
        }
        for (String[] s : started.values()) { // in flight when the process died: outcome unknown
            writes.put(s[1], new Write(s[1], s[2], s[3], Integer.parseInt(s[4]), Long.parseLong(s[5]), Long.MAX_VALUE,
                    "UNKNOWN", 0));
        }
    }

    private boolean keepsNothing(Write w) {
        return w.outcome().equals("FAIL") || w.outcome().equals("NOTAPPLIED");
    }

    /**
     * The wide group (keys on different partitions, written only by multi-partition atomic writes, all to one
     * value): whole at the end, and sequential point reads of its keys never go back (a read after one that saw
     * a write sees it or a later one), and a getAll or a scan of its keys sees one write on all of them, so no reader saw a
     * write partially.
     */
    void checkWide(Function<String, Optional<Versioned>> finalState, List<String> wide) {
        checkWhole(finalState, wide, "wide atomic group");
        for (String[] m : wideReads) {
            long previous = 0;
            for (int i = 0; i < 3; i++) {
                String value = m[1 + 2 * i];
                long version = Long.parseLong(m[2 + 2 * i]);
                if (version < previous) {
                    wideAnomalies.add("sequential reads of the wide group went back: " + String.join(",", m));
                }
                previous = Math.max(previous, version);
                Write w = writes.get(value);
                if (w != null && keepsNothing(w)) {
                    violations.add("a read of the wide group saw write " + w.id() + " reported " + w.outcome());
                }
            }
        }
        for (String[] r : wideGetAlls) {
            if (!(r[3].equals(r[4]) && r[4].equals(r[5]))) {
                violations.add("a getAll saw the wide group partial: " + String.join(",", r[3], r[4], r[5]));
            }
        }
        for (String[] r : wideScans) {
            if (!(r[3].equals(r[4]) && r[4].equals(r[5]))) {
                violations.add("a scan saw the wide group partial: " + String.join(",", r[3], r[4], r[5]));
            }
        }
    }

    /** @param finalState the final value and version of every key ("k..." keys and the group) */
    void check(Function<String, Optional<Versioned>> finalState, Collection<String> keys, List<String> group) {
        Map<String, List<Write>> ackedPuts = new HashMap<>();
        for (Write w : writes.values()) {
            if (w.kind().equals("put") && w.outcome().equals("OK")) {
                ackedPuts.computeIfAbsent(w.key(), k -> new ArrayList<>()).add(w);
            }
        }
        for (String k : keys) {
            Optional<Versioned> f = finalState.apply(k);
            long maxAcked = 0;
            for (Write w : ackedPuts.getOrDefault(k, List.of())) {
                maxAcked = Math.max(maxAcked, w.version());
            }
            if (f.isEmpty()) {
                if (maxAcked > 0) {
                    violations.add(k + ": absent at the end, but a put of version " + maxAcked + " was acknowledged");
                }
                continue;
            }
            String value = new String(f.get().value(), java.nio.charset.StandardCharsets.UTF_8);
            long version = f.get().version();
            if (version < maxAcked) {
                violations.add(k + ": final version " + version + " is older than the acknowledged " + maxAcked);
            }
            Write w = writes.get(value);
            if (w == null) {
                violations.add(k + ": final value '" + value + "' was never written");
            } else if (keepsNothing(w)) {
                violations.add(k + ": final value '" + value + "' is of a write reported " + w.outcome());
            } else if (w.outcome().equals("OK") && w.kind().equals("put") && w.version() != version) {
                violations.add(k + ": final value '" + value + "' has version " + version + " but was acknowledged"
                        + " with " + w.version());
            }
        }
        checkGroup(finalState, group);
        checkReads(ackedPuts);
    }

    /** A group written only by atomic writes of one value to all its keys is whole at the end, of a kept write. */
    private void checkWhole(Function<String, Optional<Versioned>> finalState, List<String> keys, String label) {
        List<String> finals = new ArrayList<>();
        for (String k : keys) {
            finals.add(finalState.apply(k).map(v -> new String(v.value(), java.nio.charset.StandardCharsets.UTF_8))
                    .orElse("-"));
        }
        if (finals.stream().distinct().count() != 1) {
            violations.add(label + " is partial at the end: " + finals);
        }
        Write last = writes.get(finals.get(0));
        if (last != null && keepsNothing(last)) {
            violations.add(label + " holds the write " + last.id() + " reported " + last.outcome());
        }
    }

    private void checkGroup(Function<String, Optional<Versioned>> finalState, List<String> group) {
        checkWhole(finalState, group, "atomic group");
        for (String[] r : groupReads) {
            if (!(r[3].equals(r[4]) && r[4].equals(r[5]))) {
                violations.add("a getAll saw the atomic group partial: " + String.join(",", r[3], r[4], r[5]));
            }
            Write w = writes.get(r[3]);
            if (w != null && keepsNothing(w)) {
                violations.add("a getAll saw atomic write " + w.id() + " that was reported " + w.outcome());
            }
        }
    }

    private void checkReads(Map<String, List<Write>> ackedPuts) {
        Map<String, TreeMap<Long, Long>> maxVersionByEnd = new HashMap<>();
        for (Map.Entry<String, List<Write>> e : ackedPuts.entrySet()) {
            TreeMap<Long, Long> m = new TreeMap<>();
            for (Write w : e.getValue()) {
                m.merge(w.end(), w.version(), Math::max);
            }
            long running = 0;
            for (Map.Entry<Long, Long> x : m.entrySet()) {
                running = Math.max(running, x.getValue());
                x.setValue(running);
            }
            maxVersionByEnd.put(e.getKey(), m);
        }
        Map<String, TreeMap<Long, Long>> readsByEnd = new HashMap<>();
        for (Read r : reads) {
            readsByEnd.computeIfAbsent(r.key(), k -> new TreeMap<>()).merge(r.end(), r.version(), Math::max);
        }
        for (TreeMap<Long, Long> m : readsByEnd.values()) {
            long running = 0;
            for (Map.Entry<Long, Long> x : m.entrySet()) {
                running = Math.max(running, x.getValue());
                x.setValue(running);
            }
        }
        for (Read r : reads) {
            Map.Entry<Long, Long> before = maxVersionByEnd.getOrDefault(r.key(), new TreeMap<>())
                    .lowerEntry(r.start());
            if (before != null && r.version() < before.getValue()) {
                violations.add("stale read of " + r.key() + " (partition " + r.partition() + "): version "
                        + r.version() + " at " + r.start() + ", but version " + before.getValue()
                        + " was acknowledged before the read began");
            }
            Map.Entry<Long, Long> earlierRead = readsByEnd.get(r.key()).lowerEntry(r.start());
            if (earlierRead != null && r.version() < earlierRead.getValue()) {
                violations.add("stale read of " + r.key() + ": version " + r.version() + " after a read that ended"
                        + " earlier returned " + earlierRead.getValue());
            }
            if (!r.value().equals("-")) {
                Write w = writes.get(r.value());
                if (w == null) {
                    violations.add("read of " + r.key() + " returned '" + r.value() + "', never written");
                } else if (keepsNothing(w)) {
                    violations.add("read of " + r.key() + " returned the write " + w.id() + " reported "
                            + w.outcome());
                } else if (w.kind().equals("put") && w.outcome().equals("OK") && w.version() != r.version()) {
                    violations.add("read of " + r.key() + " returned '" + r.value() + "' with version "
                            + r.version() + ", acknowledged with " + w.version());
                }
            }
        }
    }

    /** @return counts for the report: writes by outcome, reads */
    String summary() {
        Map<String, Integer> by = new TreeMap<>();
        for (Write w : writes.values()) {
            by.merge(w.kind() + "." + w.outcome(), 1, Integer::sum);
        }
        return "writes " + by + ", reads " + reads.size() + ", group reads " + groupReads.size()
                + ", wide getAlls " + wideGetAlls.size() + ", wide scans " + wideScans.size()
                + ", wide sequential reads " + wideReads.size();
    }
}
