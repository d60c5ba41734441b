package dev.lattice.bench.cli;

import dev.lattice.cli.CliException;
import dev.lattice.cli.CommonOptions;
import dev.lattice.cli.ExitCodes;
import dev.lattice.cli.ScratchLocation;
import dev.lattice.cli.Support;
import dev.lattice.cli.Text;
import dev.lattice.bench.ycsb.LatticeYcsbClient;
import dev.lattice.bench.ycsb.YcsbRunner;
import dev.lattice.engine.Lattice;
import dev.lattice.engine.LatticeConfig;
import dev.lattice.spi.ProviderDescriptor;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Callable;

/**
 * {@code lattice bench ycsb}: the real YCSB 0.17 client, in this process, against Lattice through
 * {@link LatticeYcsbClient}: the load phase, then the run phase of one standard core workload; prints YCSB's own
 * report of each phase. Exit code {@link ExitCodes#FAILURE} when an operation returned YCSB's {@code ERROR}.
 */
@Command(name = "ycsb", mixinStandardHelpOptions = true,
        description = {"YCSB core workload (the real YCSB 0.17 client, in-process) against Lattice: load --records "
                + "records, then run --operations operations from --threads client threads; prints YCSB's report "
                + "of each phase (throughput, latency percentiles per operation, return codes).",
                "Mapping: one tree per YCSB table, the record's fields encoded in one value "
                        + "(see docs/benchmarks.md). Runs in a fresh location derived from --provider "
                        + "(chronicle:DIR -> DIR/.bench/ycsb-W, memory:NAME -> memory:NAME.bench.ycsb-W), deleted "
                        + "afterwards unless --keep."})
public final class YcsbBenchCommand implements Callable<Integer> {

    @Mixin
    CommonOptions common;

    @Spec
    CommandSpec spec;

    @Option(names = "--workload", paramLabel = "W", defaultValue = "a",
            description = "Core workload: a (50/50 read/update), b (95/5 read/update), c (read only), d (read "
                    + "latest, 5% inserts), e (scans, 5% inserts), f (read-modify-write) (default ${DEFAULT-VALUE}).")
    String workload;

    @Option(names = "--records", paramLabel = "N", defaultValue = "10000",
            description = "Records loaded in the load phase (recordcount; default ${DEFAULT-VALUE}).")
    int records;

    @Option(names = "--operations", paramLabel = "M", defaultValue = "10000",
            description = "Operations of the run phase (operationcount; default ${DEFAULT-VALUE}).")
    int operations;

    @Option(names = "--threads", paramLabel = "T", defaultValue = "1",
            description = "YCSB client threads, both phases (threadcount; default ${DEFAULT-VALUE}).")
    int threads;

    @Option(names = "--partitions", paramLabel = "N", defaultValue = "" + LatticeConfig.DEFAULT_PARTITIONS,
            description = "Partitions (logs) of the YCSB table's tree (default ${DEFAULT-VALUE}).")
    int partitions;

    @Option(names = "--update", paramLabel = "MODE", defaultValue = "rmw",
            description = "How an update merges fields: rmw (get then put, not atomic) or cas (getVersioned + "
                    + "putIfVersion, retried; atomic) (default ${DEFAULT-VALUE}).")
    String update;

    @Option(names = "-p", paramLabel = "NAME=VALUE",
            description = "Further YCSB property, repeatable (e.g. -p fieldcount=4 -p requestdistribution=uniform); "
                    + "wins over the workload file.")
    Map<String, String> extra = new LinkedHashMap<>();

    @Option(names = "--keep", description = "Keep the data instead of deleting it.")
    boolean keep;

    /** Creates the command (picocli fills the fields). */
    public YcsbBenchCommand() {
    }

