package io.gpudirect.transport;

import io.gpudirect.protocol.ShuffleData;

/**
 * Block memory that moves each window's bytes elsewhere (a file) as soon as they are in and
 * checked, and takes its buffer back then, so that a block of any length holds about a window
 * per stream of memory rather than its own length. The client asks such memory for windows of
 * its chunk, not of the server's largest answer.
 */
public interface DrainedBlockMemory extends BlockMemory {
  /**
   * The window {@code answer} describes is in the buffer {@link #bind} gave for it, its CRC32C
   * checked. Called once per window, on the thread that completed it, before the block's read
   * completes. What it throws fails the read, without a retry (it is this side's failure).
   */
  void drain(ShuffleData answer);
}
