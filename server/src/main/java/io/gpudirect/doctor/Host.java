package io.gpudirect.doctor;

import io.gpudirect.gpu.GpuEnvironment;
import io.gpudirect.verbs.provider.ProviderReport;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * What {@code doctor} looks at: files below {@code root} ({@code /} on a real host; a temporary
 * tree of fake {@code /proc} and {@code /sys} files in tests), commands, native libraries, the
 * GPU and cuDF. Every check reads the host through this, and through nothing else.
 *
 * @param root where {@code /proc}, {@code /sys} are found
 * @param commands runs a command and returns its output, or empty when it is not installed or fails
 * @param loadLibrary loads a native library by name; null on success, else why not
 * @param gpu the GPU as gpudirect sees it
 * @param cudf null when cuDF's classes and native library load, else why not
 * @param ucx UCX (libucp) as gpudirect's UCX provider sees it
 */
public record Host(Path root, Function<List<String>, Optional<String>> commands,
    Function<String, String> loadLibrary, Supplier<GpuEnvironment> gpu, Supplier<String> cudf,
    Supplier<ProviderReport> ucx) {

  /** This machine, as it is. */
  public static Host real() {
    Supplier<GpuEnvironment> gpu = cudaBindingPresent() ? GpuEnvironment::get : () -> WITHOUT_CUDA_BINDING;
    return new Host(Path.of("/"), Host::run, Host::load, gpu, () -> cudfProbe(gpu.get()), ProviderReport::ucx);
  }

  /**
   * The server package leaves jcuda out (a storage host copies nothing to a GPU): say that,
   * rather than that the CUDA runtime failed to load, which would send a reader after drivers.
   */
  private static final GpuEnvironment WITHOUT_CUDA_BINDING = new GpuEnvironment(false, 0, "", false,
      "no CUDA binding (jcuda) on this classpath: the server package carries none, as a storage host copies"
          + " nothing to a GPU; check a GPU host with bin/gpudirect doctor from a checkout");

  private static boolean cudaBindingPresent() {
    try {
      Class.forName("jcuda.runtime.JCuda", false, Host.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  /** {@code /proc/...} below the root. */
  Path path(String absolute) {
    return root.resolve(absolute.startsWith("/") ? absolute.substring(1) : absolute);
  }

  /** The file's content, stripped, or empty when it does not exist or cannot be read. */
  Optional<String> read(String absolute) {
    // Not Files.readString: it trusts the file's size, and /proc files report 0 (one byte came back).
    try (var in = Files.newInputStream(path(absolute))) {
      return Optional.of(new String(in.readAllBytes(), StandardCharsets.UTF_8).strip());
    } catch (IOException | RuntimeException e) {
      return Optional.empty();
    }
  }

  /** Names in a directory, sorted; empty when it does not exist. */
  List<String> list(String absolute) {
    try (var s = Files.list(path(absolute))) {
      return s.map(p -> p.getFileName().toString()).sorted().toList();
    } catch (IOException | RuntimeException e) {
      return List.of();
    }
  }

  boolean exists(String absolute) {
    return Files.exists(path(absolute));
  }

  private static Optional<String> run(List<String> command) {
    try {
      Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
      byte[] out = p.getInputStream().readAllBytes();
      if (!p.waitFor(20, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        return Optional.empty();
      }
      return p.exitValue() == 0 ? Optional.of(new String(out, StandardCharsets.UTF_8)) : Optional.empty();
    } catch (IOException e) {
      return Optional.empty();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Optional.empty();
    }
  }

  private static String load(String library) {
    try {
      System.loadLibrary(library);
      return null;
    } catch (UnsatisfiedLinkError | SecurityException e) {
      return e.getMessage();
    }
  }

  private static String cudfProbe(GpuEnvironment gpu) {
    try {
      // Not initialised: that would load the native library.
      Class.forName("ai.rapids.cudf.Cuda", false, Host.class.getClassLoader());
    } catch (ClassNotFoundException | LinkageError e) {
      return "cuDF's Java API (ai.rapids.cudf.Cuda) is not on the classpath";
    }
    if (!gpu.gpu()) {
      // Its native library links against the CUDA driver; unpacking it only to fail takes ~20 s.
      return "cuDF's classes are present, but its native library needs a GPU and the CUDA driver: " + gpu.reason();
    }
    try {
      int devices = ai.rapids.cudf.Cuda.getDeviceCount();
      return devices > 0 ? null : "cuDF loaded but sees no GPU";
    } catch (Throwable e) {
      // A missing libcuda or driver surfaces as any of several errors from the static loader.
      List<String> causes = new ArrayList<>();
      for (Throwable t = e; t != null && causes.size() < 3; t = t.getCause()) {
        causes.add(t.getClass().getSimpleName() + (t.getMessage() == null ? "" : ": " + t.getMessage()));
      }
      return "cuDF's classes are present but its native library does not load: " + String.join("; ", causes);
    }
  }
}
