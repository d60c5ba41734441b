package dev.lattice.cli;

import dev.lattice.engine.Lattice;
import dev.lattice.engine.LatticeConfig;
import dev.lattice.engine.LatticeFollower;
import dev.lattice.spi.Providers;
import dev.lattice.spi.UnknownSchemeException;
import dev.lattice.spi.WalStorageProvider;

import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/** Opening providers and lattices for the subcommands, turning bad URIs into one-line usage errors. */
public final class Support {

    private Support() {
    }

    /**
     * Checks a provider URI: it parses, has a scheme, and a provider module for that scheme is on the classpath.
     *
     * @param uri the URI text
     * @return the parsed URI, with its factory's own scheme ({@link Providers#canonical})
     * @throws CliException (usage) naming what is wrong; for an unknown scheme the message lists the schemes found
     *     and suggests a close one or the module that provides it
     */
    public static URI checkUri(String uri) {
        URI parsed;
        try {
            parsed = Providers.parse(uri);
        } catch (IllegalArgumentException e) {
            throw CliException.usage(e.getMessage());
        }
        try {
            return Providers.canonical(parsed);
        } catch (IllegalArgumentException e) {
            throw CliException.usage(e.getMessage());
        }
    }

    /**
     * Opens a provider directly (no engine, no claim: inspection only).
     *
     * @param uri the URI text
     * @return the open provider; the caller closes it
     * @throws CliException (usage) for a bad URI, unknown scheme or bad option
     * @throws dev.lattice.spi.WalStorageException if the provider fails to open
     */
    public static WalStorageProvider openProvider(String uri) {
        URI parsed = checkUri(uri);
        long start = System.nanoTime();
        try {
            return Providers.open(parsed, Map.of());
        } catch (UnknownSchemeException e) {
            throw CliException.usage(e.getMessage());
        } catch (IllegalArgumentException e) {
            throw CliException.usage("cannot open provider '" + redact(uri) + "': " + e.getMessage());
        } catch (RuntimeException e) {
            throw unreachable(uri, start, e);
        }
    }

    /**
     * Opens a lattice on a URI.
     *
     * @param uri the provider URI
     * @param tune further settings, applied after the URI
     * @return the open lattice; the caller closes it
     * @throws CliException (usage) for a bad URI, unknown scheme or bad option
     * @throws dev.lattice.spi.WalStorageException if the provider fails to open
     */
    static Lattice openLattice(String uri, Consumer<LatticeConfig.Builder> tune) {
        checkUri(uri);
        LatticeConfig.Builder b = LatticeConfig.builder().uri(uri);
        tune.accept(b);
        long start = System.nanoTime();
        try {
            return Lattice.open(b.build());
        } catch (UnknownSchemeException e) {
            throw CliException.usage(e.getMessage());
        } catch (IllegalArgumentException e) {
            throw CliException.usage("cannot open provider '" + redact(uri) + "': " + e.getMessage());
        } catch (RuntimeException e) {
            throw unreachable(uri, start, e);
        }
    }

    /**
     * Opens a lattice on a URI with default settings.
     *
     * @param uri the provider URI
     * @return the open lattice
     * @throws CliException (usage) for a bad URI, unknown scheme or bad option
     */
    static Lattice openLattice(String uri) {
        return openLattice(uri, b -> { });
    }

    /**
     * Opens a lattice for a command on one existing tree: checks the tree name, opens the lattice (provider and
     * named providers) and fails unless the tree exists, so that reading commands never create it.
     *
     * @param common the options
     * @param tree the tree name
     * @return the open lattice; the caller closes it
     * @throws CliException (usage) for a bad tree name or provider; (not found) when the tree does not exist
     */
    static Lattice openForTree(CommonOptions common, String tree) {
        checkTreeName(tree);
        Lattice lattice = openLattice(common);
        try {
            requireTree(lattice, tree);
            return lattice;
        } catch (RuntimeException e) {
            lattice.close();
            throw e;
        }
    }

    /**
     * Opens a lattice on the provider and the named providers of the common options.
     *
     * @param common the options
     * @return the open lattice
     * @throws CliException (usage) for a bad URI, unknown scheme, bad option or bad provider key
     */
    static Lattice openLattice(CommonOptions common) {
        for (String uri : common.named().values()) {
            checkUri(uri);
        }
        return openLattice(common.provider(), b -> common.named().forEach((k, uri) -> {
            try {
                b.namedProvider(k, uri, java.util.Map.of());
            } catch (IllegalArgumentException e) {
                throw CliException.usage(e.getMessage());
            }
        }));
    }

