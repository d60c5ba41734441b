package dev.lattice.provider.postgres;

import dev.lattice.spi.WalStorageException;

/**
 * Creates the provider's tables on first use and checks the layout version. Idempotent: every object is created
 * with {@code IF NOT EXISTS}, inside one transaction that first takes a transaction-scoped advisory lock derived
 * from the schema name, so two processes opening a fresh schema at once take turns instead of racing on the
 * catalog (concurrent {@code CREATE TABLE IF NOT EXISTS} can otherwise fail with a unique violation in
 * {@code pg_type}). When the version table already exists nothing is locked or created, so a role without
 * {@code CREATE} rights can use a schema an administrator prepared. A version 1 schema (no run tables) is upgraded
 * in place: the run tables are created and the version row moves to 2, under the same lock. Stateless and
 * thread-safe.
 */
final class SchemaManager {

    private SchemaManager() {
    }

    /**
     * Makes sure the schema holds the tables of {@link Sql#SCHEMA_VERSION}.
     *
     * @param p the provider's backend calls (and its SQL)
     * @throws WalStorageException if the schema holds another layout version (neither 1 nor 2)
     * @throws dev.lattice.spi.ProviderUnavailableException if the server cannot be reached
     */
    static void ensure(PostgresCalls p) {
        Sql sql = p.sql();
        String table = "\"" + sql.schema + "\".schema_version";
        boolean exists = p.call(null, "checking schema " + sql.schema, h -> h.createQuery(
                "SELECT to_regclass(:t) IS NOT NULL").bind("t", table).mapTo(Boolean.class).one());
        if (!exists) {
            p.tx(null, "creating schema " + sql.schema, h -> {
                h.createQuery("SELECT 1 FROM (SELECT pg_advisory_xact_lock(:k)) x").bind("k", p.schemaLockKey())
                        .mapTo(Integer.class).one();
                for (String ddl : sql.ddl) {
                    h.execute(ddl);
                }
                h.createUpdate(sql.insertVersion).bind("version", Sql.SCHEMA_VERSION).execute();
                return null;
            });
        }
        Integer version = readVersion(p);
        if (version != null && version == Sql.SCHEMA_VERSION_1) {
            // Version 2 only adds the run tables: create them and move the version, under the same lock.
            p.tx(null, "upgrading schema " + sql.schema, h -> {
                h.createQuery("SELECT 1 FROM (SELECT pg_advisory_xact_lock(:k)) x").bind("k", p.schemaLockKey())
                        .mapTo(Integer.class).one();
                for (String ddl : sql.runDdl) {
                    h.execute(ddl);
                }
                h.createUpdate(sql.upgradeVersion).bind("to", Sql.SCHEMA_VERSION).bind("from", Sql.SCHEMA_VERSION_1)
                        .execute();
                return null;
            });
            version = readVersion(p);
        }
        if (version == null || version != Sql.SCHEMA_VERSION) {
            throw new WalStorageException(null, "schema '" + sql.schema + "' holds layout version " + version
                    + "; this provider reads and writes version " + Sql.SCHEMA_VERSION);
        }
    }

    private static Integer readVersion(PostgresCalls p) {
        return p.call(null, "reading the schema version of " + p.sql().schema, h -> h.createQuery(
                p.sql().readVersion).mapTo(Integer.class).findOne().orElse(null));
    }
}
