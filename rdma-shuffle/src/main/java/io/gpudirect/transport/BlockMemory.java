package io.gpudirect.transport;

import io.gpudirect.protocol.ShuffleData;
import java.nio.ByteBuffer;

/**
 * Memory for a SHUFFLE_READ's payload, whose length only its answer tells: taken when the
 * answer's header ({@link ShuffleData}) has arrived and before any payload byte is written, on
 * the thread that reads the connection's answers, as {@link PayloadMemory} is.
 */
@FunctionalInterface
public interface BlockMemory {
  /**
   * A buffer whose remaining bytes equal {@code answer.length()}, for the payload of the window
   * {@code answer} describes. Called once per attempt of a window; an attempt after a failed one
   * may be answered with another length (the map output was written again), so the memory of a
   * failed attempt is the caller's to reuse or give back. What it throws fails that read alone.
   */
  ByteBuffer bind(ShuffleData answer);
}
