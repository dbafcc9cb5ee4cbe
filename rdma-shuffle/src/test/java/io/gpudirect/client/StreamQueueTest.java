package io.gpudirect.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

class StreamQueueTest {
  @Test
  void chunksSpreadOverTheStreamsThenWaitInOrderForTheFirstStreamWithRoom() {
    StreamQueue<String> q = new StreamQueue<>(3);
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
    assertEquals(new StreamQueue.Assignment<>(1, "w1"), q.finished(1));
    assertEquals(new StreamQueue.Assignment<>(1, "w2"), q.finished(1));
    assertNull(q.finished(1));
    assertEquals(StreamQueue.DEPTH - 1, q.outstanding(1));
    assertEquals(StreamQueue.DEPTH, q.outstanding(0));
    // The next chunk goes to the stream with the fewest outstanding.
    assertEquals(1, q.claim("c"));
  }
}
