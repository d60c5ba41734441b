package dev.lattice.bench.cli;

import dev.lattice.cli.Main;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.UUID;

/** Runs the CLI (with the benchmarks on the class path) in-process and captures what it prints. */
final class Cli {

    /**
     * The outcome of one run.
     *
     * @param code exit code
     * @param out standard output
     * @param err standard error
     */
    record Run(int code, String out, String err) {
        @Override
        public String toString() {
            return "exit " + code + "\n--- out\n" + out + "--- err\n" + err;
        }
    }

    private Cli() {
    }

    static Run run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Main.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    /** @return a memory URI no other test uses */
    static String freshMemoryUri() {
        return "memory:cli-test-" + UUID.randomUUID();
    }
}
