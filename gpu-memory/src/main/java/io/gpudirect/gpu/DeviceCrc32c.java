package io.gpudirect.gpu;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import jcuda.driver.CUfunction;
import jcuda.runtime.cudaStream_t;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The CRC32C of bytes in device memory, computed by the GPU ({@code src/main/cuda/crc32c.cu},
 * loaded from its PTX once per JVM). Fetched bytes are checked where they landed, instead of by
 * the CPU as they pass through a pinned chunk.
 */
final class DeviceCrc32c {
  private static final Logger LOG = LoggerFactory.getLogger(DeviceCrc32c.class);
  /** Must match the kernel's SEGMENT: each thread takes that many bytes. */
  private static final int SEGMENT = 256;
  private static final int THREADS_PER_BLOCK = 256;
  private static volatile DeviceCrc32c loaded;
  private static volatile boolean unavailable;

  private final CUfunction kernel;

  private DeviceCrc32c(CUfunction kernel) {
    this.kernel = kernel;
  }

  /**
   * The kernel, or null where it cannot load (no GPU, or a driver too old for its PTX); that
   * is said once in the log, and the caller checks on the CPU instead.
   */
  static DeviceCrc32c get() {
    DeviceCrc32c k = loaded;
    if (k != null || unavailable) {
      return k;
    }
    synchronized (DeviceCrc32c.class) {
      if (loaded == null && !unavailable) {
        try {
          if (!GpuEnvironment.get().gpu()) {
            throw new CudaException("crc32c kernel", 0, "no GPU");
          }
          loaded = new DeviceCrc32c(Cuda.loadKernel(ptx(), "crc32c"));
        } catch (CudaException | LinkageError e) {
          unavailable = true;
          LOG.warn("Checksums of fetched bytes stay on the CPU: the GPU CRC32C kernel did not load: {}",
              e.getMessage());
        }
      }
      return loaded;
    }
  }

  /**
   * Queues on {@code stream} the CRC32C of {@code length} bytes at {@code address}, added by
   * XOR into the 4 bytes at {@code result}, which must hold 0 when the kernel starts.
   */
  void launch(long address, long length, long result, cudaStream_t stream) {
    if (length <= 0 || length > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("CRC32C of " + length + " bytes on the GPU");
    }
    long segments = (length + SEGMENT - 1) / SEGMENT;
    int blocks = (int) ((segments + THREADS_PER_BLOCK - 1) / THREADS_PER_BLOCK);
    Cuda.launch(kernel, blocks, THREADS_PER_BLOCK, stream, address, length, result);
  }

  private static String ptx() {
    try (InputStream in = DeviceCrc32c.class.getResourceAsStream("crc32c.ptx")) {
      if (in == null) {
        throw new IllegalStateException("crc32c.ptx is missing from the gpu-memory jar");
      }
      return new String(in.readAllBytes(), StandardCharsets.US_ASCII);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
