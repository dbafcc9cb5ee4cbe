package io.gpudirect.verbs.ucx;

import io.gpudirect.bench.AlternatingFetches;
import io.gpudirect.bench.AlternatingFetches.Contest;
import io.gpudirect.bench.AlternatingFetches.Side;
import io.gpudirect.client.BlockClient;
import io.gpudirect.client.ClientConfig;
import io.gpudirect.client.TransportSelector;
import io.gpudirect.server.BlockServer;
import io.gpudirect.server.RdmaMode;
import io.gpudirect.verbs.provider.RdmaProvider;
import java.net.InetSocketAddress;

/**
 * UCX fetch throughput against gpudirect's own TCP path, over loopback, in one run: one server
 * serving both (--rdma on, UCX), one file read whole into a direct buffer by a TCP client and
 * by a transport=rdma client (UCX, over whatever transport it has here), alternating round by
 * round so that both see the same machine state ({@link AlternatingFetches}). Prints the median
 * and best GB/s of each and their ratio, per stream count. Not a test: {@code java -cp <the
 * benchmarks module's test classpath> io.gpudirect.verbs.ucx.UcxFetchBenchmark [MiB] [rounds] [streams,...]}.
 */
public final class UcxFetchBenchmark {
  private UcxFetchBenchmark() {}

  public static void main(String[] args) throws Exception {
    AlternatingFetches.run(args, 256, "gpudirect-ucx-bench", (servers, scratch) -> {
      BlockServer server = servers.start(b -> b.rdma(RdmaMode.ON).rdmaProvider(RdmaProvider.UCX));
      InetSocketAddress address = new InetSocketAddress("127.0.0.1", server.port());
      return new Contest(", server " + server.rdmaStatus(),
          Side.named("tcp", streams -> BlockClient.connect(address,
              ClientConfig.builder().streams(streams).transport("tcp").build())),
          // named by the transport it ran, which says what UCX carried the bytes over
          new Side(BlockClient::transport, streams -> BlockClient.connect(address,
              ClientConfig.builder().streams(streams).transport("rdma").build(), TransportSelector.of(RdmaProvider.UCX))),
          "ucx/tcp");
    });
  }
}
