package io.gpudirect.testing;

import io.gpudirect.server.BlockServer;
import io.gpudirect.server.RdmaMode;
import io.gpudirect.verbs.provider.RdmaProvider;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

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
  public record Running(Process process, int port) implements AutoCloseable {
    /** Kills it at once (SIGKILL): a server that dies, not one that shuts down. */
    public void kill() throws InterruptedException {
      process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }

    @Override
    public void close() throws InterruptedException {
      kill();
    }
  }

  /** Starts one with the test's class path and {@code args}; returns once it listens. */
  public static Running start(Class<?> test, String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp", TestClassPath.of(test), ServerProcess.class.getName()));
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
    CompletableFuture<Integer> port = new CompletableFuture<>();
    StringBuilder log = new StringBuilder();
    Thread pump = new Thread(() -> {
      try (out) {
        for (String line; (line = out.readLine()) != null; ) {
          log.append(line).append('\n');
          if (line.startsWith("port ")) {
            port.complete(Integer.parseInt(line.substring(5).trim()));
          }
        }
      } catch (IOException | RuntimeException e) {
        port.completeExceptionally(e);
      }
      port.completeExceptionally(new AssertionError("the server process ended:\n" + log));
    }, "server-process-output");
    pump.setDaemon(true);
    pump.start();
    try {
      return new Running(p, port.get(60, TimeUnit.SECONDS));
    } catch (Exception e) {
      p.destroyForcibly();
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
