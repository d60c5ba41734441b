package dev.lattice.provider.azure.tables;

import dev.lattice.provider.azure.tables.Records.CommittedBatch;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Read cache: decoded committed batches (immutable once committed), least recently used evicted past a byte budget.
 * Thread-safe.
 */
final class BatchCache {
        private final long maxBytes;
        private final LinkedHashMap<String, List<byte[]>> map = new LinkedHashMap<>(16, 0.75f, true);
        private final Map<String, Long> sizes = new TreeMap<>();
        private long bytes;

        BatchCache(long maxBytes) {
            this.maxBytes = maxBytes;
        }

        private static String key(String pk, CommittedBatch b) {
            return pk + "/" + b.rowPrefix();
        }

        synchronized List<byte[]> get(String pk, CommittedBatch b) {
            return map.get(key(pk, b));
        }

        synchronized void put(String pk, CommittedBatch b, List<byte[]> entries) {
            long size = 0;
            for (byte[] e : entries) {
                size += e.length + 16;
            }
            if (size > maxBytes / 4) {
                return;
            }
            String k = key(pk, b);
            if (map.put(k, entries) == null) {
                sizes.put(k, size);
                bytes += size;
            }
            var it = map.entrySet().iterator();
            while (bytes > maxBytes && it.hasNext()) {
                String old = it.next().getKey();
                it.remove();
                bytes -= sizes.remove(old);
            }
        }

        synchronized void clear() {
            map.clear();
            sizes.clear();
            bytes = 0;
        }
    }
