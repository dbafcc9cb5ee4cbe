package io.gpudirect.it;

import io.gpudirect.remote.RemoteStores;
import io.gpudirect.server.BlockServer;
import io.gpudirect.server.ManualLoginClock;
import java.nio.file.Path;

/** A real gpudirect server on a loopback port the OS picks. */
final class ServerFixture implements AutoCloseable {
  final BlockServer server;

  private ServerFixture(BlockServer server) {
    this.server = server;
  }

  static ServerFixture serve(Path root) {
    return serve(root, null);
  }

  static ServerFixture serve(Path root, byte[] secret) {
    BlockServer server = BlockServer.builder().root(root).bindAddress("127.0.0.1").port(0).secret(secret).build();
    server.start();
    return new ServerFixture(server);
  }

  /** With a secret, and failed logins backed off by {@code clock}, which the test moves. */
  static ServerFixture serve(Path root, byte[] secret, ManualLoginClock clock) {
    BlockServer server = clock.on(BlockServer.builder().root(root).bindAddress("127.0.0.1").port(0)
        .secret(secret)).build();
    server.start();
    return new ServerFixture(server);
  }

  String uri(String path) {
    return "gpudirect://127.0.0.1:" + server.port() + "/" + path;
  }

  @Override
  public void close() {
    // Connections to a stopped server are useless to later tests.
    RemoteStores.closeAll();
    server.close();
  }
}
