package io.gpudirect.gpu;

import ai.rapids.cudf.MemoryBuffer;
import io.gpudirect.memory.Charge;

/** Gives a cuDF buffer's charge back when cuDF reports its last reference (slices included) closed. */
final class ReleaseOnLastClose implements MemoryBuffer.EventHandler {
  private final Charge charge;
  private final Runnable forget;

  ReleaseOnLastClose(Charge charge, Runnable forget) {
    this.charge = charge;
    this.forget = forget;
  }

  @Override
  public void onClosed(int refCount) {
    if (refCount == 0) {
      forget.run();
      charge.close();
    }
  }
}
