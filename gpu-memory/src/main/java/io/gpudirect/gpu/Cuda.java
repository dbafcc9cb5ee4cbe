package io.gpudirect.gpu;

import java.nio.ByteBuffer;
import jcuda.Pointer;
import jcuda.driver.CUcontext;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;
import jcuda.driver.CUstream;
import jcuda.driver.JCudaDriver;
import jcuda.runtime.JCuda;
import jcuda.runtime.cudaError;
import jcuda.runtime.cudaEvent_t;
import jcuda.runtime.cudaMemcpyKind;
import jcuda.runtime.cudaStream_t;

/**
 * The CUDA calls gpudirect makes, through jcuda: the one class that imports it. Each call
 * checks its result and throws {@link CudaException} naming the call. Runtime API throughout,
 * except for loading and launching our own kernels: the runtime launches only kernels linked
 * into the program, the driver API also those loaded from PTX.
 */
final class Cuda {
  private Cuda() {}

  static int deviceCount() {
    int[] n = new int[1];
    int result = JCuda.cudaGetDeviceCount(n);
    if (result == cudaError.cudaErrorInsufficientDriver) {
      // The runtime says "insufficient driver" both when the driver is too old and when
      // there is none at all; only the second is common, and it needs different advice.
      throw new CudaException(result, driverProblem());
    }
    check("cudaGetDeviceCount", result);
    return n[0];
  }

  /** Why the runtime found the driver insufficient: missing (libcuda cannot load) or too old. */
  private static String driverProblem() {
    int[] version = new int[1];
    try {
      // jcuda's driver binding links libcuda itself, so loading it is the loader's own verdict.
      checkDriver("cuDriverGetVersion", JCudaDriver.cuDriverGetVersion(version));
    } catch (LinkageError e) {
      java.util.regex.Matcher m = java.util.regex.Pattern.compile("libcuda\\.so[^\\n:]*: ([^\\n]*)")
          .matcher(String.valueOf(e.getMessage()));
      return "no NVIDIA driver found (libcuda.so.1 is not loadable" + (m.find() ? ": " + m.group(1) : "")
          + "); install the NVIDIA driver to use a GPU here (nvidia-smi must list the GPU)";
    } catch (CudaException e) {
      return "the NVIDIA driver does not work: " + e.getMessage();
    }
    return "the NVIDIA driver supports CUDA up to " + version[0] / 1000 + "." + version[0] % 1000 / 10
        + ", older than the CUDA 12 runtime gpudirect uses; update the driver";
  }

  static String deviceName(int device) {
    jcuda.runtime.cudaDeviceProp p = new jcuda.runtime.cudaDeviceProp();
    check("cudaGetDeviceProperties", JCuda.cudaGetDeviceProperties(p, device));
    return p.getName();
  }

  /** Pins the pages of a direct buffer so that copies from it run at full PCIe speed. */
  static void hostRegister(ByteBuffer direct) {
    check("cudaHostRegister", JCuda.cudaHostRegister(base(direct), direct.capacity(),
        JCuda.cudaHostRegisterDefault));
  }

  static void hostUnregister(ByteBuffer direct) {
    check("cudaHostUnregister", JCuda.cudaHostUnregister(base(direct)));
  }

  static long malloc(long bytes) {
    Pointer p = new Pointer();
    check("cudaMalloc(" + bytes + ")", JCuda.cudaMalloc(p, bytes));
    return Address.of(p);
  }

  static void free(long address) {
    check("cudaFree", JCuda.cudaFree(new Address(address)));
  }

  static cudaStream_t createStream() {
    cudaStream_t s = new cudaStream_t();
    // Non-blocking: our copies must not serialise with the legacy default stream cuDF may use.
    check("cudaStreamCreateWithFlags", JCuda.cudaStreamCreateWithFlags(s, JCuda.cudaStreamNonBlocking));
    return s;
  }

  static void destroyStream(cudaStream_t s) {
    check("cudaStreamDestroy", JCuda.cudaStreamDestroy(s));
  }

  static void synchronize(cudaStream_t s) {
    check("cudaStreamSynchronize", JCuda.cudaStreamSynchronize(s));
  }

  /**
   * An event without timing (cheaper; only completion is asked of it). With {@code blockingSync},
   * a thread that waits for it sleeps until it fires; otherwise CUDA spins that thread's core
   * while it waits (the default where the process has fewer contexts than cores).
   */
  static cudaEvent_t createEvent(boolean blockingSync) {
    cudaEvent_t e = new cudaEvent_t();
    int flags = 0x02 /* cudaEventDisableTiming */ | (blockingSync ? 0x01 /* cudaEventBlockingSync */ : 0);
    check("cudaEventCreateWithFlags", JCuda.cudaEventCreateWithFlags(e, flags));
    return e;
  }

  static void record(cudaEvent_t e, cudaStream_t s) {
    check("cudaEventRecord", JCuda.cudaEventRecord(e, s));
  }

