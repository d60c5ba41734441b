package dev.lattice.cli;

import dev.lattice.engine.LatticeFollower;
import dev.lattice.engine.ScanCursor;
import dev.lattice.engine.Tree;
import dev.lattice.engine.TreeEntry;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.concurrent.Callable;

/** {@code lattice scan TREE}: prints keys (and values) of a key range in order, one per line. */
@Command(name = "scan", mixinStandardHelpOptions = true,
        description = "Print the keys of a range in key order: KEY<TAB>VALUE per line.")
public final class ScanCommand implements Callable<Integer> {

    @Mixin
    CommonOptions common;

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "TREE", description = "Tree name.")
    String tree;

    @Option(names = "--from", paramLabel = "KEY", description = "Lowest key, inclusive (default: the first).")
    String from;

    @Option(names = "--to", paramLabel = "KEY", description = "Upper bound, exclusive (default: none).")
    String to;

    @Option(names = "--prefix", paramLabel = "P", description = "Only keys starting with P (sets --from/--to).")
    String prefix;

    @Option(names = "--reverse", description = "Descending key order.")
    boolean reverse;

    @Option(names = "--limit", paramLabel = "N", defaultValue = "100",
            description = "Print at most N keys; 0 for all (default ${DEFAULT-VALUE}).")
    long limit;

    @Option(names = "--keys-only", description = "Print keys only.")
    boolean keysOnly;

    @Option(names = "--hex", description = "Print values as hex.")
    boolean hex;

    @Option(names = "--count", description = "Print only the number of keys in the range.")
    boolean count;

    /** Creates the command (picocli fills the fields). */
    public ScanCommand() {
    }

    /**
     * Prints the range.
     *
     * @return {@link ExitCodes#OK}
     * @throws CliException with {@link ExitCodes#NOT_FOUND} when the tree is absent, {@link ExitCodes#USAGE} for bad
     *     options
     */
    @Override
    public Integer call() {
        Support.checkTreeName(tree);
        if (limit < 0) {
            throw CliException.usage("--limit must be >= 0 (0 = all), got " + limit);
        }
        if (prefix != null) {
            if (from != null || to != null) {
                throw CliException.usage("--prefix cannot be combined with --from or --to");
            }
            if (prefix.isEmpty()) {
                throw CliException.usage("--prefix must not be empty");
            }
            from = prefix;
            to = prefixEnd(prefix);
        }
        PrintWriter out = spec.commandLine().getOut();
        try (LatticeFollower follower = Support.openFollower(common)) {
            Tree t = Support.followTree(follower, tree);
            long n = 0;
            boolean more = false;
            try (ScanCursor c = t.scan(from, to, reverse)) {
                while (c.hasNext()) {
                    if (!count && limit > 0 && n >= limit) {
                        more = true;
                        break;
                    }
                    TreeEntry e = c.next();
                    n++;
                    if (!count) {
                        out.println(keysOnly ? e.key() : e.key() + "\t" + Text.value(e.value(), hex));
                    }
                }
            }
            if (count) {
                out.println(n);
            } else if (more) {
                spec.commandLine().getErr().println("lattice: stopped after " + n + " keys (--limit " + limit
                        + "; --limit 0 prints all)");
            }
        }
        return ExitCodes.OK;
    }

    /** @return the smallest string above every string that starts with {@code p}, or null when there is none */
    static String prefixEnd(String p) {
        StringBuilder sb = new StringBuilder(p);
        while (sb.length() > 0) {
            char last = sb.charAt(sb.length() - 1);
            if (last != Character.MAX_VALUE) {
                sb.setCharAt(sb.length() - 1, (char) (last + 1));
                return sb.toString();
            }
            sb.setLength(sb.length() - 1);
        }
        return null;
    }
}
