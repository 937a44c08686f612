/*
 * BenchExpire: times Java Iceberg's ExpireSnapshots computing the set of files an expiry deletes,
 * without deleting anything (the delete callback only collects paths; the commit only replaces
 * in-memory metadata, see org.apache.iceberg.IcmDryExpire). The counterpart of
 * `icemaint expire-snapshots --dry-run` in docs/BENCHMARKS.md.
 *
 * Usage: BenchExpire --metadata FILE --older-than-ms MS [--retain-last N] [--warmup N]
 *        [--iterations N] [--strategy reachable|auto] [--paths-out FILE]
 * The metadata file is parsed once ("load_seconds"); then `warmup` untimed and `iterations`
 * timed expiries each print one JSON line: {"phase", "seconds" (wall), "cpu_seconds" (the whole
 * process, all threads: Java plans with its worker pool), "expired", "deleted"}. --strategy
 * reachable (default) forces Java's reachable-file cleanup, the file semantics icemaint
 * implements; auto lets Java choose (incremental when only main's ancestors expire).
 * --paths-out writes the sorted deleted paths of the last run, one per line, to compare with
 * icemaint's plan.
 */
package dev.icemaint.interop;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentSkipListSet;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.ExpireSnapshots;
import org.apache.iceberg.IcmDryExpire;
import org.apache.iceberg.IcmExpireControl;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableMetadataParser;
import org.apache.iceberg.hadoop.HadoopFileIO;

public final class BenchExpire {
  private BenchExpire() {}

  public static void main(String[] argv) throws Exception {
    Harness.Args a = Harness.Args.parse(argv, Set.of());
    HadoopFileIO io = new HadoopFileIO(new Configuration());
    long olderThan = Long.parseLong(a.require("older-than-ms"));
    int retainLast = Integer.parseInt(a.get("retain-last", "1"));
    int warmup = Integer.parseInt(a.get("warmup", "3"));
    int iterations = Integer.parseInt(a.get("iterations", "5"));
    boolean reachable = a.get("strategy", "reachable").equals("reachable");

    long t0 = System.nanoTime();
    TableMetadata base = TableMetadataParser.read(io, a.require("metadata"));
    System.out.println("{\"phase\":\"load\",\"seconds\":" + secs(System.nanoTime() - t0)
        + ",\"snapshots\":" + base.snapshots().size() + "}");

    Set<String> deleted = new ConcurrentSkipListSet<>();
    for (int i = 0; i < warmup + iterations; i++) {
      deleted.clear();
      ExpireSnapshots expire = IcmDryExpire.create(base, io)
          .expireOlderThan(olderThan)
          .retainLast(retainLast)
          .deleteWith(deleted::add);
      if (reachable) {
        IcmExpireControl.useIncrementalCleanup(expire, false);
      }
      int kept = expire.apply().size(); // the decision alone, untimed: for the report
      long cpu0 = processCpuNanos();
      long w0 = System.nanoTime();
      expire.commit(); // decides again, then plans the deletes (reachable: every manifest)
      long w1 = System.nanoTime();
      long cpu1 = processCpuNanos();
      System.out.println("{\"phase\":\"" + (i < warmup ? "warmup" : "timed") + "\",\"seconds\":"
          + secs(w1 - w0) + ",\"cpu_seconds\":" + secs(cpu1 - cpu0) + ",\"expired\":"
          + (base.snapshots().size() - kept) + ",\"deleted\":" + deleted.size() + "}");
    }
    String out = a.get("paths-out", null);
    if (out != null) {
      Files.write(Path.of(out), new TreeSet<>(deleted), StandardCharsets.UTF_8);
    }
    System.exit(0); // Iceberg's worker pool threads would keep the JVM alive a little longer
  }

  private static long processCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory
        .getOperatingSystemMXBean()).getProcessCpuTime();
  }

  private static String secs(long nanos) {
    return String.format(java.util.Locale.ROOT, "%.4f", nanos / 1e9);
  }
}
