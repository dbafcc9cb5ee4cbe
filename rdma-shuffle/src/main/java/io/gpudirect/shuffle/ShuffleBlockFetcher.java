package io.gpudirect.shuffle;

import io.gpudirect.GpuDirectException;
import io.gpudirect.client.RemoteStore;
import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.shuffle.ShuffleFetchException.Reason;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * The remote blocks of one reduce task, fetched from the servers of the executors that wrote
 * them and handed to the task as they arrive, as Spark's {@code ShuffleBlockFetcherIterator}
 * hands its remote blocks: each block one SHUFFLE_READ (the server finds its range; no index is
 * read on this side), pipelined over the client's streams to each server, checked with CRC32C
 * and retried by the client; requests go out in turn to each server, within {@link FetchLimits}.
 * A block over {@link FetchToDisk}'s limit goes to a file of its own, as Spark's fetcher sends
 * such blocks to disk, and counts against the limits as any other does.
 *
 * <pre>{@code
 * try (ShuffleBlockFetcher blocks = ShuffleBlockFetcher.start(byServer, limits, clients, allocator)) {
 *   while (blocks.hasNext()) {
 *     try (FetchedBlock b = blocks.next()) {    // throws ShuffleFetchException for a failed block
 *       read(b.inputStream());
 *     }
 *   }
 * }
 * }</pre>
 *
 * <p>Every block gives exactly one result, in the order they arrive: its bytes, owned by the
 * caller until it closes them, or a {@link ShuffleFetchException} naming the block, its server
 * and why. After a failure the task may go on taking the other results (Spark stops at the
 * first). {@link #close()} gives back the memory (or deletes the file) of every block not taken,
 * and of every block still arriving once it has arrived. {@link #next()} is for one thread, the
 * task's, or results are taken with {@link #poll()} as {@link #onResult} tells of them, on
 * threads of the caller's; the results arrive on the client's threads.
 */
public final class ShuffleBlockFetcher implements AutoCloseable {
  /**
   * One server's blocks: those still to ask for, and how many it has outstanding; lost once a
   * block of it failed as {@link ShuffleFetchException.Reason#SERVER_LOST}, retries spent. Its
   * client is asked for once per fetch: a connect that failed fails every block already asked
   * for, rather than the later ones connecting again after the executor's clients forgot the
   * failure (seen: a fourth connect on a loaded machine, the first three retries spent).
   */
  private static final class Server {
    final InetSocketAddress address;
    final ArrayDeque<BlockToFetch> waiting;
    int inFlight;
    boolean lost;
    CompletableFuture<RemoteStore> client;

    Server(InetSocketAddress address, List<BlockToFetch> blocks) {
      this.address = address;
      this.waiting = new ArrayDeque<>(blocks);
    }
  }

  /**
   * A block's fetch as it ended: its bytes, or why not; {@code sent} unless it was failed without
   * a request, its server lost already.
   */
  private record Result(Server server, BlockToFetch block, FetchedBlock fetched, RuntimeException failure,
      boolean sent) {}

  /** A request chosen under the lock and sent outside it (sending may connect). */
  private record Send(Server server, CompletableFuture<RemoteStore> client, BlockToFetch block) {}

  private final FetchLimits limits;
  private final FetchToDisk toDisk;
  private final ShuffleClients clients;
  private final BufferAllocator allocator;
  private final List<Server> servers = new ArrayList<>();
  private final LinkedBlockingQueue<Result> results = new LinkedBlockingQueue<>();
  /** The server whose turn it is to send next. */
  private int turn;
  private long bytesInFlight;
  private int requestsInFlight;
  /** Results not yet taken by {@link #next()}. */
  private int remaining;
  private boolean closed;
  /** Told of every result as it arrives, where the caller asked ({@link #onResult}). */
  private Runnable listener;

  private ShuffleBlockFetcher(Map<InetSocketAddress, List<BlockToFetch>> blocks, FetchLimits limits,
      FetchToDisk toDisk, ShuffleClients clients, BufferAllocator allocator) {
    this.limits = limits;
    this.toDisk = toDisk;
    this.clients = clients;
    this.allocator = allocator;
    blocks.forEach((address, list) -> {
      if (!list.isEmpty()) {
        servers.add(new Server(address, list));
        remaining += list.size();
      }
    });
  }

  /**
   * Starts fetching {@code blocks}, by the server that has them, within {@code limits}, through
   * the executor's {@code clients}, those over {@code toDisk}'s limit to disk; each block's
   * memory is charged to {@code allocator}.
   */
  public static ShuffleBlockFetcher start(Map<InetSocketAddress, List<BlockToFetch>> blocks,
      FetchLimits limits, FetchToDisk toDisk, ShuffleClients clients, BufferAllocator allocator) {
    ShuffleBlockFetcher f = new ShuffleBlockFetcher(blocks, limits, toDisk, clients, allocator);
    f.sendWhatFits();
    return f;
  }

  /** As above, every block into memory. */
  public static ShuffleBlockFetcher start(Map<InetSocketAddress, List<BlockToFetch>> blocks,
      FetchLimits limits, ShuffleClients clients, BufferAllocator allocator) {
    return start(blocks, limits, FetchToDisk.NEVER, clients, allocator);
  }

  /** Whether a result is still to be taken. */
  public synchronized boolean hasNext() {
    return remaining > 0;
  }

  /**
   * The next block to arrive, waiting for it; the caller owns it and closes it. Throws
   * {@link ShuffleFetchException} when that block could not be fetched (the other blocks are
   * still to be had), and the failure itself for one that is no fetch failure (this side's
   * memory ran out); {@link NoSuchElementException} when every result has been taken.
   */
  public FetchedBlock next() {
    checkTakeable();
    Result r;
    try {
      r = results.take();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new GpuDirectException("Interrupted while waiting for a shuffle block", e);
    }
    return taken(r);
  }

  /**
   * As {@link #next()}, but null at once where no result has arrived yet. Unlike {@code next()},
   * several threads may poll at once: each result goes to one of them.
   */
  public FetchedBlock poll() {
    checkTakeable();
    Result r = results.poll();
    return r == null ? null : taken(r);
  }

  /**
   * Calls {@code listener} once for every result from now on as it arrives (and at once for each
   * already waiting to be taken), on the thread that delivered it: a client's, which it must not
   * block. For a caller that takes results with {@link #poll()} on threads of its own.
   */
  public void onResult(Runnable listener) {
    int waiting;
    synchronized (this) {
      this.listener = listener;
      waiting = results.size();
    }
    for (int i = 0; i < waiting; i++) {
      listener.run();
    }
  }

  private synchronized void checkTakeable() {
    if (closed) {
      throw new GpuDirectException("The shuffle fetcher is closed");
    }
    if (remaining == 0) {
      throw new NoSuchElementException("Every block of this fetch has been taken");
    }
  }

  private FetchedBlock taken(Result r) {
    synchronized (this) {
      remaining--;
      if (r.sent()) {
        bytesInFlight -= r.block().size();
        requestsInFlight--;
        r.server().inFlight--;
      }
    }
    sendWhatFits();
    if (r.failure() != null) {
      throw r.failure();
    }
    return r.fetched();
  }

  /** Sends every request the limits allow now, each server in turn. */
  private void sendWhatFits() {
    List<Send> sends = new ArrayList<>();
    synchronized (this) {
      while (!closed) {
        Server s = nextServer();
        if (s == null) {
          break;
        }
        BlockToFetch b = s.waiting.peek();
        // As Spark: a block bigger than the whole budget goes when nothing else is in flight.
        if (requestsInFlight >= limits.maxRequestsInFlight()
            || (bytesInFlight > 0 && bytesInFlight + b.size() > limits.maxBytesInFlight())) {
          break;
        }
        s.waiting.poll();
        s.inFlight++;
        requestsInFlight++;
        bytesInFlight += b.size();
        if (s.client == null) {
          s.client = clients.client(s.address);
        }
        sends.add(new Send(s, s.client, b));
      }
    }
    sends.forEach(this::send);
  }

  /** The next server in turn with a block waiting and room for it; null when none. */
  private Server nextServer() {
    for (int i = 0; i < servers.size(); i++) {
      Server s = servers.get((turn + i) % servers.size());
      if (!s.waiting.isEmpty() && s.inFlight < limits.maxBlocksInFlightPerAddress()) {
        turn = (turn + i + 1) % servers.size();
        return s;
      }
    }
    return null;
  }

  private void send(Send send) {
    BlockToFetch block = send.block();
    FetchMemory memory = toDisk.toDisk(block.size()) ? new BlockDownload(allocator, block.id(), toDisk.files())
        : new BlockBytes(allocator, block.id());
    InetSocketAddress address = send.server().address;
    long sent = System.nanoTime();
    send.client()
        .thenCompose(client -> client.readShuffleBlock(block.id(), block.size(), memory))
        .thenApply(length -> memory.fetched(address, length, System.nanoTime() - sent))
        .whenComplete((fetched, err) -> {
          if (err == null) {
            arrived(new Result(send.server(), block, fetched, null, true));
            return;
          }
          memory.release();
          Throwable cause = err instanceof CompletionException && err.getCause() != null ? err.getCause() : err;
          arrived(new Result(send.server(), block, null, FetchFailures.of(block.id(), address, cause), true));
        });
  }

  /**
   * A block's fetch has ended. A server lost, retries spent, fails its blocks not yet asked for
   * at once, with the same cause: asking would make each wait out the retries again (its
   * connection attempts too), and a reducer fails at its first fetch failure anyway.
   */
  private void arrived(Result r) {
    Runnable tell = null;
    int told = 1;
    boolean kept = false;
    synchronized (this) {
      if (!closed) {
        kept = true;
        tell = listener;
        results.add(r);
        Server s = r.server();
        if (r.failure() instanceof ShuffleFetchException f && f.reason() == Reason.SERVER_LOST && !s.lost) {
          s.lost = true;
          for (BlockToFetch b; (b = s.waiting.poll()) != null; told++) {
            results.add(new Result(s, b, null, new ShuffleFetchException(b.id(), s.address, Reason.SERVER_LOST,
                "Cannot fetch shuffle block " + b.id().name() + " (" + b.id().describe() + "): not asked for,"
                    + " its server was lost fetching " + f.block().name() + ": " + f.getMessage(), f), false));
          }
        }
      }
    }
    if (!kept) {
      if (r.fetched() != null) {
        r.fetched().close();
      }
      return;
    }
    for (int i = 0; tell != null && i < told; i++) {
      tell.run();
    }
  }

  /**
   * Stops: no further requests go out, the blocks arrived and not taken are given back, and
   * those still arriving are given back as they arrive. Blocks the caller took stay its own.
   */
  @Override
  public void close() {
    List<Result> left = new ArrayList<>();
    synchronized (this) {
      closed = true;
      results.drainTo(left);
    }
    for (Result r : left) {
      if (r.fetched() != null) {
        r.fetched().close();
      }
    }
  }
}
