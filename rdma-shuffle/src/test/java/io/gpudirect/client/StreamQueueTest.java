package io.gpudirect.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

class StreamQueueTest {
  @Test
  void chunksSpreadOverTheStreamsThenWaitInOrderForTheFirstStreamWithRoom() {
    StreamQueue<String> q = new StreamQueue<>(3, 2 * 4, c -> 4);
    // One each first, then a second each: every stream busy before any gets two.
    int[] given = new int[3 * StreamQueue.DEPTH];
    for (int i = 0; i < given.length; i++) {
      given[i] = q.claim("c" + i);
    }
    assertEquals("[0, 1, 2, 0, 1, 2]", java.util.Arrays.toString(given));
    assertEquals(-1, q.claim("w1"));
    assertEquals(-1, q.claim("w2"));
    assertEquals(2, q.waiting());
    // Stream 1 finishes twice while 0 and 2 are still busy: it takes both waiting chunks, in order.
    q.finished(1, "c1");
    assertEquals(new StreamQueue.Assignment<>(1, "w1"), q.nextToSend());
    assertNull(q.nextToSend());
    q.finished(1, "c4");
    assertEquals(new StreamQueue.Assignment<>(1, "w2"), q.nextToSend());
    q.finished(1, "w1");
    assertNull(q.nextToSend());
    assertEquals(StreamQueue.DEPTH - 1, q.outstanding(1));
    assertEquals(StreamQueue.DEPTH, q.outstanding(0));
    // The next chunk goes to the stream with the fewest outstanding.
    assertEquals(1, q.claim("c"));
  }

  /**
   * Small requests (shuffle blocks of a few KiB) fill a stream up to its full chunks' bytes, up
   * to {@link StreamQueue#MAX_REQUESTS}: counted, two at a time would wait a round trip each.
   */
  @Test
  void smallRequestsFillAStreamByTheirBytes() {
    StreamQueue<Long> q = new StreamQueue<>(1, 2L << 20, c -> c);
    for (int i = 0; i < StreamQueue.MAX_REQUESTS; i++) {
      assertEquals(0, q.claim(16L << 10), "request " + i);
    }
    assertEquals(-1, q.claim(16L << 10), "a request past MAX_REQUESTS waits");
    q.finished(0, 16L << 10);
    assertEquals(new StreamQueue.Assignment<>(0, 16L << 10), q.nextToSend());
    // By bytes: a full chunk waits behind the two in flight, and a small one does not pass it.
    StreamQueue<Long> full = new StreamQueue<>(1, 2L << 20, c -> c);
    assertEquals(0, full.claim(1L << 20));
    assertEquals(0, full.claim(1L << 20));
    assertEquals(-1, full.claim(1L << 20));
    assertEquals(-1, full.claim(16L << 10), "in order behind the waiting chunk");
    full.finished(0, 1L << 20);
    assertEquals(new StreamQueue.Assignment<>(0, 1L << 20), full.nextToSend());
    assertNull(full.nextToSend(), "the stream is full again");
  }
}
