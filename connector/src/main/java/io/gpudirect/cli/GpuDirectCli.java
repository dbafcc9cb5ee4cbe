package io.gpudirect.cli;

import io.gpudirect.GpuDirectException;
import java.util.concurrent.Callable;
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

  /** The command line with every subcommand, bench included, and the error handling. */
  static CommandLine commandLine() {
    CommandLine cli = new CommandLine(new GpuDirectCli());
    cli.addSubcommand("bench", benchOrItsPlaceholder());
    // A GpuDirectException already says what went wrong and what to do: print it, not a stack.
    cli.setExecutionExceptionHandler((e, cmd, parsed) -> {
      cmd.getErr().println("gpudirect: " + e.getMessage());
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
   * Without it, a placeholder keeps {@code bench} in {@code --help} and says how to run it.
   */
  private static Object benchOrItsPlaceholder() {
    try {
      return Class.forName("io.gpudirect.bench.BenchCommand").getDeclaredConstructor().newInstance();
    } catch (ReflectiveOperationException | LinkageError e) {
      return new BenchNotOnClasspath();
    }
  }

  @Command(name = "bench", description = {"Measure gpudirect against iperf3 (or a raw socket), Arrow Flight and"
      + " Spark's own reader, on loopback (bin/gpudirect bench builds the benchmarks module for it)."})
  static final class BenchNotOnClasspath implements Callable<Integer> {
    @Override
    public Integer call() {
      throw new GpuDirectException("bench is in the benchmarks module, which is not on this classpath:"
          + " run it as bin/gpudirect bench, which builds that module and runs it");
    }
  }
}
