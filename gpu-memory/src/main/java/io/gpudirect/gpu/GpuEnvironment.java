package io.gpudirect.gpu;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether this JVM can use a GPU, found once. Without one (no driver, no device, jcuda's
 * native library not loadable) gpudirect runs in host mode and says so in one log line.
 *
 * @param gpu whether CUDA works here
 * @param devices how many devices CUDA sees
 * @param deviceName device 0's name, or empty
 * @param cudf whether cuDF's Java API and native library load (device buffers then come from RMM)
 * @param reason why host mode, or what was found
 */
public record GpuEnvironment(boolean gpu, int devices, String deviceName, boolean cudf, String reason) {
  private static final Logger LOG = LoggerFactory.getLogger(GpuEnvironment.class);
  private static volatile GpuEnvironment detected;

  /** This JVM's GPU environment; the first call detects it and logs the outcome once. */
  public static GpuEnvironment get() {
    GpuEnvironment e = detected;
    if (e == null) {
      synchronized (GpuEnvironment.class) {
        if (detected == null) {
          detected = detect();
          LOG.info(detected.gpu() ? "GPU mode: {}" : "Host mode (no GPU): {}", detected.reason());
        }
        e = detected;
      }
    }
    return e;
  }

  private static GpuEnvironment detect() {
    int devices;
    try {
      devices = Cuda.deviceCount();
    } catch (CudaException e) {
      return new GpuEnvironment(false, 0, "", false, e.getMessage());
    } catch (LinkageError e) {
      return new GpuEnvironment(false, 0, "", false, "the CUDA runtime cannot be loaded: " + e.getMessage());
    }
    if (devices == 0) {
      return new GpuEnvironment(false, 0, "", false, "CUDA sees no device");
    }
    String name = Cuda.deviceName(0);
    boolean cudf = cudfLoads();
    return new GpuEnvironment(true, devices, name, cudf, devices + " device(s), device 0 is " + name
        + (cudf ? "; cuDF loaded, device buffers come from RMM" : "; cuDF not loaded, device buffers come from cudaMalloc"));
  }

  private static boolean cudfLoads() {
    try {
      Class.forName("ai.rapids.cudf.Cuda");
      return ai.rapids.cudf.Cuda.getDeviceCount() > 0;
    } catch (ClassNotFoundException | LinkageError | RuntimeException e) {
      return false;
    }
  }
}
