package dev.lattice.cli;

import dev.lattice.spi.support.Suggestions;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.UnmatchedArgumentException;

import java.util.ArrayList;
import java.util.List;

/**
 * The one-line message for a command line picocli could not parse: an unknown subcommand or option gets "did you
 * mean" with the closest names of the command it was given to ({@code lattice gett} says {@code unknown command
 * 'gett' for 'lattice'; did you mean 'get'?}, {@code --provder} says {@code Unknown option: '--provder'; did you mean
 * '--provider'?}); every other parse error keeps picocli's message. Stateless and thread-safe.
 */
final class Typos {

    private Typos() {
    }

    /**
     * @param ex the parse failure
     * @return the message, without the {@code lattice: } prefix
     */
    static String describe(ParameterException ex) {
        if (!(ex instanceof UnmatchedArgumentException u) || u.getUnmatched().isEmpty()) {
            return ex.getMessage();
        }
        CommandLine failed = ex.getCommandLine();
        CommandSpec spec = failed.getCommandSpec();
        String first = u.getUnmatched().get(0);
        if (first.startsWith("-")) {
            String name = first.contains("=") ? first.substring(0, first.indexOf('=')) : first;
            List<String> options = new ArrayList<>();
            for (OptionSpec o : spec.options()) {
                options.addAll(List.of(o.names()));
            }
            options.add(ExtraClasspath.OPTION);
            return "Unknown option: '" + name + "'" + Suggestions.didYouMean(name, options);
        }
        if (!failed.getSubcommands().isEmpty()) {
            String hint = Suggestions.didYouMean(first, failed.getSubcommands().keySet());
            return "unknown command '" + first + "' for '" + spec.qualifiedName() + "'"
                    + (hint.isEmpty() ? "; commands: " + String.join(", ", failed.getSubcommands().keySet()) : hint);
        }
        return ex.getMessage();
    }
}
