package dev.lattice.cli;

import dev.lattice.spi.memory.InMemoryStorage;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * A throw-away provider location derived from the user's {@code --provider} URI, so that {@code demo} and
 * {@code bench} start from empty storage on every run and never touch the user's own trees:
 * <ul>
 *   <li>{@code chronicle:<dir>}: the directory {@code <dir>/.<area>/<name>}. {@code .<area>} cannot be a tree name
 *       (tree names start with a letter, digit or {@code _}), and it holds a marker file; a directory without the
 *       marker is never deleted.</li>
 *   <li>{@code memory:<name>}: the named storage {@code <name>.<area>.<name>}, dropped by {@link #wipe()}.</li>
 *   <li>any other scheme: the same URI, with trees named {@code <area>-<name>-<run id>} so that runs do not
 *       collide (such trees stay on the backend).</li>
 * </ul>
 * Not thread-safe.
 */
public final class ScratchLocation {

    /** Name of the marker file in a scratch area directory. */
    public static final String MARKER = "LATTICE-SCRATCH-AREA";

    private final String uri;
    private final Path areaDir;
    private final Path dir;
    private final String memoryName;
    private final String treePrefix;

    private ScratchLocation(String uri, Path areaDir, Path dir, String memoryName, String treePrefix) {
        this.uri = uri;
        this.areaDir = areaDir;
        this.dir = dir;
        this.memoryName = memoryName;
        this.treePrefix = treePrefix;
    }

    /**
     * Derives a scratch location.
     *
     * @param baseUri the user's provider URI (already checked to parse)
     * @param area the scratch area, e.g. {@code demo} or {@code bench}
     * @param name the location within the area, {@code [a-z0-9-]+}
     * @param runId a run identifier used in tree names where no separate storage can be derived
     * @return the location
     */
    public static ScratchLocation derive(String baseUri, String area, String name, String runId) {
        URI u = URI.create(baseUri);
        String scheme = u.getScheme().toLowerCase(Locale.ROOT);
        String ssp = u.getRawSchemeSpecificPart();
        int q = ssp.indexOf('?');
        String path = q >= 0 ? ssp.substring(0, q) : ssp;
        String query = q >= 0 ? ssp.substring(q) : "";
        switch (scheme) {
            case "chronicle": {
                String base = path.endsWith("/") && path.length() > 1 ? path.substring(0, path.length() - 1) : path;
                // the directory from the decoded path (%20 and the like), the URI from the raw one
                Path areaDir = Path.of(URI.create(scheme + ":" + base).getSchemeSpecificPart()).resolve("." + area);
                Path dir = areaDir.resolve(name);
                return new ScratchLocation(scheme + ":" + base + "/." + area + "/" + name + query, areaDir, dir,
                        null, "");
            }
            case "memory": {
                String storage = path.replaceFirst("^//", "") + "." + area + "." + name;
                return new ScratchLocation(scheme + ":" + storage + query, null, null, storage, "");
            }
            default:
                return new ScratchLocation(baseUri, null, null, null, area + "-" + name + "-" + runId + "-");
        }
    }

    /** @return the provider URI of this location */
    public String uri() {
        return uri;
    }

    /**
     * @param tree the tree's base name
     * @return the tree name to use here (prefixed with the run where storage is shared)
     */
    public String tree(String tree) {
        return treePrefix + tree;
    }

    /** @return the local directory of the location, or null when it has none (memory, remote schemes) */
    public Path directory() {
        return dir;
    }

    /** @return a description of where the data is, for the output */
    public String where() {
        return dir != null ? uri + " (directory " + dir.toAbsolutePath().normalize() + ")" : uri;
    }

    /**
     * Empties the location: deletes its directory (only inside a marked scratch area) or drops the named memory
     * storage, and prepares an empty one.
     *
     * @throws CliException if the scratch area directory exists but lacks the marker (it is not ours)
     * @throws UncheckedIOException if the directory cannot be deleted or created
     */
    public void prepare() {
        wipe();
        if (areaDir != null) {
            try {
                Files.createDirectories(dir);
                Path marker = areaDir.resolve(MARKER);
                if (!Files.exists(marker)) {
                    Files.writeString(marker, "Scratch data of the lattice CLI (demo, bench); safe to delete.\n");
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot create " + dir, e);
            }
        }
    }

    /**
     * Deletes the location's data (see {@link #prepare()}); a no-op for shared storage.
     *
     * @throws CliException if the scratch area directory exists but lacks the marker
     * @throws UncheckedIOException if the directory cannot be deleted
     */
    public void wipe() {
        if (memoryName != null) {
            InMemoryStorage.dropNamed(memoryName);
        }
        if (dir != null && Files.exists(dir)) {
            if (!Files.exists(areaDir.resolve(MARKER))) {
                throw new CliException(ExitCodes.FAILURE, areaDir + " exists but is not a lattice scratch area (no "
                        + MARKER + " file); move it away or pass another --provider");
            }
            deleteTree(dir);
        }
    }

    private static void deleteTree(Path root) {
        try (Stream<Path> s = Files.walk(root)) {
            for (Path p : (Iterable<Path>) s.sorted(Comparator.reverseOrder())::iterator) {
                Files.delete(p);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete " + root, e);
        }
    }
}
