package io.gpudirect.verbs.ucx;

import java.nio.ByteBuffer;
import org.openucx.jucx.UcxUtils;

/** The address of a direct buffer, for tests outside this package (jucx stays in it). */
public final class UcxTestAccess {
  private UcxTestAccess() {}

  public static long address(ByteBuffer direct) {
    return UcxUtils.getAddress(direct);
  }
}
