package io.gpudirect.cli;

import io.gpudirect.GpuDirectException;
import java.util.HashMap;
import java.util.Map;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code bin/gpudirect}: the server, tools to look at what a server serves, and the host check;
 * with the benchmarks module on the classpath, the demo and bench too.
 */
@Command(name = "gpudirect", mixinStandardHelpOptions = true, version = "gpudirect 0.1.0-SNAPSHOT",
    description = "Remote data into GPU memory as fast as the wire allows, for Spark.",
    subcommands = {ServerCommand.class, LsCommand.class, CatCommand.class, DoctorCommand.class})
public final class GpuDirectCli {
  public static void main(String[] args) {
    System.exit(commandLine().execute(args));
  }

  /**
   * The command line with every subcommand, demo and bench included, and the error handling,
   * as {@link #main} runs it (tests run it in their own JVM).
   */
  static CommandLine commandLine() {
    CommandLine cli = new CommandLine(new GpuDirectCli());
    Map<String, Object> benchmarks = fromBenchmarksModule();
    cli.addSubcommand("demo", benchmarks.getOrDefault("demo", new DemoNotOnClasspath()));
    cli.addSubcommand("bench", benchmarks.getOrDefault("bench", new BenchNotOnClasspath()));
    // After every subcommand is added: picocli hands the handler to the commands there are.
    cli.setParameterExceptionHandler(new UsageErrors());
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
   * {@code demo} and {@code bench} by name, where the benchmarks module is on the classpath: they
   * need Spark (and bench Arrow Flight and JMH), which stay out of this module and its server
   * package. {@code bin/gpudirect demo|bench} puts that module on the classpath. Without it, a
   * placeholder keeps the command in {@code --help} and says how to run it.
   */
  private static Map<String, Object> fromBenchmarksModule() {
    Map<String, Object> found = new HashMap<>();
    try {
      for (BenchmarksCommand c : ServiceLoader.load(BenchmarksCommand.class, GpuDirectCli.class.getClassLoader())) {
        found.put(c.getClass().getAnnotation(Command.class).name(), c);
      }
    } catch (ServiceConfigurationError | LinkageError e) {
      // The module without what it needs: its commands stay placeholders.
    }
    return found;
  }

  private static GpuDirectException notOnClasspath(String command) {
    return new GpuDirectException(command + " is in the benchmarks module (it needs Spark), which is not on this"
        + " classpath: run it from a checkout as bin/gpudirect " + command + ", which builds that module and runs it");
  }

  @Command(name = "demo", description = "Serve a generated dataset on loopback and query it with local Spark over"
      + " gpudirect:// (bin/gpudirect demo builds the benchmarks module for it).")
  static final class DemoNotOnClasspath implements Callable<Integer> {
    @Override
    public Integer call() {
      throw notOnClasspath("demo");
    }
  }

  @Command(name = "bench", description = {"Measure gpudirect against iperf3 (or a raw socket), Arrow Flight and"
      + " Spark's own reader, on loopback (bin/gpudirect bench builds the benchmarks module for it)."})
  static final class BenchNotOnClasspath implements Callable<Integer> {
    @Override
    public Integer call() {
      throw notOnClasspath("bench");
    }
  }
}
