package io.gpudirect.transport;

import io.gpudirect.protocol.ChecksumAlgorithm;
import io.gpudirect.protocol.PartitionChecksums;
import io.gpudirect.protocol.ShuffleBlockId;
import io.gpudirect.protocol.ShuffleData;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.Checksum;

/**
 * Checks a window of a shuffle block against Spark's checksums of its partitions
 * ({@link PartitionChecksums}), in one pass over its bytes in the order they arrive: each
 * partition's checksum is updated with the bytes as they land (still in the core's cache) and
 * compared at its last byte. Partitions crossing the window's edges come out as
 * {@link PartitionPiece}s, which the block's reader completes. One per window attempt, used by
 * one thread at a time.
 */
public final class WindowChecks {
  private final ShuffleBlockId block;
  private final ShuffleData window;
  private final PartitionChecksums checks;
  private final Checksum running;
  /** The listed partition the next byte belongs to, where it starts and ends in the block. */
  private int index;
  private long partitionStart;
  private long partitionEnd;
  /** The block position of the next byte. */
  private long at;
  private final int[] values;

  /** For {@code window}, an answer carrying checksums, of {@code block}. */
  public WindowChecks(ShuffleBlockId block, ShuffleData window) {
    this.block = block;
    this.window = window;
    this.checks = window.checks();
    this.running = checks.algorithm().create();
    this.values = new int[checks.count()];
    this.partitionStart = checks.firstStart();
    this.partitionEnd = partitionStart + checks.lengths()[0];
    this.at = window.offset();
  }

  /** Whether checking as the bytes arrive keeps up with the socket (see {@link ChecksumAlgorithm#keepsUpWithTheWire}). */
  public boolean keepsUpWithTheWire() {
    return checks.algorithm().keepsUpWithTheWire();
  }

  /** Takes in the window's next bytes, {@code bytes}' remaining ones (its position is left alone). */
  public void update(ByteBuffer bytes) {
    ByteBuffer b = bytes.duplicate();
    while (b.hasRemaining()) {
      int n = (int) Math.min(b.remaining(), partitionEnd - at);
      int limit = b.limit();
      b.limit(b.position() + n);
      running.update(b);
      b.limit(limit);
      at += n;
      if (at == partitionEnd) {
        next();
      }
    }
  }

  private void next() {
    values[index] = (int) running.getValue();
    running.reset();
    index++;
    partitionStart = partitionEnd;
    partitionEnd = index < values.length ? partitionStart + checks.lengths()[index] : Long.MAX_VALUE;
  }

  /**
   * After the window's last byte: the first partition wholly in it whose checksum differs, as an
   * exception naming it and where the bytes came from ({@code source}, as "from gpudirect server
   * HOST:PORT"); or the window as received, with the pieces of partitions crossing its edges.
   */
  public ReceivedWindow verdict(String source) {
    if (at != window.offset() + window.length()) {
      throw new IllegalStateException("checked " + (at - window.offset()) + " of the " + window.length()
          + " bytes of a window of " + block.name());
    }
    if (index < values.length) {
      values[index] = (int) running.getValue();  // the last partition runs on past the window
    }
    List<PartitionPiece> pieces = new ArrayList<>(2);
    long start = checks.firstStart();
    long windowEnd = window.offset() + window.length();
    for (int i = 0; i < values.length; i++) {
      long length = checks.lengths()[i];
      long from = Math.max(start, window.offset());
      long to = Math.min(start + length, windowEnd);
      if (from == start && to == start + length) {
        if (values[i] != checks.checksums()[i]) {
          throw new PartitionChecksumMismatchException(block, checks.reduceIds()[i], length, checks.algorithm(),
              source, checks.checksums()[i], values[i]);
        }
      } else {
        pieces.add(new PartitionPiece(checks.algorithm(), checks.reduceIds()[i], start, length,
            checks.checksums()[i], from - start, to - from, values[i]));
      }
      start += length;
    }
    return new ReceivedWindow(window, pieces);
  }
}
