package dev.lattice.provider.postgres;

import dev.lattice.engine.Lattice;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Issue 18: {@code Lattice.dropTree} on PostgreSQL leaves nothing of the tree on the provider:
 * no log listed, no run, no checkpoint, no entry, durably; the other tree is kept.
 */
@ExtendWith(PostgresTestServer.class)
class PostgresTreeDropTest {

    @Test
    void dropTreeLeavesNothingOnTheProvider() throws Exception {
        dev.lattice.engine.TreeDropScenario.dropTreeLeavesNothingOnTheProvider(PostgresConformanceTest.freshSchema());
    }
}
