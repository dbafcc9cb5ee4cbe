package io.gpudirect.arrow.cudf;

import io.gpudirect.testing.TestData;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.apache.arrow.compression.CommonsCompressionFactory;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.compression.CompressionUtil.CodecType;
import org.apache.arrow.vector.ipc.ArrowFileReader;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.ArrowStreamReader;

/**
 * The inputs the cuDF path is checked on, shared by the CI test of its plan and the GPU test
 * of its columns: every file and stream of the shared corpus as it is and compressed with
 * LZ4_FRAME and ZSTD, and {@link ArrowFixtures#extraTypes} in each of those forms. A case is
 * named {@code file[+CODEC]}; compressed and extra-types files are written on first use.
 */
public final class CudfCases {
  static final Path TESTDATA = TestData.root();
  public static final String EXTRA = "extra_types";

  private CudfCases() {}

  public static Stream<String> all() throws IOException {
    List<String> names = new ArrayList<>();
    try (Stream<Path> s = Files.list(TESTDATA.resolve("arrow"))) {
      s.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".arrow_file") || n.endsWith(".stream"))
          .sorted().forEach(names::add);
    }
    names.add(EXTRA + ".arrow_file");
    names.add(EXTRA + ".stream");
    List<String> cases = new ArrayList<>();
    for (String n : names) {
      cases.add(n);
      // The decimal case is the corpus's largest (250 KB in 36 batches of 36 columns); compressing
      // it costs CI many seconds and checks nothing the other compressed cases do not.
      if (!n.startsWith("generated_decimal")) {
        cases.add(n + "+" + CodecType.LZ4_FRAME);
        cases.add(n + "+" + CodecType.ZSTD);
      }
    }
    return cases.stream();
  }

  public static boolean isStream(String name) {
    return name.contains(".stream") || name.endsWith(".arrows");
  }

  private static Path shared;

  /**
   * The case's file, written once per test JVM into a folder all test classes share (Arrow
   * Java's LZ4 writer is slow enough that writing each case once matters) and removed at exit.
   */
  public static synchronized Path file(String name, BufferAllocator allocator) throws IOException {
    if (shared == null) {
      Path dir = Files.createTempDirectory("gpudirect-arrow-cases");
      Runtime.getRuntime().addShutdownHook(new Thread(() -> {
        try (Stream<Path> files = Files.list(dir)) {
          files.forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
          // A temp folder left behind is harmless.
        }
        dir.toFile().delete();
      }));
      shared = dir;
    }
    return file(name, shared, allocator);
  }

  /** The case's file, written into {@code dir} if it is not a corpus file. */
  static Path file(String name, Path dir, BufferAllocator allocator) throws IOException {
    String base = name.contains("+") ? name.substring(0, name.indexOf('+')) : name;
    CodecType codec = name.contains("+") ? CodecType.valueOf(name.substring(name.indexOf('+') + 1))
        : CodecType.NO_COMPRESSION;
    Path target = dir.resolve(name.replace('+', '.'));
    if (Files.exists(target)) {
      return target;
    }
    if (base.startsWith(EXTRA)) {
      return ArrowFixtures.extraTypes(target, isStream(base), codec, allocator);
    }
    Path source = TESTDATA.resolve("arrow").resolve(base);
    return codec == CodecType.NO_COMPRESSION ? source
        : ArrowFixtures.compressedCopy(source, isStream(base), codec, target, allocator);
  }

  /** Arrow Java's own reader of a case, with the reference codecs. */
  public static ArrowReader reference(Path file, boolean stream, BufferAllocator allocator) throws IOException {
    FileChannel channel = FileChannel.open(file);
    return stream ? new ArrowStreamReader(channel, allocator, CommonsCompressionFactory.INSTANCE)
        : new ArrowFileReader(channel, allocator, CommonsCompressionFactory.INSTANCE);
  }
}
