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
}
