package dev.lattice.cli;

import picocli.CommandLine.Option;

/**
 * Options every subcommand takes (a picocli mixin): the provider URI and {@code --verbose}.
 *
 * <p>{@code --verbose} is also read by {@link Main} straight from the arguments, before parsing, to raise the log
 * level and to print stack traces.
 */
public final class CommonOptions {

    /** The default provider URI: the embedded Chronicle provider in {@code ./lattice-data}. */
    public static final String DEFAULT_PROVIDER = "chronicle:./lattice-data";

    @Option(names = "--provider", paramLabel = "URI",
            defaultValue = "${env:LATTICE_PROVIDER:-" + DEFAULT_PROVIDER + "}",
            description = "Provider URI, e.g. chronicle:./lattice-data or memory:demo "
                    + "(default: $LATTICE_PROVIDER, else ${DEFAULT-VALUE}).")
    String provider;

    @Option(names = "--named", paramLabel = "KEY=URI",
            description = "A further provider under a key, for trees placed on several providers, "
                    + "e.g. --named acct-b=postgres://host/db (repeatable).")
    java.util.Map<String, String> named = new java.util.LinkedHashMap<>();

    @Option(names = {"-v", "--verbose"}, description = "Log at INFO level and print stack traces of failures.")
    boolean verbose;

    /** Creates the options holder (picocli fills the fields). */
    public CommonOptions() {
    }

    /** @return the provider URI given with {@code --provider}, or the default */
    public String provider() {
        return provider;
    }

    /** @return the providers given with {@code --named}, key to URI, in order */
    public java.util.Map<String, String> named() {
        return named;
    }

    /** @return true when {@code --verbose} was given */
    public boolean verbose() {
        return verbose;
    }
}
