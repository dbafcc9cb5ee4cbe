package io.gpudirect.shuffle;

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

/**
 * A reducer's side for tests: the executor's shuffle clients and an allocator, and fetches of
 * blocks from one server whose results are gathered by block, bytes or failure.
 */
final class ShuffleFetches implements AutoCloseable {
  /** A block's outcome: its bytes, or why not. */
  record Outcome(byte[] bytes, RuntimeException failure) {
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
    Map<InetSocketAddress, List<BlockToFetch>> byServer = Map.of(new InetSocketAddress("127.0.0.1", port), blocks);
    Map<ShuffleBlockId, Outcome> out = new LinkedHashMap<>();
    try (ShuffleBlockFetcher fetcher = ShuffleBlockFetcher.start(byServer, limits, clients, allocator)) {
      while (fetcher.hasNext()) {
        try (FetchedBlock b = fetcher.next()) {
          out.put(b.id(), new Outcome(readAll(b), null));
        } catch (ShuffleFetchException e) {
          out.put(e.block(), new Outcome(null, e));
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

  @Override
  public void close() {
    clients.close();
    context.close();
    allocator.close();
  }
}
