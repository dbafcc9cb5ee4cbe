package io.gpudirect.client;

import io.gpudirect.bench.AlternatingFetches;
import io.gpudirect.bench.AlternatingFetches.Contest;
import io.gpudirect.bench.AlternatingFetches.Side;
import io.gpudirect.server.BlockServer;
import io.gpudirect.testing.TestCertificates;
import io.gpudirect.tls.TlsContexts;
import java.net.InetSocketAddress;

/**
 * What TLS costs on the TCP path, over loopback: one file read whole into a direct buffer from
 * two servers on the same root, one plaintext and one TLS, alternating run by run so that both
 * see the same machine state ({@link AlternatingFetches}). Prints the median and best GB/s of
 * each and their ratio, per stream count. Not a test: {@code java -cp <the benchmarks module's
 * test classpath> io.gpudirect.client.TlsCostBenchmark [MiB] [rounds] [streams,...]}.
 */
public final class TlsCostBenchmark {
  private TlsCostBenchmark() {}

  public static void main(String[] args) throws Exception {
    AlternatingFetches.run(args, 512, "gpudirect-tls-bench", (servers, scratch) -> {
      TestCertificates cert = TestCertificates.create(scratch.resolve("keys"), "bench");
      BlockServer plain = servers.start(b -> b);
      BlockServer tls = servers.start(b -> b.tls(TlsContexts.server(cert.certificate(), cert.privateKey())));
      return new Contest("",
          Side.named("plaintext", streams -> BlockClient.connect(new InetSocketAddress("127.0.0.1", plain.port()),
              ClientConfig.builder().streams(streams).build())),
          Side.named("TLS", streams -> BlockClient.connect(new InetSocketAddress("127.0.0.1", tls.port()),
              ClientConfig.builder().streams(streams).tls(true).tlsTrustStore(cert.certificate()).build())),
          "TLS/plaintext");
    });
  }
}
