package io.gpudirect.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gpudirect.client.ClientConfig;
import io.gpudirect.client.ClientContext;
import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.protocol.ShuffleBlockId;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * A reducer's side for tests: the executor's shuffle clients and an allocator, and fetches of
 * blocks from one server whose results are gathered by block, bytes or failure.
 */
final class ShuffleFetches implements AutoCloseable {
  /** A block's outcome: its bytes and whether they came through a file, or why not. */
  record Outcome(byte[] bytes, boolean onDisk, RuntimeException failure) {
    byte[] orThrow() {
      if (failure != null) {
        throw failure;
      }
      return bytes;
    }

    ShuffleFetchException fetchFailure() {
      if (failure instanceof ShuffleFetchException f) {
        return f;
      }
      throw new AssertionError("expected a fetch failure, got " + (failure == null
          ? bytes.length + " bytes" : failure), failure);
    }
  }

  final BufferAllocator allocator;
  final ShuffleClients clients;
  final ClientContext context = new ClientContext();

  ShuffleFetches(String name, byte[] secret) {
    this(name, ClientConfig.builder().secret(secret).streams(2).maxRetries(2)
        .retryBackoff(Duration.ofMillis(20)).connectTimeout(Duration.ofSeconds(2))
        .requestTimeout(Duration.ofSeconds(10)).build());
  }

  ShuffleFetches(String name, ClientConfig config) {
    allocator = BufferAllocator.root().newChildAllocator(name, Long.MAX_VALUE);
    clients = new ShuffleClients(config, context);
  }

  /** Every block's outcome, fetched from {@code port} within {@code limits}. */
  Map<ShuffleBlockId, Outcome> fetch(int port, FetchLimits limits, List<BlockToFetch> blocks) {
    return fetch(port, limits, FetchToDisk.NEVER, blocks);
  }

  /** As above, those over {@code toDisk}'s limit through files. */
  Map<ShuffleBlockId, Outcome> fetch(int port, FetchLimits limits, FetchToDisk toDisk, List<BlockToFetch> blocks) {
    Map<InetSocketAddress, List<BlockToFetch>> byServer = Map.of(new InetSocketAddress("127.0.0.1", port), blocks);
    Map<ShuffleBlockId, Outcome> out = new LinkedHashMap<>();
    try (ShuffleBlockFetcher fetcher = ShuffleBlockFetcher.start(byServer, limits, toDisk, clients, allocator)) {
      while (fetcher.hasNext()) {
        try (FetchedBlock b = fetcher.next()) {
          out.put(b.id(), new Outcome(readAll(b), b.onDisk(), null));
        } catch (ShuffleFetchException e) {
          out.put(e.block(), new Outcome(null, false, e));
        }
      }
    }
    return out;
  }

  Outcome fetchOne(int port, ShuffleBlockId id) {
    return fetch(port, FetchLimits.SPARK_DEFAULTS, List.of(new BlockToFetch(id, 1))).get(id);
  }

  static List<BlockToFetch> blocks(List<ShuffleBlockId> ids) {
    List<BlockToFetch> out = new ArrayList<>();
    ids.forEach(id -> out.add(new BlockToFetch(id, 1)));
    return out;
  }

  /** Through the stream, the one reader that takes any block. */
  static byte[] readAll(FetchedBlock b) {
    try (InputStream in = b.inputStream()) {
      return in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Waits for {@code count} to reach {@code expected}, then checks that it stays there a while. */
  static void settlesAt(long expected, LongSupplier count) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (count.getAsLong() < expected && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    Thread.sleep(300);
    assertEquals(expected, count.getAsLong());
  }

  @Override
  public void close() {
    clients.close();
    context.close();
    allocator.close();
  }
}
