package io.gpudirect.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/** A version's change time travels wherever the version does: frames, tokens, messages. */
class FileVersionTest {
  private static final FileVersion V =
      new FileVersion("(dev=803,ino=12)", 4096, 1_700_000_000_123_456_789L, 1_700_000_100_987_654_321L);

  @Test
  void theChangeTimeCrossesTheWire() {
    for (FileVersion v : new FileVersion[] {V, FileVersion.ANY,
        new FileVersion("", 0, 5, FileVersion.CHANGE_TIME_UNKNOWN)}) {
      ByteBuffer frame = Frames.encode(new StatResponse(3, new FileMeta("f", 4096, 1, false, v)));
      Message back = Frames.decode(frame.position(Integer.BYTES));
      assertEquals(v, ((StatResponse) back).entry().version());
    }
  }

  @Test
  void versionsThatDifferOnlyInTheirChangeTimeAreTwo() {
    FileVersion other = new FileVersion(V.fileId(), V.size(), V.modifiedNanos(), V.changedNanos() + 1);
    assertNotEquals(V, other);
    assertNotEquals(V.describe(), other.describe());
    assertTrue(V.describe().contains("changed 2023-11-14T22:15:00.987654321Z"), V.describe());
  }

  @Test
  void aTokenKeepsEveryPart() {
    assertEquals(V, FileVersion.parse(V.token()));
    FileVersion unknown = new FileVersion("", 1, 2, FileVersion.CHANGE_TIME_UNKNOWN);
    assertEquals(unknown, FileVersion.parse(unknown.token()));
    assertFalse(unknown.describe().contains("changed"), unknown.describe());
    // A version-4 token (no change time) is not taken for another version.
    assertThrows(IllegalArgumentException.class, () -> FileVersion.parse("4096:17:(dev=803,ino=12)"));
  }
}
