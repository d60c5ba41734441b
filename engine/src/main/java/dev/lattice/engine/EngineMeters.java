package dev.lattice.engine;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.DoubleSupplier;

/**
 * One {@link Lattice} instance's meters, registered by Micrometer's conventions: every meter carries the instance tag
 * {@value #NAME_TAG} (so two instances on one registry never collide), has a description and, where it measures an
 * amount, a base unit; the {@code partition} tag is dropped when the configuration says so (series then aggregate per
 * tree: counters and timers are shared, gauges report the sum of their sources); every meter is removed from the
 * registry when the instance closes.
 *
 * <p>Thread-safe.
 */
final class EngineMeters {

    /** The instance tag. */
    static final String NAME_TAG = "lattice.name";

    private static final Set<String> NAMES_IN_USE = ConcurrentHashMap.newKeySet();

    private final MeterRegistry registry;
    private final String name;
    private final boolean partitionTag;
    private final Set<Meter> owned = ConcurrentHashMap.newKeySet();
    private final Map<Meter.Id, List<DoubleSupplier>> gaugeSources = new ConcurrentHashMap<>();

    EngineMeters(MeterRegistry registry, String requestedName, boolean partitionTag) {
        this.registry = registry;
        this.partitionTag = partitionTag;
        String base = requestedName;
        String n = base;
        for (int i = 2; !NAMES_IN_USE.add(n); i++) {
            n = base + "-" + i;
        }
        this.name = n;
    }

    /**
     * The default instance name for a configuration: the default provider's URI without credentials or query
     * (stable across restarts of the same application), e.g. {@code chronicle:./data} or
     * {@code postgres://db.example:5432/app}; "lattice" when there is none.
     */
    static String defaultName(String uri) {
        if (uri == null || uri.isBlank()) {
            return "lattice";
        }
        try {
            URI u = URI.create(uri);
            if (u.isOpaque() && "jdbc".equalsIgnoreCase(u.getScheme()) && u.getSchemeSpecificPart().contains(":")) {
                return defaultName(u.getRawSchemeSpecificPart()); // jdbc:postgresql://user@h/db -> postgresql://h/db
            }
            if (u.isOpaque()) {
                String ssp = u.getSchemeSpecificPart();
                int q = ssp.indexOf('?');
                return u.getScheme() + ":" + (q >= 0 ? ssp.substring(0, q) : ssp);
            }
            StringBuilder b = new StringBuilder().append(u.getScheme()).append("://");
            if (u.getHost() != null) {
                b.append(u.getHost());
                if (u.getPort() >= 0) {
                    b.append(':').append(u.getPort());
                }
            }
            if (u.getPath() != null) {
                b.append(u.getPath());
            }
            return b.toString();
        } catch (IllegalArgumentException e) {
            int cut = uri.indexOf('?');
            String s = cut >= 0 ? uri.substring(0, cut) : uri;
            return s.replaceAll("//[^@/]*@", "//").toLowerCase(Locale.ROOT);
        }
    }

    String name() {
        return name;
    }

    /** Tags for a meter: the instance tag first, then {@code kv} pairs (the partition tag dropped if configured). */
    Tags tags(String... kv) {
        List<Tag> out = new ArrayList<>(kv.length / 2 + 1);
        out.add(Tag.of(NAME_TAG, name));
        for (int i = 0; i < kv.length; i += 2) {
            if (!partitionTag && kv[i].equals("partition")) {
                continue;
            }
            out.add(Tag.of(kv[i], kv[i + 1]));
        }
        return Tags.of(out);
    }

    Counter counter(String meter, String description, String unit, Tags tags) {
        return own(Counter.builder(meter).description(description).baseUnit(unit).tags(tags).register(registry));
    }

    Timer timer(String meter, String description, Tags tags) {
        return own(Timer.builder(meter).description(description).tags(tags).register(registry));
    }

    DistributionSummary summary(String meter, String description, String unit, Tags tags) {
        return own(DistributionSummary.builder(meter).description(description).baseUnit(unit).tags(tags)
                .register(registry));
    }

    /**
     * A gauge reporting {@code source}, or, when a gauge with the same id exists (the partition tag dropped), the sum
     * of all sources registered under it.
     */
    void gauge(String meter, String description, String unit, Tags tags, DoubleSupplier source) {
        Meter.Id probe = new Meter.Id(meter, tags, unit, description, Meter.Type.GAUGE);
        List<DoubleSupplier> sources = gaugeSources.computeIfAbsent(probe, id -> {
            List<DoubleSupplier> list = new CopyOnWriteArrayList<>();
            own(Gauge.builder(meter, list, l -> {
                double sum = 0;
                for (DoubleSupplier s : l) {
                    sum += s.getAsDouble();
                }
                return sum;
            }).description(description).baseUnit(unit).tags(tags).strongReference(true).register(registry));
            return list;
        });
        sources.add(source);
    }

    private <M extends Meter> M own(M m) {
        owned.add(m);
        return m;
    }

    /** Every meter this instance registered, for tests. */
    Set<Meter> owned() {
        return Set.copyOf(owned);
    }

    /** Removes every meter this instance registered and frees its name. Idempotent. */
    void close() {
        for (Meter m : owned) {
            registry.remove(m);
        }
        owned.clear();
        gaugeSources.clear();
        NAMES_IN_USE.remove(name);
    }
}