    /**
     * Opens a read-only follower on the provider and the named providers of the common options: reading commands use
     * it, so they never claim a log and never fence the application that writes the tree.
     *
     * @param common the options
     * @return the open follower; the caller closes it
     * @throws CliException (usage) for a bad URI, unknown scheme, bad option or bad provider key
     */
    static LatticeFollower openFollower(CommonOptions common) {
        for (String uri : common.named().values()) {
            checkUri(uri);
        }
        checkUri(common.provider());
        LatticeConfig.Builder b = LatticeConfig.builder().uri(common.provider());
        common.named().forEach((k, uri) -> {
            try {
                b.namedProvider(k, uri, java.util.Map.of());
            } catch (IllegalArgumentException e) {
                throw CliException.usage(e.getMessage());
            }
        });
        long start = System.nanoTime();
        try {
            return Lattice.openReadOnly(b.build());
        } catch (UnknownSchemeException e) {
            throw CliException.usage(e.getMessage());
        } catch (IllegalArgumentException e) {
            throw CliException.usage("cannot open provider '" + redact(common.provider()) + "': " + e.getMessage());
        } catch (RuntimeException e) {
            throw unreachable(common.provider(), start, e);
        }
    }

    /**
     * Opens a read-only follower and the tree a reading command works on.
     *
     * @param follower the open follower
     * @param tree the tree name
     * @return the tree (read-only)
     * @throws CliException (usage) for a bad tree name; (not found) listing the trees when it does not exist
     */
    static dev.lattice.engine.Tree followTree(LatticeFollower follower, String tree) {
        checkTreeName(tree);
        if (!follower.exists(tree)) {
            List<String> names = new java.util.ArrayList<>();
            follower.treeInfos().forEach(t -> names.add(t.name()));
            throw new CliException(ExitCodes.NOT_FOUND, "no tree '" + tree + "' on this provider (trees: " + names
                    + ")");
        }
        return follower.tree(tree);
    }

    /**
     * Fails with {@link ExitCodes#NOT_FOUND} unless the tree exists (so that reading commands do not create it).
     *
     * @param lattice the open lattice
     * @param tree the tree name
     * @throws CliException (not found) listing the trees that exist
     */
    static void requireTree(Lattice lattice, String tree) {
        Map<String, Integer> trees = lattice.trees();
        if (!trees.containsKey(tree)) {
            throw new CliException(ExitCodes.NOT_FOUND, "no tree '" + tree + "' on this provider (trees: "
                    + trees.keySet() + ")");
        }
    }

    /**
     * An open that failed because the backend could not be reached (a connection refused or timed out, an unknown
     * host anywhere in the cause chain) becomes one line that says so, names the provider (secrets hidden) and how
     * long the open tried; any other failure is returned unchanged.
     *
     * @param uri the provider URI as given
     * @param startNanos {@link System#nanoTime()} when the open began
     * @param e the failure
     * @return the exception to throw
     */
    static RuntimeException unreachable(String uri, long startNanos, RuntimeException e) {
        Throwable network = null;
        for (Throwable c = e; c != null && network == null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof java.net.ConnectException || c instanceof java.net.UnknownHostException
                    || c instanceof java.net.NoRouteToHostException || c instanceof java.net.SocketTimeoutException
                    || c instanceof java.net.http.HttpTimeoutException) {
                network = c;
            }
        }
        if (network == null) {
            return e;
        }
        long ms = (System.nanoTime() - startNanos) / 1_000_000;
        String detail = e.getMessage() != null && e.getMessage().startsWith("could not connect") ? e.getMessage()
                : Main.describe(e);
        return new CliException(ExitCodes.FAILURE, "could not connect to provider '" + redact(uri) + "' (tried for "
                + ms + " ms): " + detail, e);
    }

    private static final java.util.regex.Pattern SECRET_OPTION = java.util.regex.Pattern.compile(
            "(?i)([?&][^=&]*(?:password|secret|token|sig|accountkey|connectionstring|credential)[^=&]*=)[^&]*");

    /**
     * A provider URI fit for printing: the values of query options whose names suggest a secret (password, secret,
     * token, sig, account key, connection string, credential) are replaced by {@code ***}.
     *
     * @param uri the URI as given
     * @return the URI with secret option values hidden
     */
    public static String redact(String uri) {
        return uri == null ? null : SECRET_OPTION.matcher(uri).replaceAll("$1***");
    }

    /**
     * Checks a tree name for a command that reads or writes it (names starting with {@code _} are the engine's).
     *
     * @param tree the name
     * @return the name
     * @throws CliException (usage) naming the rule it breaks
     */
    static String checkTreeName(String tree) {
        try {
            dev.lattice.spi.LogId.validateTreeName(tree);
        } catch (IllegalArgumentException e) {
            throw CliException.usage(e.getMessage());
        }
        if (tree.startsWith("_")) {
            throw CliException.usage("tree names starting with '_' are reserved for the engine: '" + tree + "'");
        }
        return tree;
    }
}
