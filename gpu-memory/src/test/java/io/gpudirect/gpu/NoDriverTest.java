package io.gpudirect.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * On a host with no NVIDIA driver at all, the CUDA runtime says "insufficient driver"; users
 * must be told instead that there is no driver and what to do. Runs only where no libcuda is
 * installed (this test's own look, independent of the code under test), as on CI hosts.
 */
class NoDriverTest {
  @Test
  void aHostWithoutADriverIsToldSo() {
    assumeTrue(libcudaDirs().stream().noneMatch(d -> Files.exists(d.resolve("libcuda.so.1"))),
        "skipped: an NVIDIA driver library is installed here");
    GpuEnvironment env = GpuEnvironment.get();
    assertFalse(env.gpu());
    assertEquals("no NVIDIA driver found (libcuda.so.1 is not loadable: cannot open shared object"
        + " file: No such file or directory); install the NVIDIA driver to use a GPU here"
        + " (nvidia-smi must list the GPU)", env.reason());
  }

  /** Where the dynamic loader finds the driver's library on Linux distributions and containers. */
  private static List<Path> libcudaDirs() {
    List<Path> dirs = new ArrayList<>();
    String ld = System.getenv("LD_LIBRARY_PATH");
    if (ld != null) {
      for (String d : ld.split(File.pathSeparator)) {
        if (!d.isEmpty()) {
          dirs.add(Path.of(d));
        }
      }
    }
    for (String d : new String[] {"/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib64", "/lib64",
        "/usr/lib", "/usr/lib/aarch64-linux-gnu", "/usr/local/nvidia/lib64", "/usr/lib/wsl/lib"}) {
      dirs.add(Path.of(d));
    }
    return dirs;
  }
}
