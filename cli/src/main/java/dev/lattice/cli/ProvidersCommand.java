package dev.lattice.cli;

import dev.lattice.spi.ProviderDescriptor;
import dev.lattice.spi.ProviderFeature;
import dev.lattice.spi.ProviderLimits;
import dev.lattice.spi.Providers;
import dev.lattice.spi.WalStorageProvider;
import dev.lattice.spi.WalStorageProviderFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * {@code lattice providers}: the provider schemes found on the classpath (ServiceLoader) with their descriptions,
 * and the limits and durability of those that can be opened without touching anyone's data: {@code memory} (a
 * throw-away storage), {@code chronicle} (a temporary directory, deleted afterwards), and the provider named with an
 * explicit {@code --provider}.
 */
@Command(name = "providers", mixinStandardHelpOptions = true,
        description = "List the provider schemes on the classpath, with limits and durability where they can be "
                + "opened safely (memory, chronicle in a temp directory, and an explicit --provider).")
public final class ProvidersCommand implements Callable<Integer> {

    @Mixin
    CommonOptions common;

    @Spec
    CommandSpec spec;

    /** Creates the command (picocli fills the fields). */
    public ProvidersCommand() {
    }

    /**
     * Prints the schemes and what could be described.
     *
     * @return {@link ExitCodes#OK}
     * @throws CliException with {@link ExitCodes#USAGE} for a bad explicit {@code --provider}
     */
    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        boolean explicit = spec.commandLine().getParseResult().hasMatchedOption("--provider");
        if (explicit) {
            Support.checkUri(common.provider());
        }
        Map<String, WalStorageProviderFactory> factories = Providers.factories();
        Table list = new Table("scheme", "description");
        factories.forEach((scheme, f) -> list.row(scheme, f.description()));
        out.print(list.render());
        out.println();

        Map<String, ProviderDescriptor> described = new LinkedHashMap<>();
        Map<String, String> notes = new LinkedHashMap<>();
        for (String scheme : factories.keySet()) {
            try {
                switch (scheme) {
                    case "memory" -> described.put(scheme, describeMemory());
                    case "chronicle" -> described.put(scheme + " (temp dir)", describeChronicle());
                    default -> notes.put(scheme, "pass --provider " + uriForm(scheme, factories.get(scheme))
                            + " to open it and see its limits");
                }
            } catch (RuntimeException e) {
                notes.put(scheme, "could not open a throw-away instance: " + Main.describe(e));
            }
        }
        if (explicit) {
            try (WalStorageProvider p = Support.openProvider(common.provider())) {
                described.put(common.provider(), p.describe());
                notes.remove(Support.checkUri(common.provider()).getScheme().toLowerCase(Locale.ROOT));
            }
        }
        Table t = new Table("provider", "name/version", "durability", ">max entry", ">max batch",
                ">entries/batch", ">max checkpoint", "features");
        described.forEach((what, d) -> {
            ProviderLimits l = d.limits();
            t.row(what, d.name() + " " + d.version(), d.durability(), Text.bytes(l.maxEntryBytes()),
                    Text.bytes(l.maxBatchBytes()), Text.count(l.maxEntriesPerBatch()),
                    l.maxCheckpointBytes() == Long.MAX_VALUE ? "unbounded" : Text.bytes(l.maxCheckpointBytes()),
                    d.features().stream().map(ProviderFeature::name).sorted()
                            .map(s -> s.toLowerCase(Locale.ROOT)).collect(Collectors.joining(",")));
        });
        if (!t.isEmpty()) {
            out.print(t.render());
        }
        notes.forEach((scheme, note) -> out.println(scheme + ": " + note));
        return ExitCodes.OK;
    }

    /**
     * The URI form a factory's description shows for its scheme.
     *
     * @param scheme the scheme
     * @param f its factory
     * @return e.g. {@code postgres://host[:port]/database?user=...&schema=...}, else {@code <scheme>:...}
     */
    static String uriForm(String scheme, WalStorageProviderFactory f) {
        Matcher m = Pattern.compile("(?<![\\w-])" + Pattern.quote(scheme) + ":[^\\s,;()]+")
                .matcher(f.description());
        return m.find() ? m.group() : scheme + ":...";
    }

    private static ProviderDescriptor describeMemory() {
        String name = "providers-" + UUID.randomUUID();
        try (WalStorageProvider p = Providers.open("memory:" + name)) {
            return p.describe();
        } finally {
            dev.lattice.spi.memory.InMemoryStorage.dropNamed(name);
        }
    }

    private static ProviderDescriptor describeChronicle() {
        Path dir;
        try {
            dir = Files.createTempDirectory("lattice-providers-");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a temporary directory", e);
        }
        try (WalStorageProvider p = Providers.open("chronicle:" + dir.toAbsolutePath())) {
            return p.describe();
        } finally {
            try (Stream<Path> s = Files.walk(dir)) {
                s.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            } catch (IOException ignored) {
                // a temp directory left behind is harmless
            }
        }
    }
}
