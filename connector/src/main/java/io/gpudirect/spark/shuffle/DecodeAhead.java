package io.gpudirect.spark.shuffle;

import io.gpudirect.GpuDirectException;
import io.gpudirect.protocol.ShuffleBlockId;
import io.gpudirect.shuffle.FetchedBlock;
import io.gpudirect.shuffle.ShuffleBlockFetcher;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * A reduce task's remote blocks decoded (decrypted and decompressed, by Spark's serializer
 * manager) on the executor's decoding threads as they arrive, ahead of the task, as the RAPIDS
 * Accelerator's multithreaded reader decompresses on threads of its own: the task's thread is
 * left deserializing the records and what the query does with them. The decoded bytes waiting
 * for the task are bounded by twice {@code budget}: a block is decoded only while those waiting
 * are under it, and only up to a share of it per thread; a block on disk, or one that decodes to
 * more than its share, goes to the task as it came, and is decoded on the task's thread as
 * without this.
 * Blocks come out in the order they are decoded. Records themselves are not read ahead: a
 * serializer may reuse one record object for every record of a stream (Spark's
 * {@code UnsafeRowSerializer} does).
 */
final class DecodeAhead implements AutoCloseable {
  /** How a block's bytes become its records' bytes: Spark's {@code SerializerManager.wrapStream}. */
  @FunctionalInterface
  interface Decoder {
    InputStream decode(ShuffleBlockId block, InputStream raw) throws IOException;
  }

  /**
   * A block for the task. {@code block} is null only with {@code failure}, its fetch's failure.
   * With {@code decoded}, its records' bytes, the block given back already; with
   * {@code undecodable}, why its bytes would not decode (damaged), given back too; with neither,
   * the block as fetched, the task's to decode and close.
   */
  record Ready(FetchedBlock block, byte[] decoded, Exception undecodable, RuntimeException failure) {
    long decodedBytes() {
      return decoded == null ? 0 : decoded.length;
    }

    void release() {
      if (block != null) {
        block.close();
      }
    }
  }

  private final ShuffleBlockFetcher fetcher;
  private final Executor threads;
  private final int maxDecoding;
  private final long budget;
  /** The most one block may decode to here: {@code budget}'s share per decoding thread. */
  private final long share;
  private final Decoder decoder;
  private final LinkedBlockingQueue<Ready> ready = new LinkedBlockingQueue<>();
  /** Blocks still to be taken by the task. */
  private int left;
  /** Results the fetcher told of that no decoding thread has taken yet. */
  private int arrived;
  private int decoding;
  /** Bytes of {@code ready}'s decoded blocks. */
  private long decodedBytes;
  private boolean closed;

  /**
   * Decodes the {@code blocks} results of {@code fetcher} as they arrive, on at most
   * {@code maxDecoding} of {@code threads} at once.
   */
  DecodeAhead(ShuffleBlockFetcher fetcher, int blocks, Executor threads, int maxDecoding, long budget,
      Decoder decoder) {
    this.fetcher = fetcher;
    this.left = blocks;
    this.threads = threads;
    this.maxDecoding = maxDecoding;
    this.budget = budget;
    this.share = Math.max(1, budget / maxDecoding);
    this.decoder = decoder;
    fetcher.onResult(this::arrived);
  }

  synchronized boolean hasNext() {
    return left > 0;
  }

  /** The next block decoded (or left as it came, or failed), waiting for one. */
  Ready next() {
    synchronized (this) {
      if (left == 0 || closed) {
        throw new IllegalStateException(closed ? "Closed" : "Every block has been taken");
      }
    }
    Ready r;
    try {
      r = ready.take();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new GpuDirectException("Interrupted while waiting for a shuffle block", e);
    }
    synchronized (this) {
      left--;
      decodedBytes -= r.decodedBytes();
    }
    startWhatFits();
    return r;
  }

  /** On a client's thread: a result is in; must not block. */
  private void arrived() {
    synchronized (this) {
      arrived++;
    }
    startWhatFits();
  }

  private void startWhatFits() {
    int start = 0;
    synchronized (this) {
      while (!closed && arrived > 0 && decoding < maxDecoding && decodedBytes < budget) {
        arrived--;
        decoding++;
        start++;
      }
    }
    for (int i = 0; i < start; i++) {
      threads.execute(this::decodeOne);
    }
  }

  /** On a decoding thread: takes one result and decodes it. */
  private void decodeOne() {
    Ready r;
    try {
      FetchedBlock b = fetcher.poll();
      if (b == null) {
        throw new IllegalStateException("The shuffle fetcher told of a result it did not have");
      }
      r = decode(b);
    } catch (RuntimeException failed) {
      // The fetch's failure (or, closed meanwhile, the fetcher's refusal): the task's to throw.
      r = new Ready(null, null, null, failed);
    }
    boolean kept;
    synchronized (this) {
      decoding--;
      kept = !closed;
      if (kept) {
        decodedBytes += r.decodedBytes();
        ready.add(r);
      }
    }
    if (!kept) {
      r.release();
    }
    startWhatFits();
  }

  private Ready decode(FetchedBlock b) {
    if (b.onDisk()) {
      return new Ready(b, null, null, null);
    }
    byte[] bytes;
    try (InputStream in = decoder.decode(b.id(), b.inputStream())) {
      bytes = readAtMost(in, share);
    } catch (Exception e) {
      b.close();
      return new Ready(b, null, e, null);
    } catch (Error e) {
      // Out of heap, say: the task fails as it would have decoding the block itself.
      b.close();
      return new Ready(null, null, null, new GpuDirectException("Cannot decode shuffle block " + b.id().name()
          + " (" + b.id().describe() + ") ahead of its task: " + e, e));
    }
    if (bytes == null) {
      // Larger decoded than its share: the task decodes it as it reads, from the block's start.
      return new Ready(b, null, null, null);
    }
    b.close();
    return new Ready(b, bytes, null, null);
  }

  /** All of {@code in}, or null where it is longer than {@code limit}. */
  private static byte[] readAtMost(InputStream in, long limit) throws IOException {
    long cap = Math.min(limit, Integer.MAX_VALUE - 16);
    byte[] all = in.readNBytes((int) cap);
    return in.read() < 0 ? all : null;
  }

  /** Gives back every block decoded and not taken; those being decoded are given back when done. */
  @Override
  public void close() {
    List<Ready> left = new ArrayList<>();
    synchronized (this) {
      closed = true;
      ready.drainTo(left);
    }
    left.forEach(Ready::release);
  }
}
