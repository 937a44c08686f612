/*
 * RetentionDiff: Java Iceberg's snapshot-expiry decision (RemoveSnapshots, cleanup level NONE,
 * nothing read from or deleted in storage) on many table metadata files in one JVM, for the
 * retention-boundary differential (tests/interop/test_retention_boundaries.py): every
 * history.expire.* table property and per-ref retention field at 0, 1, its largest value and
 * malformed.
 *
 * Usage: RetentionDiff JOBS_FILE
 * Each line of JOBS_FILE: CASE <TAB> METADATA_JSON <TAB> NOW_MS <TAB> OLDER_THAN_MS|- <TAB>
 * RETAIN_LAST|-. Output, one JSON line per job in order:
 *   {"case": CASE, "expired": [ids, sorted], "retained": [ids, sorted], "refs": [names, sorted]}
 * or, when Java refuses the metadata or the expiry (parsing the metadata, or RemoveSnapshots'
 * constructor reading the properties, throws),
 *   {"case": CASE, "error": "ExceptionClass: message"}.
 */
package dev.icemaint.interop;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.IcmDryExpire;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableMetadataParser;
import org.apache.iceberg.hadoop.HadoopFileIO;

public final class RetentionDiff {
  private RetentionDiff() {}

  public static void main(String[] argv) throws Exception {
    if (argv.length != 1) {
      throw new IllegalArgumentException("usage: RetentionDiff JOBS_FILE");
    }
    HadoopFileIO io = new HadoopFileIO(new Configuration());
    for (String line : Files.readAllLines(Path.of(argv[0]), StandardCharsets.UTF_8)) {
      if (line.isBlank()) {
        continue;
      }
      String[] f = line.split("\t", -1);
      System.out.println(run(io, f[0], f[1], Long.parseLong(f[2]), optionalLong(f[3]),
          f[4].equals("-") ? null : Integer.valueOf(f[4])));
      System.out.flush();
    }
  }

  private static String run(HadoopFileIO io, String name, String path, long nowMs,
      Long olderThanMs, Integer retainLast) {
    try {
      TableMetadata before = TableMetadataParser.read(io, path);
      TableMetadata after = IcmDryExpire.decide(before, io, nowMs, olderThanMs, retainLast);
      Set<Long> kept = new TreeSet<>();
      after.snapshots().forEach(s -> kept.add(s.snapshotId()));
      Set<Long> expired = new TreeSet<>();
      for (Snapshot s : before.snapshots()) {
        if (!kept.contains(s.snapshotId())) {
          expired.add(s.snapshotId());
        }
      }
      return "{\"case\":" + Harness.json(name) + ",\"expired\":" + Harness.jsonLongs(List.copyOf(expired))
          + ",\"retained\":" + Harness.jsonLongs(List.copyOf(kept)) + ",\"refs\":"
          + Harness.jsonStrings(new TreeSet<>(after.refs().keySet())) + "}";
    } catch (RuntimeException e) {
      return "{\"case\":" + Harness.json(name) + ",\"error\":"
          + Harness.json(e.getClass().getSimpleName() + ": " + e.getMessage()) + "}";
    }
  }

  private static Long optionalLong(String text) {
    return text.equals("-") ? null : Long.valueOf(text);
  }
}
