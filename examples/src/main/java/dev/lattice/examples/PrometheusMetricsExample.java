package dev.lattice.examples;

import dev.lattice.engine.Lattice;
import dev.lattice.engine.LatticeConfig;
import dev.lattice.engine.Tree;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

import java.nio.charset.StandardCharsets;
import java.util.stream.Collectors;

/**
 * Lattice meters on a Prometheus registry ({@code io.micrometer:micrometer-registry-prometheus}): pass the
 * registry to the builder, then serve {@link PrometheusMeterRegistry#scrape()} on your {@code /metrics} endpoint.
 * The meters are listed in docs/engine.md (Metrics). Runs on any provider URI (default {@code memory:metrics}).
 */
public final class PrometheusMetricsExample {

    private PrometheusMetricsExample() {
    }

    /**
     * @param args optional provider URI
     */
    public static void main(String[] args) {
        System.out.println(run(args.length > 0 ? args[0] : "memory:metrics"));
    }

    /**
     * Writes 1,000 keys and returns the {@code lattice_*} lines of a scrape.
     *
     * @param uri the provider URI
     * @return the Prometheus text lines of Lattice's meters
     */
    static String run(String uri) {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        try (Lattice lattice = Lattice.open(LatticeConfig.builder().uri(uri).meterRegistry(registry).build())) {
            Tree t = lattice.tree("events");
            for (int i = 0; i < 1_000; i++) {
                t.put("e-" + i, ("event " + i).getBytes(StandardCharsets.UTF_8));
            }
            return registry.scrape().lines().filter(l -> l.contains("lattice_")).collect(Collectors.joining("\n"));
        } finally {
            registry.close();
        }
    }
}
