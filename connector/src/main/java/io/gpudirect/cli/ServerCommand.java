package io.gpudirect.cli;

import io.gpudirect.server.BlockServer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "server", mixinStandardHelpOptions = true,
    description = "Serve one directory, read-only, to gpudirect readers.")
final class ServerCommand implements Callable<Integer> {
  @Option(names = "--root", required = true, description = "Directory to serve (read-only).")
  Path root;

  @Option(names = "--port", defaultValue = "7337", description = "TCP port (default ${DEFAULT-VALUE}; 0 picks one).")
  int port;

  @Option(names = "--bind", defaultValue = "127.0.0.1",
      description = "Address to listen on (default ${DEFAULT-VALUE}; 0.0.0.0 for every interface).")
  String bind;

  @Option(names = "--secret-file", description = "File holding the shared secret; clients must prove they know it.")
  Path secretFile;

  @Option(names = "--rdma", defaultValue = "auto",
      description = "auto, on or off. RDMA is not built yet: auto and off serve TCP, on fails.")
  String rdma;

  @Override
  public Integer call() throws Exception {
    if (rdma.equals("on")) {
      throw new io.gpudirect.GpuDirectException(
          "--rdma on: the RDMA transport is not built into this version; use --rdma auto or off");
    }
    String secret = SecretFile.read(secretFile);
    BlockServer server = BlockServer.builder()
        .root(root)
        .bindAddress(bind)
        .port(port)
        .secret(secret == null ? null : secret.getBytes(StandardCharsets.UTF_8))
        .build();
    server.start();
    CountDownLatch stopped = new CountDownLatch(1);
    // SIGTERM and Ctrl-C: stop accepting, let in-flight reads finish, then exit.
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      server.close();
      stopped.countDown();
    }, "gpudirect-server-shutdown"));
    System.out.println("gpudirect server listening on " + bind + ":" + server.port());
    System.out.println("serving " + root.toAbsolutePath().normalize() + " read-only over tcp, authentication "
        + (secret == null ? "off" : "on"));
    System.out.flush();
    stopped.await();
    return 0;
  }
}