  static void synchronize(cudaEvent_t e) {
    check("cudaEventSynchronize", JCuda.cudaEventSynchronize(e));
  }

  static void destroyEvent(cudaEvent_t e) {
    check("cudaEventDestroy", JCuda.cudaEventDestroy(e));
  }

  static void zeroAsync(long deviceAddress, long length, cudaStream_t stream) {
    check("cudaMemsetAsync", JCuda.cudaMemsetAsync(new Address(deviceAddress), 0, length, stream));
  }

  /** Device to host (a registered direct buffer, from its position), on {@code stream}. */
  static void copyToHostAsync(ByteBuffer dst, long deviceAddress, int length, cudaStream_t stream) {
    Pointer host = base(dst).withByteOffset(dst.position());
    check("cudaMemcpyAsync(device to host, " + length + " bytes)",
        JCuda.cudaMemcpyAsync(host, new Address(deviceAddress), length, cudaMemcpyKind.cudaMemcpyDeviceToHost, stream));
  }

  /**
   * A kernel of {@code ptx} (PTX text), loaded into the current device's primary context, the
   * one the runtime API uses: the driver compiles the PTX for this GPU.
   */
  static CUfunction loadKernel(String ptx, String name) {
    checkDriver("cuInit", JCudaDriver.cuInit(0));
    makeContextCurrent();
    CUmodule module = new CUmodule();
    checkDriver("cuModuleLoadData", JCudaDriver.cuModuleLoadData(module, ptx));
    CUfunction f = new CUfunction();
    checkDriver("cuModuleGetFunction(" + name + ")", JCudaDriver.cuModuleGetFunction(f, module, name));
    return f;
  }

  /** Launches {@code f} on {@code stream}; each argument is passed as a 64-bit value. */
  static void launch(CUfunction f, int blocks, int threadsPerBlock, cudaStream_t stream, long... args) {
    makeContextCurrent();
    Pointer[] params = new Pointer[args.length];
    for (int i = 0; i < args.length; i++) {
      params[i] = Pointer.to(new long[] {args[i]});
    }
    checkDriver("cuLaunchKernel", JCudaDriver.cuLaunchKernel(f, blocks, 1, 1, threadsPerBlock, 1, 1,
        0, new CUstream(stream), Pointer.to(params), null));
  }

  /**
   * The driver API needs a current context on the calling thread; the runtime makes its
   * primary context current on a thread's first runtime call that needs one, and
   * {@code cudaFree(NULL)} is the call documented to do no more than that.
   */
  private static void makeContextCurrent() {
    CUcontext current = new CUcontext();
    checkDriver("cuCtxGetCurrent", JCudaDriver.cuCtxGetCurrent(current));
    if (current.equals(new CUcontext())) {
      check("cudaFree(NULL)", JCuda.cudaFree(new Pointer()));
    }
  }

  /** Host (a registered direct buffer, from its position) to device, on {@code stream}. */
  static void copyToDeviceAsync(long deviceAddress, ByteBuffer src, int length, cudaStream_t stream) {
    Pointer host = base(src).withByteOffset(src.position());
    check("cudaMemcpyAsync(host to device, " + length + " bytes)",
        JCuda.cudaMemcpyAsync(new Address(deviceAddress), host, length, cudaMemcpyKind.cudaMemcpyHostToDevice, stream));
  }

  /** Device to host, blocking; for tests and the first host access of a batch. */
  static void copyToHost(ByteBuffer dst, long deviceAddress, int length) {
    Pointer host = base(dst).withByteOffset(dst.position());
    check("cudaMemcpy(device to host, " + length + " bytes)",
        JCuda.cudaMemcpy(host, new Address(deviceAddress), length, cudaMemcpyKind.cudaMemcpyDeviceToHost));
  }

  /** The start of a direct buffer's memory, whatever its position. */
  private static Pointer base(ByteBuffer direct) {
    if (!direct.isDirect()) {
      throw new IllegalArgumentException("CUDA copies need a direct buffer");
    }
    return Pointer.to(direct.duplicate().clear());
  }

  private static void check(String call, int result) {
    if (result != 0) {
      throw new CudaException(call, result, JCuda.cudaGetErrorString(result));
    }
  }

  private static void checkDriver(String call, int result) {
    if (result != 0) {
      String[] text = new String[1];
      JCudaDriver.cuGetErrorString(result, text);
      throw new CudaException(call, result, text[0]);
    }
  }

  /** A raw device address as jcuda's pointer type (RMM hands out plain addresses). */
  private static final class Address extends Pointer {
    Address(long address) {
      super(address);
    }

    static long of(Pointer p) {
      return new Address(p).address();
    }

    private Address(Pointer p) {
      super(p);
    }

    long address() {
      return getNativePointer() + getByteOffset();
    }
  }
}
