package dev.lattice.cli;

/** The exit codes of the {@code lattice} command (documented in {@code docs/cli.md}). */
public final class ExitCodes {

    /** Success. */
    public static final int OK = 0;
    /** The operation failed: a provider or engine error (the message names it). */
    public static final int FAILURE = 1;
    /** Bad usage: unknown option or subcommand, bad value, unknown provider scheme, malformed URI. */
    public static final int USAGE = 2;
    /** {@code get}, {@code scan}, {@code delete} or {@code wal inspect}: the tree, key or location does not exist. */
    public static final int NOT_FOUND = 3;
    /** {@code demo} or {@code bench}: verification after reopen found a lost, wrong or extra value. */
    public static final int VERIFICATION_FAILED = 4;

    private ExitCodes() {
    }
}
