package io.gpudirect.testing;

import io.gpudirect.server.BlockServer;
import io.gpudirect.server.RdmaMode;
import io.gpudirect.verbs.provider.RdmaProvider;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * A block server over TCP in a process of its own, for tests whose server must run in a JVM
 * unlike theirs (other flags), or be killed: prints {@code port N} once listening, and stops when
 * its standard input closes, so that it never outlives the test that started it. Arguments:
 * optionally {@code --rdma-ucx} (it serves RDMA over UCX too), then a root directory, or
 * {@code --shuffle} and an executor's block manager directories.
 */
public final class ServerProcess {
  private ServerProcess() {}

  /** A server process started by a test, and its port; closing it kills the process. */
  public record Running(ChildProcess process, int port) implements AutoCloseable {
    /** Kills it at once (SIGKILL): a server that dies, not one that shuts down. */
    public void kill() throws InterruptedException {
      process.close();
    }

    @Override
    public void close() throws InterruptedException {
      kill();
    }
  }

  /** Starts one with the test's class path and {@code args}; returns once it listens. */
  public static Running start(Class<?> test, String... args) throws Exception {
    return start(test, Optional.empty(), args);
  }

  /**
   * The same, on the CPUs of {@code cpus} only (a list such as {@code 2,3} or {@code 4-7}, through
   * {@code taskset}) when given: a server that does not share the cores of the JVM that reads from
   * it, as on a storage host of its own.
   */
  public static Running start(Class<?> test, Optional<String> cpus, String... args) throws Exception {
    ProcessBuilder command = ChildProcess.java(test, List.of(), ServerProcess.class.getName(), args);
    cpus.ifPresent(list -> command.command().addAll(0, List.of("taskset", "-c", list)));
    ChildProcess p = ChildProcess.start("the server process", command);
    try {
      return new Running(p, Integer.parseInt(p.awaitLine("port ", Duration.ofSeconds(60)).substring(5).trim()));
    } catch (Exception | AssertionError e) {
      p.close();
      throw e;
    }
  }

  public static void main(String[] args) throws IOException {
    var builder = BlockServer.builder().port(0);
    if (args[0].equals("--rdma-ucx")) {
      builder.rdma(RdmaMode.ON).rdmaProvider(RdmaProvider.UCX);
      args = Arrays.copyOfRange(args, 1, args.length);
    }
    if (args[0].equals("--shuffle")) {
      builder.shuffleDirectories(Arrays.stream(args, 1, args.length).map(Path::of).toList(), 64);
    } else {
      builder.root(Path.of(args[0]));
    }
    try (BlockServer server = builder.build().start()) {
      System.out.println("port " + server.port());
      System.out.flush();
      while (System.in.read() >= 0) {
        // wait for the test to close this process's input
      }
    }
  }
}
