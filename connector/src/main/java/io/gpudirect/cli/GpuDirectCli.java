package io.gpudirect.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code bin/gpudirect}: the demo, the server, and tools to look at what a server serves. */
@Command(name = "gpudirect", mixinStandardHelpOptions = true, version = "gpudirect 0.1.0-SNAPSHOT",
    description = "Remote data into GPU memory as fast as the wire allows, for Spark.",
    subcommands = {DemoCommand.class, ServerCommand.class, LsCommand.class, CatCommand.class,
        DoctorCommand.class})
public final class GpuDirectCli {
  public static void main(String[] args) {
    System.exit(commandLine().execute(args));
  }

  /** The command line as {@link #main} runs it, for tests that run it in their own JVM. */
  static CommandLine commandLine() {
    CommandLine cli = new CommandLine(new GpuDirectCli());
    addBenchWhenPresent(cli);
    // A GpuDirectException already says what went wrong and what to do: print it, not a stack.
    // Escaped: it can carry a server's words and file names (see TerminalText).
    cli.setExecutionExceptionHandler((e, cmd, parsed) -> {
      cmd.getErr().println("gpudirect: " + TerminalText.escape(String.valueOf(e.getMessage())));
      if (System.getenv("GPUDIRECT_DEBUG") != null) {
        e.printStackTrace(cmd.getErr());
      }
      return 1;
    });
    return cli;
  }

  /**
   * {@code bench} lives in the benchmarks module (it needs Arrow Flight and JMH, which stay out
   * of the connector's jars); {@code bin/gpudirect bench} puts that module on the classpath.
   */
  private static void addBenchWhenPresent(CommandLine cli) {
    try {
      Object bench = Class.forName("io.gpudirect.bench.BenchCommand").getDeclaredConstructor().newInstance();
      cli.addSubcommand("bench", bench);
    } catch (ReflectiveOperationException | LinkageError e) {
      // not on the classpath: the other commands work without it
    }
  }
}
