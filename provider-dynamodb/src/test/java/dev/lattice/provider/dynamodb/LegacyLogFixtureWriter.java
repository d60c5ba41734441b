package dev.lattice.provider.dynamodb;

import dev.lattice.spi.EncodedBatch;
import dev.lattice.spi.Fence;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ScanResponse;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Wrote {@link LegacyLogFixture}'s resource, once, with the provider at commit 832d22b (run from test sources:
 * {@code java ... LegacyLogFixtureWriter <output file>}). Kept to document how the fixture was made; running it with
 * later code writes that code's layout instead, which is not what the fixture is for.
 */
final class LegacyLogFixtureWriter {

    private LegacyLogFixtureWriter() {
    }

    public static void main(String[] args) throws IOException {
        DynamoTestBackend.Storage storage = DynamoTestBackend.newStorage("legacy");
        List<String> lines = new ArrayList<>();
        try (DynamoDbWalStorageProvider p = DynamoDbWalStorageProvider.open(DynamoTestBackend.rawClient(),
                storage.settings())) {
            List<EncodedBatch> batches = LegacyLogFixture.committedBatches();
            Fence f1 = p.claim(LegacyLogFixture.LOG);
            p.reconcile(LegacyLogFixture.LOG, f1);
            for (EncodedBatch b : batches.subList(0, 10)) {
                p.append(LegacyLogFixture.LOG, f1, b);
            }
            p.trim(LegacyLogFixture.LOG, f1, LegacyLogFixture.TRIMMED_THROUGH);
            Fence f2 = p.claim(LegacyLogFixture.LOG);
            p.reconcile(LegacyLogFixture.LOG, f2);
            for (EncodedBatch b : batches.subList(10, 15)) {
                p.append(LegacyLogFixture.LOG, f2, b);
            }
            p.checkpoints().publish(LegacyLogFixture.LOG, f2, LegacyLogFixture.CHECKPOINT_THROUGH,
                    LegacyLogFixture.CHECKPOINT_FORMAT, new ByteArrayInputStream(LegacyLogFixture.checkpointBytes()));
            p.stage(LegacyLogFixture.LOG, f2, LegacyLogFixture.leftover());
            Map<String, AttributeValue> start = null;
            do {
                Map<String, AttributeValue> s = start;
                ScanResponse r = DynamoTestBackend.rawClient().scan(b -> {
                    b.tableName(storage.table).consistentRead(true);
                    if (s != null) {
                        b.exclusiveStartKey(s);
                    }
                });
                for (Map<String, AttributeValue> item : r.items()) {
                    lines.add(LegacyLogFixture.encode(item));
                }
                start = r.hasLastEvaluatedKey() && !r.lastEvaluatedKey().isEmpty() ? r.lastEvaluatedKey() : null;
            } while (start != null);
        } finally {
            storage.drop();
        }
        lines.sort(null);
        lines.add(0, "# DynamoDB provider items written at commit 832d22b by LegacyLogFixtureWriter;"
                + " see LegacyLogFixture");
        Files.write(Path.of(args[0]), lines, StandardCharsets.UTF_8);
        System.out.println("wrote " + (lines.size() - 1) + " items to " + args[0]);
        System.exit(0);
    }
}
