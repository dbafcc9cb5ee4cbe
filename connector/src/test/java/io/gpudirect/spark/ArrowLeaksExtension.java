package io.gpudirect.spark;

import io.gpudirect.arrow.ArrowMemory;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * After every connector test class: the connector's Arrow root ({@link ArrowMemory}) holds no
 * bytes, so a reader that kept an Arrow buffer past its close fails the class that leaked it.
 * The Arrow half of io.gpudirect.testing.NoLeaksExtension, kept here because only the connector
 * links Arrow; auto-detected through this module's {@code META-INF/services} like that one.
 */
public final class ArrowLeaksExtension implements AfterAllCallback {
  @Override
  public void afterAll(ExtensionContext context) {
    if (context.getParent().flatMap(ExtensionContext::getTestClass).isPresent()) {
      return; // a @Nested class: checked when its outer class ends
    }
    long bytes = ArrowMemory.allocatedBytes();
    if (bytes != 0) {
      throw new AssertionError(context.getDisplayName() + " left " + bytes
          + " bytes allocated in the connector's Arrow root");
    }
  }
}
