package io.gpudirect.testing;

import io.gpudirect.server.BlockServer;
import java.io.IOException;
import java.nio.file.Path;

/**
 * A block server over TCP in a process of its own, for tests whose server must run in a JVM
 * unlike theirs (other flags): prints {@code port N} once listening, and stops when its
 * standard input closes, so that it never outlives the test that started it.
 */
public final class ServerProcess {
  private ServerProcess() {}

  public static void main(String[] args) throws IOException {
    try (BlockServer server = BlockServer.builder().root(Path.of(args[0])).port(0).build().start()) {
      System.out.println("port " + server.port());
      System.out.flush();
      while (System.in.read() >= 0) {
        // wait for the test to close this process's input
      }
    }
  }
}
