package io.gpudirect.bench;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Target 5: a file much larger than the client's heap and direct-memory limits reads whole in
 * a child JVM ({@link MemoryProbe}) started with {@code -Xmx512m} and a small
 * {@code -XX:MaxDirectMemorySize}; it reports its peaks.
 */
final class MemoryBound {
  static final int PIECE = 32 << 20;
  static final String MAX_HEAP = "512m";
  static final String MAX_DIRECT = "192m";
  private static final Pattern LINE = Pattern.compile(
      "bytes=(\\d+) seconds=([0-9.]+) peakHeap=(\\d+) peakDirect=(\\d+)");

  /** What the child saw. */
  record Result(Measurement fetch, long peakHeap, long peakDirect) {}

  private MemoryBound() {}

  static Result run(InetSocketAddress server, String path, long fileBytes, Path dir) throws Exception {
    String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> cmd = new ArrayList<>(List.of(javaBin, "-Xmx" + MAX_HEAP,
        "-XX:MaxDirectMemorySize=" + MAX_DIRECT, "-cp", System.getProperty("java.class.path"),
        MemoryProbe.class.getName(), server.getHostString(), Integer.toString(server.getPort()),
        path, Long.toString(fileBytes), Integer.toString(PIECE)));
    Path log = dir.resolve("memory-probe.log");
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    // Bounded: even at 100 MB/s a 4 GB file is done within this.
    if (!p.waitFor(Math.max(60, fileBytes / 100_000_000L), TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IOException("Memory probe did not finish; see " + log);
    }
    String out = new String(Files.readAllBytes(log), StandardCharsets.UTF_8);
    Matcher m = LINE.matcher(out);
    if (p.exitValue() != 0 || !m.find()) {
      throw new IOException("Memory probe (-Xmx" + MAX_HEAP + ", -XX:MaxDirectMemorySize="
          + MAX_DIRECT + ") failed reading " + fileBytes + " bytes, exit " + p.exitValue() + ": "
          + out.strip().lines().limit(20).reduce("", (x, y) -> x + "\n" + y));
    }
    // No CPU figure: only the server's share would be in this process, the client's is the child's.
    Measurement fetch = new Measurement(Long.parseLong(m.group(1)), Double.parseDouble(m.group(2)), Double.NaN);
    return new Result(fetch, Long.parseLong(m.group(3)), Long.parseLong(m.group(4)));
  }
}
