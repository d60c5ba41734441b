package dev.lattice.cluster;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalTime;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The write pause a hand-off caused, as the workload saw it: for each "hosted" or "releasing (hand-off)" line a node
 * logged for a partition in a time window, the gap between the last write on that partition acknowledged before
 * the line and the first one acknowledged after it (by any node); partitions that had no write acknowledged in the
 * window before the line are left out (they were down already, re-homed after an earlier fault). Used by {@link ClusterFaultTest} for the
 * failover figures of a graceful leave and of the hand-off to a joining node.
 */
final class HandOffPauses {

    private static final Pattern LINE = Pattern.compile("^(\\d\\d:\\d\\d:\\d\\d\\.\\d{3}) .*" + WorkloadNode.TREE
            + "/(\\d+): (hosted|releasing \\(hand-off\\))");

    private HandOffPauses() {
    }

    /**
     * @param log a node's log (slf4j-simple lines starting with the local time {@code HH:mm:ss.SSS})
     * @param marker "hosted" or "releasing (hand-off)"
     * @param fromMicros window start, microseconds since the epoch, inclusive
     * @param toMicros window end, exclusive
     * @return the pause per matching line, milliseconds, ascending
     */
    static List<Long> pauses(HistoryCheck check, Path log, String marker, long fromMicros, long toMicros)
            throws IOException {
        List<Long> out = new ArrayList<>();
        for (String line : Files.readAllLines(log)) {
            Matcher m = LINE.matcher(line);
            if (!m.find() || !m.group(3).equals(marker)) {
                continue;
            }
            long at = micros(LocalTime.parse(m.group(1)), fromMicros);
            if (at < fromMicros || at >= toMicros) {
                continue;
            }
            int partition = Integer.parseInt(m.group(2));
            long before = Long.MIN_VALUE;
            long after = Long.MAX_VALUE;
            for (HistoryCheck.Write w : check.writes.values()) {
                if (w.partition() != partition || !w.outcome().equals("OK")) {
                    continue;
                }
                if (w.end() < at) {
                    before = Math.max(before, w.end());
                } else {
                    after = Math.min(after, w.end());
                }
            }
            // a partition with no write acknowledged since the window began was not served then (re-homed after an
            // earlier fault): its pause is that fault's, not this hand-off's
            if (before >= fromMicros && after != Long.MAX_VALUE) {
                out.add((after - before) / 1000);
            }
        }
        Collections.sort(out);
        return out;
    }

    /** @return a summary "[a, b] ms (p50 x ms, max y ms)" of pauses */
    static String summary(List<Long> millis) {
        return millis + " ms" + (millis.isEmpty() ? "" : " (p50 " + millis.get(millis.size() / 2) + " ms, max "
                + millis.get(millis.size() - 1) + " ms)");
    }

    /** The local time of day on the date (around {@code nearMicros}) that puts it closest to that instant. */
    private static long micros(LocalTime time, long nearMicros) {
        ZoneId zone = ZoneId.systemDefault();
        LocalDate day = Instant.ofEpochSecond(nearMicros / 1_000_000).atZone(zone).toLocalDate();
        long best = 0;
        long bestDistance = Long.MAX_VALUE;
        for (int d = -1; d <= 1; d++) {
            Instant i = day.plusDays(d).atTime(time).atZone(zone).toInstant();
            long us = i.getEpochSecond() * 1_000_000L + i.getNano() / 1000;
            if (Math.abs(us - nearMicros) < bestDistance) {
                bestDistance = Math.abs(us - nearMicros);
                best = us;
            }
        }
        return best;
    }
}
