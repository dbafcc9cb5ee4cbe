package io.gpudirect.shuffle;

import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.protocol.ShuffleBlockId;
import java.net.InetSocketAddress;
import java.util.ArrayList;

/** A block fetched into memory: its windows' buffers become the {@link FetchedBlock}'s. */
final class BlockBytes extends FetchMemory {
  BlockBytes(BufferAllocator allocator, ShuffleBlockId block) {
    super(allocator, block);
  }

  @Override
  synchronized FetchedBlock fetched(InetSocketAddress server, long size, long requestNanos) {
    done = true;
    return new BufferedBlock(block, server, size, requestNanos, new ArrayList<>(windows.values()));
  }
}
