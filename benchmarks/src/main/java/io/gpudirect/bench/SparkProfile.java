package io.gpudirect.bench;

import io.gpudirect.client.RemoteStore;
import io.gpudirect.client.TransferStats;
import io.gpudirect.options.ResolvedOptions;
import io.gpudirect.remote.RemoteStores;
import io.gpudirect.server.BlockServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.SparkSession;

/**
 * Only target 4's scans, for profilers and A/B runs: the bench's Parquet dataset (written once
 * into DIR and kept, so that iterations at multi-GB sizes do not pay for writing it), an
 * embedded server over DIR, and the same aggregation through {@code spark.read.parquet} and
 * through {@code gpudirect} scans, interleaved round by round, with the CPU of each query by
 * thread role and the fetch counters of the scan's store.
 *
 * <p>Arguments: DIR rows rounds [SCAN ...], where each SCAN is {@code local} or
 * {@code gpudirect} followed by {@code :option=value,option=value} (read options of that scan);
 * the default is {@code local gpudirect}. One untimed query of each scan first.
 */
public final class SparkProfile {
  private static final String QUERY = "SELECT count(*), sum(id), sum(amount), max(category) FROM %s";

  private SparkProfile() {}

  public static void main(String[] args) throws Exception {
    Path dir = Files.createDirectories(Path.of(args[0]));
    long rows = Long.parseLong(args[1]);
    int rounds = Integer.parseInt(args[2]);
    List<String> scans = args.length > 3 ? List.of(args).subList(3, args.length) : List.of("local", "gpudirect");
    SparkSession spark = BenchSessions.local("gpudirect spark profile", 2, dir);
    Path parquet = dir.resolve("trips-" + rows + ".parquet");
    if (!Files.exists(parquet.resolve("_SUCCESS"))) {
      SparkScan.writeDataset(spark, parquet, rows);
    }
    long bytes = SparkScan.sizeOf(parquet);
    try (BlockServer server = BlockServer.builder().root(dir).bindAddress("127.0.0.1").port(0).build()) {
      server.start();
      List<String> tables = new ArrayList<>();
      List<RemoteStore> stores = new ArrayList<>();
      for (int i = 0; i < scans.size(); i++) {
        String table = "scan" + i;
        String scan = scans.get(i);
        if (scan.equals("local")) {
          spark.read().parquet(parquet.toString()).createOrReplaceTempView(table);
          stores.add(null);
        } else {
          Map<String, String> options = new LinkedHashMap<>();
          if (scan.contains(":")) {
            for (String kv : scan.substring(scan.indexOf(':') + 1).split(",")) {
              options.put(kv.substring(0, kv.indexOf('=')), kv.substring(kv.indexOf('=') + 1));
            }
          }
          spark.read().format("gpudirect").options(options)
              .load("gpudirect://127.0.0.1:" + server.port() + "/" + parquet.getFileName())
              .createOrReplaceTempView(table);
          // The store the scan's tasks share (same server, same settings): its fetch counters.
          stores.add(RemoteStores.get("127.0.0.1", server.port(), ResolvedOptions.resolve(options, k -> null)));
        }
        tables.add(table);
        System.out.printf("%s = %s: %d partitions%n", table, scan, spark.table(table).rdd().getNumPartitions());
      }
      System.out.printf("%,d rows, %s of Parquet%n", rows, Sizes.show(bytes));
      for (int r = -1; r < rounds; r++) {
        for (int i = 0; i < tables.size(); i++) {
          query(spark, tables.get(i), bytes, r >= 0, stores.get(i));
        }
      }
    } finally {
      spark.stop();
      RemoteStores.closeAll();
    }
  }

  private static void query(SparkSession spark, String table, long bytes, boolean print, RemoteStore store)
      throws Exception {
    TransferStats before = store == null ? null : store.stats();
    ThreadCpu roles = new ThreadCpu();
    Measurement m = Measurement.of(() -> {
      spark.sql(String.format(QUERY, table)).collectAsList();
      return bytes;
    });
    Map<String, Double> byRole = roles.secondsByRole();
    if (!print) {
      return;
    }
    System.out.printf("%-6s %6.2f s  %6.2f CPU s  %6.2f CPU s/GB%n", table, m.seconds(), m.cpuSeconds(),
        m.cpuSecondsPerGb());
    if (store != null) {
      TransferStats after = store.stats();
      long reads = after.reads() - before.reads();
      long fetched = after.bytesFetched() - before.bytesFetched();
      System.out.printf("    fetched %s in %d reads (%s each), waited %.2f s in all%n", Sizes.show(fetched),
          reads, Sizes.show(reads == 0 ? 0 : fetched / reads), (after.fetchNanos() - before.fetchNanos()) / 1e9);
    }
    byRole.forEach((role, cpu) -> {
      if (cpu >= 0.05) {
        System.out.printf("    cpu %-40s %6.2f s%n", role, cpu);
      }
    });
  }
}
