package dev.lattice.cli;

import picocli.CommandLine;

import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * Entry point of the {@code lattice} command. {@link #run} is the testable form: it never calls
 * {@link System#exit}.
 *
 * <p>Failures print one line, {@code lattice: <message>}, on standard error and map to an {@link ExitCodes exit
 * code}; the stack trace follows only with {@code --verbose}.
 */
public final class Main {

    private Main() {
    }

    /**
     * Runs the command and exits the JVM with its exit code.
     *
     * @param args the command line
     */
    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /**
     * Runs the command.
     *
     * @param args the command line
     * @param out where results go
     * @param err where errors, warnings and progress go
     * @return the exit code (see {@link ExitCodes})
     */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        return run(args, out, err, System.getenv(ExtraClasspath.ENV));
    }

    /**
     * Runs the command with extra jars from {@code --classpath} and the given {@code LATTICE_CLASSPATH} value on the
     * thread's context class loader (see {@link ExtraClasspath}); restores the previous one afterwards.
     *
     * @param args the command line
     * @param out where results go
     * @param err where errors, warnings and progress go
     * @param envClasspath the value of {@code LATTICE_CLASSPATH}, or null
     * @return the exit code (see {@link ExitCodes})
     */
    static int run(String[] args, PrintStream out, PrintStream err, String envClasspath) {
        List<String> paths = new java.util.ArrayList<>();
        if (envClasspath != null) {
            paths.add(envClasspath);
        }
        String[] rest;
        java.net.URLClassLoader extra;
        try {
            rest = ExtraClasspath.strip(args, paths);
            extra = ExtraClasspath.loader(paths, Main.class.getClassLoader());
        } catch (CliException e) {
            err.println("lattice: " + e.getMessage());
            err.flush();
            return e.exitCode();
        }
        if (extra == null) {
            return runParsed(rest, out, err);
        }
        Thread thread = Thread.currentThread();
        ClassLoader before = thread.getContextClassLoader();
        thread.setContextClassLoader(extra);
        try {
            return runParsed(rest, out, err);
        } finally {
            thread.setContextClassLoader(before);
            try {
                extra.close();
            } catch (java.io.IOException ignored) {
                // the run is over; a jar that cannot be closed is harmless
            }
        }
    }

    private static int runParsed(String[] args, PrintStream out, PrintStream err) {
        List<String> argList = Arrays.asList(args);
        boolean verbose = argList.contains("-v") || argList.contains("--verbose");
        if (verbose && System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
            // must happen before the first logger is created; simplelogger.properties says "warn"
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "info");
        }
        PrintWriter outWriter = new PrintWriter(new java.io.OutputStreamWriter(out, StandardCharsets.UTF_8), true);
        PrintWriter errWriter = new PrintWriter(new java.io.OutputStreamWriter(err, StandardCharsets.UTF_8), true);
        CommandLine cmd = commandLine();
        cmd.setOut(outWriter);
        cmd.setErr(errWriter);
        cmd.setParameterExceptionHandler((ex, a) -> {
            CommandLine failed = ex.getCommandLine();
            errWriter.println("lattice: " + oneLine(Typos.describe(ex)) + " (see '"
                    + failed.getCommandSpec().qualifiedName() + " --help')");
            if (verbose) {
                ex.printStackTrace(errWriter);
            }
            return ExitCodes.USAGE;
        });
        cmd.setExecutionExceptionHandler((ex, failed, parseResult) -> {
            int code;
            String message;
            if (ex instanceof CliException ce) {
                code = ce.exitCode();
                message = ce.getMessage();
            } else if (ex instanceof IllegalArgumentException && ex.getMessage() != null) {
                // the engine's checks of arguments (key and value limits, tree names, unknown schemes)
                code = ExitCodes.USAGE;
                message = ex.getMessage();
            } else {
                code = ExitCodes.FAILURE;
                message = describe(ex);
            }
            errWriter.println("lattice: " + oneLine(message));
            if (verbose) {
                ex.printStackTrace(errWriter);
            } else if (code == ExitCodes.FAILURE) {
                errWriter.println("lattice: run again with --verbose for the stack trace");
            }
            errWriter.flush();
            return code;
        });
        int code = cmd.execute(args);
        outWriter.flush();
        errWriter.flush();
        return code;
    }

    /**
     * The class of {@code lattice bench}, in the benchmarks module ({@code lattice-benchmarks}). The CLI does not
     * depend on that module (it would bring the benchmarks' libraries into the product): the command is added when
     * the class is on the class path (the {@code ./lattice} launcher puts it there for {@code lattice bench ...}),
     * otherwise {@link BenchMissingCommand} stands in for it.
     */
    public static final String BENCH_COMMAND_CLASS = "dev.lattice.bench.cli.BenchCommand";

    /**
     * The class of {@code lattice cluster}, in the cluster module ({@code lattice-cluster}), loaded like
     * {@link #BENCH_COMMAND_CLASS} so that the CLI's own class path has no Pekko; otherwise
     * {@link ClusterMissingCommand} stands in for it.
     */
    public static final String CLUSTER_COMMAND_CLASS = "dev.lattice.cluster.cli.ClusterCommand";

    /**
     * A subcommand that lives in another module: its name, the class loaded by name when that module is on the
     * class path, and the stand-in that says how to get it otherwise.
     *
     * @param name the subcommand's name
     * @param className the picocli command class (public, with a public no-argument constructor)
     * @param missing creates the stand-in
     */
    record OptionalCommand(String name, String className, java.util.function.Supplier<Object> missing) {
    }

    /** The subcommands of other modules, in the order of the usage help. */
    static final List<OptionalCommand> OPTIONAL_COMMANDS = List.of(
            new OptionalCommand("bench", BENCH_COMMAND_CLASS, BenchMissingCommand::new),
            new OptionalCommand("cluster", CLUSTER_COMMAND_CLASS, ClusterMissingCommand::new));

    /**
     * The configured picocli command line (also for tests that check parsing without running).
     *
     * @return a new command line with every subcommand, {@code bench} and {@code cluster} included (see
     *     {@link #BENCH_COMMAND_CLASS}, {@link #CLUSTER_COMMAND_CLASS})
     * @throws IllegalStateException if an optional command's class is present but cannot be created
     */
    public static CommandLine commandLine() {
        CommandLine cmd = new CommandLine(new LatticeCommand());
        for (OptionalCommand c : OPTIONAL_COMMANDS) {
            cmd.addSubcommand(c.name(), optionalCommand(c));
        }
        cmd.setCaseInsensitiveEnumValuesAllowed(true);
        cmd.setUsageHelpWidth(110);
        return cmd;
    }

    private static Object optionalCommand(OptionalCommand c) {
        Class<?> type;
        try {
            type = Class.forName(c.className(), true, Main.class.getClassLoader());
        } catch (ClassNotFoundException absent) {
            return c.missing().get();
        }
        try {
            return type.getConstructor().newInstance();
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot create " + c.className() + ": " + e, e);
        }
    }

    /** A one-line description of an unexpected failure: type and message, with the root cause's when different. */
    static String describe(Throwable ex) {
        StringBuilder sb = new StringBuilder(ex.getClass().getSimpleName());
        if (ex.getMessage() != null) {
            sb.append(": ").append(ex.getMessage());
        }
        Throwable root = ex;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        if (root != ex && root.getMessage() != null && (ex.getMessage() == null
                || !ex.getMessage().contains(root.getMessage()))) {
            sb.append(" (cause: ").append(root.getClass().getSimpleName()).append(": ").append(root.getMessage())
                    .append(')');
        }
        return sb.toString();
    }

    private static String oneLine(String s) {
        return s == null ? "failed" : s.replaceAll("\\s*\\R\\s*", " ").trim();
    }
}
