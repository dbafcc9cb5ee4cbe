package io.gpudirect.verbs.ucx;

import io.gpudirect.transport.rdma.RdmaFileChangeTest;
import io.gpudirect.verbs.Verbs;

/**
 * {@link RdmaFileChangeTest} over real UCX (over TCP where there is no RDMA NIC): the server's
 * WRITEs held by {@link HeldWritesVerbs} while the file changes under the read. Skips, saying
 * why, where libucp is missing.
 */
class RdmaOverUcxFileChangeTest extends RdmaFileChangeTest {
  @Override
  protected HeldWrites heldWrites() {
    RdmaOverUcxConformanceTest.needsUcx();
    HeldWritesVerbs server = new HeldWritesVerbs(UcxVerbs.open());
    Verbs client = UcxVerbs.open();
    return new HeldWrites() {
      @Override
      public Verbs server() {
        return server;
      }

      @Override
      public Verbs client() {
        return client;
      }

      @Override
      public void hold() {
        server.holdWrites();
      }

      @Override
      public boolean holding() {
        return server.held() > 0;
      }

      @Override
      public void release() {
        server.releaseWrites();
      }
    };
  }
}
