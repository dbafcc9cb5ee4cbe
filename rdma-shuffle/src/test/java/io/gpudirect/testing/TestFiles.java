package io.gpudirect.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;

public final class TestFiles {
  private TestFiles() {}

  public static byte[] write(Path file, int size, long seed) throws IOException {
    byte[] data = new byte[size];
    new Random(seed).nextBytes(data);
    Files.createDirectories(file.getParent());
    Files.write(file, data);
    return data;
  }

  public static long gpudirectThreads(String prefix) {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.isAlive() && t.getName().startsWith(prefix)).count();
  }

  /**
   * Waits briefly for the count to reach {@code expected}, then returns it: threads start and
   * end after the calls that cause them return (a server's connection thread starts after the
   * client's connect has returned; a closed reader thread ends a moment after close).
   */
  public static long settledThreads(String prefix, long expected) throws InterruptedException {
    long n = gpudirectThreads(prefix);
    for (int i = 0; i < 100 && n != expected; i++) {
      Thread.sleep(20);
      n = gpudirectThreads(prefix);
    }
    return n;
  }
}
