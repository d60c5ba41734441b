package dev.lattice.provider.dynamodb;

import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.LogId;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static dev.lattice.conformance.WalTestSupport.batch;
import static dev.lattice.conformance.WalTestSupport.randomBytes;

/**
 * A log written by the provider as it was at commit 832d22b (before trim stopped raising the head's version and
 * counters moved to {@code ADD}), stored item by item in the test resource {@value #RESOURCE}, and what it must
 * hold. The scenario ({@link LegacyLogFixtureWriter} ran it once):
 * <ol>
 *   <li>claim (epoch 1); 10 batches of 10 entries, offsets 0..99, entry sizes 40..49 bytes by batch;</li>
 *   <li>trim through 25 (the batch 20..29 straddles the watermark);</li>
 *   <li>claim (epoch 2), reconcile; 5 batches of 10 entries, offsets 100..149, 60 bytes each (a second commit
 *       segment);</li>
 *   <li>checkpoint through 120, format 3, {@value #CHECKPOINT_BYTES} bytes;</li>
 *   <li>batch 150..159 staged and never committed (a leftover for reconcile).</li>
 * </ol>
 * Stateless.
 */
final class LegacyLogFixture {

    /** Classpath resource holding the items, one per line. */
    static final String RESOURCE = "legacy-v1-log.items";
    static final LogId LOG = new LogId("legacy", 3);
    static final long SEED = 832L;
    static final long TRIMMED_THROUGH = 25;
    static final long CHECKPOINT_THROUGH = 120;
    static final int CHECKPOINT_FORMAT = 3;
    static final int CHECKPOINT_BYTES = 3000;

    private LegacyLogFixture() {
    }

    /** @return the committed batches, in order (0..149) */
    static List<EncodedBatch> committedBatches() {
        List<EncodedBatch> out = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            out.add(batch(SEED, i * 10L, 10, 40 + i));
        }
        for (int i = 0; i < 5; i++) {
            out.add(batch(SEED + 1, 100 + i * 10L, 10, 60));
        }
        return out;
    }

    /** @return the batch staged above the tail and never committed */
    static EncodedBatch leftover() {
        return batch(SEED + 2, 150, 10, 70);
    }

    /** @return the checkpoint's bytes */
    static byte[] checkpointBytes() {
        return randomBytes(SEED + 3, CHECKPOINT_BYTES);
    }

    /**
     * Encodes an item as one line: tab-separated {@code name=TYPE:value}, with N and S as text, B in base64 and
     * NS / SS as comma-separated lists (set members never contain commas here).
     */
    static String encode(Map<String, AttributeValue> item) {
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<String, AttributeValue> e : new TreeMap<>(item).entrySet()) {
            AttributeValue v = e.getValue();
            String text;
            if (v.n() != null) {
                text = "N:" + v.n();
            } else if (v.s() != null) {
                text = "S:" + v.s();
            } else if (v.b() != null) {
                text = "B:" + Base64.getEncoder().encodeToString(v.b().asByteArray());
            } else if (v.hasNs()) {
                text = "NS:" + String.join(",", v.ns());
            } else if (v.hasSs()) {
                text = "SS:" + String.join(",", v.ss());
            } else {
                throw new IllegalArgumentException("attribute type of " + e.getKey() + " not supported: " + v);
            }
            sb.append(sb.length() == 0 ? "" : "\t").append(e.getKey()).append('=').append(text);
        }
        return sb.toString();
    }

    /** Decodes a line written by {@link #encode}. */
    static Map<String, AttributeValue> decode(String line) {
        Map<String, AttributeValue> item = new LinkedHashMap<>();
        for (String field : line.split("\t")) {
            int eq = field.indexOf('=');
            int colon = field.indexOf(':', eq);
            String name = field.substring(0, eq);
            String type = field.substring(eq + 1, colon);
            String value = field.substring(colon + 1);
            item.put(name, switch (type) {
                case "N" -> AttributeValue.fromN(value);
                case "S" -> AttributeValue.fromS(value);
                case "B" -> AttributeValue.fromB(SdkBytes.fromByteArray(Base64.getDecoder().decode(value)));
                case "NS" -> AttributeValue.fromNs(Arrays.asList(value.split(",")));
                case "SS" -> AttributeValue.fromSs(Arrays.asList(value.split(",")));
                default -> throw new IllegalArgumentException("unknown attribute type " + type + " in " + field);
            });
        }
        return item;
    }

    /**
     * Loads the stored items into a table (which must exist), under a key prefix.
     *
     * @param keyPrefix the provider's key prefix, empty for none (the items were written without one)
     * @return the number of items written
     */
    static int load(DynamoDbClient client, String table, String keyPrefix) {
        int n = 0;
        try (InputStream in = LegacyLogFixture.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("test resource " + RESOURCE + " is missing");
            }
            BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
            for (String line = r.readLine(); line != null; line = r.readLine()) {
                if (line.isBlank() || line.startsWith("#")) {
                    continue;
                }
                Map<String, AttributeValue> item = decode(line);
                if (!keyPrefix.isEmpty()) {
                    item.put(Layout.PK, AttributeValue.fromS(keyPrefix + "|" + item.get(Layout.PK).s()));
                }
                client.putItem(b -> b.tableName(table).item(item));
                n++;
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return n;
    }
}
