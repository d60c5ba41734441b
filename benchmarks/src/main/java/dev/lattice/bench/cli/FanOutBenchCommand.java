package dev.lattice.bench.cli;

import dev.lattice.cli.CliException;
import dev.lattice.cli.ExitCodes;
import dev.lattice.cli.DurationConverter;
import dev.lattice.cli.Main;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

import java.io.File;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code lattice bench fan-out}: sustained keys/s of one tree spread over N throttled accounts ({@link FanOutBenchmark}),
 * as a table (Markdown with {@code --markdown}) and optionally a PNG chart.
 */
@Command(name = "fan-out", mixinStandardHelpOptions = true,
        description = {"Multi-account fan-out: one tree's logs placed round-robin over N in-memory accounts, each "
                + "throttled to a ceiling of requests/s and bytes/s so that the account binds; closed-loop writers "
                + "for a fixed window. Reports keys/s per N, speedup over the first N, per-account utilisation."})
public final class FanOutBenchCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--accounts", split = ",", defaultValue = "1,2,4,8", paramLabel = "N",
            description = "Account counts (default ${DEFAULT-VALUE}).")
    List<Integer> accounts;

    @Option(names = "--partitions", defaultValue = "32", paramLabel = "N",
            description = "Logs of the tree (default ${DEFAULT-VALUE}; at least the largest account count, or some "
                    + "accounts get no log).")
    int partitions;

    @Option(names = "--writers", defaultValue = "64", paramLabel = "N",
            description = "Closed-loop writer threads (default ${DEFAULT-VALUE}).")
    int writers;

    @Option(names = "--duration", defaultValue = "8s", converter = DurationConverter.class, paramLabel = "DURATION",
            description = "Measured window per case, after a warm-up of a quarter of it (default ${DEFAULT-VALUE}).")
    Duration duration;

    @Option(names = "--requests-per-second", defaultValue = "250", paramLabel = "R",
            description = "Each account's request ceiling (default ${DEFAULT-VALUE}).")
    double requestsPerSecond;

    @Option(names = "--bytes-per-second", defaultValue = "1048576", paramLabel = "B",
            description = "Each account's payload bandwidth ceiling (default ${DEFAULT-VALUE}).")
    double bytesPerSecond;

    @Option(names = "--value-bytes", defaultValue = "100", paramLabel = "BYTES",
            description = "Value size (default ${DEFAULT-VALUE}).")
    int valueBytes;

    @Option(names = "--batch-keys", defaultValue = "100", paramLabel = "N",
            description = "Keys per putAll in the batch mode (default ${DEFAULT-VALUE}).")
    int batchKeys;

    @Option(names = "--modes", split = ",", defaultValue = "POINT,BATCH", paramLabel = "MODE",
            description = "point and/or batch writes (default ${DEFAULT-VALUE}).")
    List<FanOutBenchmark.Mode> modes;

    @Option(names = "--markdown", description = "Print a Markdown table.")
    boolean markdown;

    @Option(names = "--chart", paramLabel = "PNG", description = "Also write a PNG chart to this file.")
    File chart;

    /** Creates the command (picocli fills the fields). */
    public FanOutBenchCommand() {
    }

    /**
     * Runs the benchmark and prints its table.
     *
     * @return {@link ExitCodes#OK}
     * @throws Exception if a case fails (reported by {@link Main} as one line)
     */
    @Override
    public Integer call() throws Exception {
        if (accounts.isEmpty() || accounts.stream().anyMatch(n -> n < 1 || n > 64) || partitions < 1 || writers < 1
                || requestsPerSecond <= 0 || bytesPerSecond <= 0 || batchKeys < 1) {
            throw CliException.usage("accounts must be 1..64 and every other figure positive");
        }
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        FanOutBenchmark.Settings s = new FanOutBenchmark.Settings(accounts, partitions, writers, duration,
                requestsPerSecond, bytesPerSecond, valueBytes, batchKeys, modes);
        List<FanOutBenchmark.Result> results = FanOutBenchmark.run(s, line -> {
            err.println(line);
            err.flush();
        });
        out.printf("lattice bench fan-out: %d logs round-robin, %d writers, window %s, per account %.0f requests/s "
                        + "and %.0f bytes/s, values %d B, batches of %d keys; %d cores%n", partitions, writers, duration,
                requestsPerSecond, bytesPerSecond, valueBytes, batchKeys, Runtime.getRuntime().availableProcessors());
        String sep = markdown ? " | " : "  ";
        if (markdown) {
            out.println("| mode | accounts | keys/s | speedup | speedup / N | request utilisation | byte utilisation "
                    + "| load average |");
            out.println("|---|---:|---:|---:|---:|---:|---:|---:|");
        } else {
            out.println("mode   accounts  keys/s     speedup  speedup/N  req-util  byte-util  load");
        }
        for (FanOutBenchmark.Result r : results) {
            String row = String.join(sep, r.mode().name().toLowerCase(), Integer.toString(r.accounts()),
                    String.format("%,.0f", r.keysPerSecond()), String.format("%.2f", r.speedup()),
                    String.format("%.2f", r.speedup() / r.accounts()), String.format("%.0f%%", 100 * r.requestUtilisation()),
                    String.format("%.0f%%", 100 * r.byteUtilisation()), String.format("%.1f", r.cpuLoad()));
            out.println(markdown ? "| " + row + " |" : row);
        }
        if (chart != null) {
            writeChart(results);
            out.println("chart: " + chart);
        }
        return ExitCodes.OK;
    }

    private void writeChart(List<FanOutBenchmark.Result> results) throws java.io.IOException {
        XYSeriesCollection data = new XYSeriesCollection();
        for (FanOutBenchmark.Mode mode : modes) {
            XYSeries series = new XYSeries(mode.name().toLowerCase() + " writes");
            XYSeries ideal = new XYSeries(mode.name().toLowerCase() + " ideal (N x first)");
            double base = 0;
            for (FanOutBenchmark.Result r : results) {
                if (r.mode() == mode) {
                    series.add(r.accounts(), r.keysPerSecond());
                    if (base == 0) {
                        base = r.keysPerSecond() / r.accounts();
                    }
                    ideal.add(r.accounts(), base * r.accounts());
                }
            }
            data.addSeries(series);
            data.addSeries(ideal);
        }
        JFreeChart c = ChartFactory.createXYLineChart("Lattice multi-account fan-out", "accounts",
                "sustained keys/s", data, PlotOrientation.VERTICAL, true, false, false);
        org.jfree.chart.axis.LogAxis y = new org.jfree.chart.axis.LogAxis("sustained keys/s (log scale)");
        y.setBase(10);
        y.setSmallestValue(1);
        c.getXYPlot().setRangeAxis(y);
        File parent = chart.getAbsoluteFile().getParentFile();
        if (parent != null) {
            parent.mkdirs();
        }
        ChartUtils.saveChartAsPNG(chart, c, 900, 520);
    }
}