    /**
     * Runs the load and run phases and prints both reports.
     *
     * @return {@link ExitCodes#OK} when no operation returned ERROR
     * @throws CliException with {@link ExitCodes#USAGE} for bad options, {@link ExitCodes#FAILURE} when operations
     *     returned ERROR
     */
    @Override
    public Integer call() throws Exception {
        String w = workload.toLowerCase(Locale.ROOT);
        if (!YcsbRunner.WORKLOADS.contains(w)) {
            throw CliException.usage("--workload must be one of a, b, c, d, e, f, got '" + workload + "'");
        }
        if (records < 1) {
            throw CliException.usage("--records must be >= 1, got " + records);
        }
        if (operations < 1) {
            throw CliException.usage("--operations must be >= 1, got " + operations);
        }
        if (threads < 1 || threads > 4096) {
            throw CliException.usage("--threads must be in 1..4096, got " + threads);
        }
        if (partitions < 1 || partitions > dev.lattice.spi.LogId.MAX_PARTITION + 1) {
            throw CliException.usage("--partitions must be in 1.." + (dev.lattice.spi.LogId.MAX_PARTITION + 1)
                    + ", got " + partitions);
        }
        if (!update.equals("rmw") && !update.equals("cas")) {
            throw CliException.usage("--update must be rmw or cas, got '" + update + "'");
        }
        Support.checkUri(common.provider());
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();

        String runId = Long.toString(System.currentTimeMillis(), 36);
        ScratchLocation where = ScratchLocation.derive(common.provider(), "bench", "ycsb-" + w, runId);
        where.prepare();
        Properties props = YcsbRunner.workload(w);
        props.setProperty("db", LatticeYcsbClient.class.getName());
        props.setProperty("recordcount", Integer.toString(records));
        props.setProperty("operationcount", Integer.toString(operations));
        props.setProperty("threadcount", Integer.toString(threads));
        props.setProperty("table", where.tree("usertable"));
        props.setProperty(LatticeYcsbClient.PROVIDER_PROPERTY, where.uri());
        props.setProperty(LatticeYcsbClient.PARTITIONS_PROPERTY, Integer.toString(partitions));
        props.setProperty(LatticeYcsbClient.UPDATE_PROPERTY, update);
        extra.forEach(props::setProperty);

        YcsbRunner.Result result;
        String descriptor;
        try {
            Lattice pinned;
            try {
                pinned = LatticeYcsbClient.pin(where.uri(), partitions);
            } catch (IllegalArgumentException e) {
                throw CliException.usage("cannot open provider '" + common.provider() + "': " + e.getMessage());
            }
            try {
                ProviderDescriptor d = pinned.providerDescriptor();
                descriptor = "provider " + Support.redact(common.provider()) + " (" + d.name() + " " + d.version() + ", durability "
                        + d.durability() + ")";
                try {
                    result = YcsbRunner.run(props, m -> {
                        err.println("bench: " + m);
                        err.flush();
                    });
                } catch (IllegalArgumentException e) {
                    throw CliException.usage(e.getMessage());
                }
            } finally {
                LatticeYcsbClient.unpin(where.uri());
            }
        } finally {
            if (!keep) {
                where.wipe();
            }
        }
        out.println("lattice bench ycsb, " + LocalDate.now(ZoneOffset.UTC) + ", workload " + w + ", " + descriptor);
        out.println("settings: records " + Text.count(records) + ", operations " + Text.count(operations)
                + ", threads " + threads + ", partitions " + partitions + ", update " + update + ", data "
                + where.where() + (keep ? " (kept)" : " (deleted)") + "; JVM " + System.getProperty("java.version")
                + ", " + Runtime.getRuntime().availableProcessors() + " cores, load average "
                + String.format(Locale.ROOT, "%.1f",
                java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage()));
        out.println();
        out.println("# load phase (YCSB -load)");
        out.print(result.load().report());
        out.println();
        out.println("# run phase (YCSB -t)");
        out.print(result.run().report());
        out.flush();
        long errors = result.load().errors() + result.run().errors();
        if (errors > 0) {
            throw new CliException(ExitCodes.FAILURE, errors + " YCSB operation(s) returned ERROR (the first one's "
                    + "cause is printed above)");
        }
        return ExitCodes.OK;
    }
}
