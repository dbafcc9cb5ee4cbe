package io.gpudirect.verbs.ucx;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * Which UCX versions a listener warns of (UcxVerbs.warnOfStaleEvents): those before 1.18, where a
 * peer dropping connections fast can abort the JVM. Needs no UCX: it is the rule alone.
 */
class UcxVersionTest {
  @Test
  void versionsBefore118AreNamed() {
    assertTrue(UcxVerbs.before("1.13.1", 1, 18));
    assertTrue(UcxVerbs.before("1.17.0", 1, 18));
    assertTrue(UcxVerbs.before("0.99.0", 1, 18));
  }

  @Test
  void versionsFrom118OnAreNot() {
    assertFalse(UcxVerbs.before("1.18.0", 1, 18));
    assertFalse(UcxVerbs.before("1.22.0", 1, 18));
    assertFalse(UcxVerbs.before("2.0.1", 1, 18));
  }

  @Test
  void anUnknownVersionIsWarnedOf() {
    assertTrue(UcxVerbs.before("unknown", 1, 18));
  }
}
