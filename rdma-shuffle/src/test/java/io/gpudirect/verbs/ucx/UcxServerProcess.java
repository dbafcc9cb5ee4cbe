package io.gpudirect.verbs.ucx;

import io.gpudirect.server.BlockServer;
import io.gpudirect.server.BlockServerBuilder;
import io.gpudirect.server.RdmaMode;
import io.gpudirect.verbs.provider.RdmaProvider;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A block server serving RDMA over UCX in a process of its own, for tests that kill it with
 * SIGKILL or send it bytes that could crash a JVM in native code (a crash then fails the test,
 * not the build): {@code ROOT [SECRET_FILE [SHUFFLE_DIRECTORY...]]} (an executor's block manager
 * directories, served too); prints {@code port N} once listening, then waits
 * to be killed.
 */
public final class UcxServerProcess {
  private UcxServerProcess() {}

  public static void main(String[] args) throws Exception {
    BlockServerBuilder b = BlockServer.builder().root(Path.of(args[0])).port(0).rdma(RdmaMode.ON)
        .rdmaProvider(RdmaProvider.UCX);
    if (args.length > 1) {
      b.secret(Files.readAllBytes(Path.of(args[1])));
    }
    if (args.length > 2) {
      b.shuffleDirectories(java.util.Arrays.stream(args, 2, args.length).map(Path::of).toList(), 64);
    }
    BlockServer server = b.build().start();
    System.out.println("port " + server.port());
    System.out.flush();
    Thread.sleep(Long.MAX_VALUE);
  }
}
