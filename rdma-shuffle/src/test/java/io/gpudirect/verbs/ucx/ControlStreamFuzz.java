package io.gpudirect.verbs.ucx;

import io.gpudirect.protocol.ErrorCode;
import io.gpudirect.protocol.ErrorResponse;
import io.gpudirect.protocol.Frames;
import io.gpudirect.protocol.Message;
import io.gpudirect.protocol.RdmaBind;
import io.gpudirect.protocol.RdmaBound;
import io.gpudirect.protocol.RdmaRead;
import io.gpudirect.protocol.RdmaReadDone;
import io.gpudirect.protocol.RdmaSetupAck;
import io.gpudirect.protocol.RdmaShuffleDone;
import io.gpudirect.protocol.RdmaShuffleRead;
import io.gpudirect.protocol.ShuffleBlockId;
import io.gpudirect.protocol.ShuffleData;
import io.gpudirect.protocol.ShuffleRead;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Frames for fuzzing a queue pair's control stream, crafted and random, from a seeded
 * {@link Random} so that a failing run can be replayed. Two kinds: frames a peer takes and
 * stays up for (key announcements with a valid layout and made-up contents, revocations), which
 * make up the bulk, and one "breaker" that must close the connection cleanly (an exploding key,
 * random bytes, a broken or misplaced message, a WRITE where nothing was announced).
 */
final class ControlStreamFuzz {
  private final Random random;

  ControlStreamFuzz(long seed) {
    this.random = new Random(seed);
  }

  /** {@code n} frames a peer accepts: RKEYs with valid layouts over a few ids, and REVOKEs. */
  List<ByteBuffer> accepted(int n) {
    List<ByteBuffer> frames = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      int id = 1 + random.nextInt(64);
      if (random.nextInt(3) == 0) {
        frames.add(UcxFrames.revoke(id));
      } else {
        byte[] key = UcxFrames.wellFormedKey(1 + random.nextInt(8), random.nextInt(41), (byte) random.nextInt());
        frames.add(UcxFrames.rkey(id, random.nextLong(), random.nextInt(Integer.MAX_VALUE), random.nextInt(2), key));
      }
    }
    return frames;
  }

  /** One frame that must break the connection (or be ignored), never the process. */
  ByteBuffer breaker() {
    return switch (random.nextInt(9)) {
      case 0 -> UcxFrames.rkey(1 + random.nextInt(64), 0x1000, 4096, random.nextInt(2), UcxFrames.explodingKey());
      case 1 -> UcxFrames.rkey(1, 0x1000, 4096, 0, mutatedKey());
      case 2 -> UcxFrames.frame(random.nextInt(12) - 2, random.nextInt(), randomBytes(random.nextInt(64)));
      case 3 -> UcxFrames.frame(UcxFrames.SEND, random.nextInt(64), randomBytes(random.nextInt(64)));
      case 4 -> UcxFrames.send(Frames.encode(misplacedMessage()));
      case 5 -> HostileUcxServer.writeFrame(random.nextInt(70), random.nextLong(), 12 + 64, randomBytes(64));
      case 6 -> UcxFrames.frame(UcxFrames.RKEY, random.nextInt(8192) - 100, randomBytes(random.nextInt(128)));
      case 7 -> UcxFrames.frame(UcxFrames.REVOKE, random.nextInt(16), randomBytes(16));
      default -> UcxFrames.send(flipped(Frames.encode(misplacedMessage())));
    };
  }

  /** A key with a valid layout, then one byte of it changed: a size, the map or the type. */
  private byte[] mutatedKey() {
    byte[] key = UcxFrames.wellFormedKey(1 + random.nextInt(8), random.nextInt(41), (byte) random.nextInt());
    key[random.nextInt(key.length)] = (byte) random.nextInt();
    return key;
  }

  private Message misplacedMessage() {
    return switch (random.nextInt(8)) {
      case 0 -> new RdmaBound();
      case 1 -> new RdmaReadDone(random.nextLong(), random.nextInt(1 << 20), random.nextBoolean(), random.nextInt());
      case 2 -> new ErrorResponse(random.nextLong(), ErrorCode.IO_ERROR, "fuzz");
      case 3 -> new RdmaSetupAck(random.nextLong(), 1 + random.nextInt(65535), randomBytes(RdmaSetupAck.TOKEN_BYTES), 1 + random.nextInt(64), 16 << 10);
      case 4 -> new RdmaBind(randomBytes(RdmaSetupAck.TOKEN_BYTES));
      // A block of the map output HostileClientFuzzTest's server has (or not), put anywhere.
      case 5 -> new RdmaShuffleRead(new ShuffleRead(random.nextLong(), new ShuffleBlockId(1, random.nextInt(3),
          random.nextInt(4), 4 + random.nextInt(3)), random.nextInt(8192), random.nextInt(1 << 20),
          io.gpudirect.protocol.FileVersion.ANY), random.nextLong(), random.nextInt());
      // For the request RdmaClientUnderFuzz has out (id 1) half the time: not the window it asked.
      // Half of them with Spark's partition checksums (protocol 8): a list of any shape.
      case 6 -> new RdmaShuffleDone(new ShuffleData(random.nextInt(2) == 0 ? 1 : random.nextLong(),
          random.nextInt(1 << 20), io.gpudirect.protocol.FileVersion.ANY, random.nextInt(8192),
          random.nextInt(1 << 20), random.nextBoolean() ? partitionChecksums()
              : io.gpudirect.protocol.PartitionChecksums.NONE), random.nextBoolean(), random.nextInt());
      default -> new RdmaRead(random.nextLong(), "../" + random.nextInt(), io.gpudirect.protocol.FileVersion.ANY,
          random.nextInt(1 << 20), random.nextInt(1 << 20), random.nextLong(), random.nextInt());
    };
  }

  /** Up to 16 partitions' checksums: reduce ids, lengths and values at random. */
  private io.gpudirect.protocol.PartitionChecksums partitionChecksums() {
    int n = 1 + random.nextInt(16);
    int[] reduceIds = new int[n];
    long[] lengths = new long[n];
    int[] values = new int[n];
    for (int i = 0; i < n; i++) {
      reduceIds[i] = random.nextInt(8);
      lengths[i] = random.nextInt(2) == 0 ? random.nextInt(1 << 20) : random.nextLong();
      values[i] = random.nextInt();
    }
    io.gpudirect.protocol.ChecksumAlgorithm[] algorithms = io.gpudirect.protocol.ChecksumAlgorithm.values();
    return new io.gpudirect.protocol.PartitionChecksums(algorithms[random.nextInt(algorithms.length)],
        random.nextInt(2) == 0 ? 0 : random.nextLong(), reduceIds, lengths, values);
  }

  private ByteBuffer flipped(ByteBuffer frame) {
    int at = random.nextInt(frame.remaining());
    frame.put(at, (byte) (frame.get(at) ^ (1 << random.nextInt(8))));
    return frame;
  }

  byte[] randomBytes(int n) {
    byte[] b = new byte[n];
    random.nextBytes(b);
    return b;
  }

  int nextInt(int bound) {
    return random.nextInt(bound);
  }
}
