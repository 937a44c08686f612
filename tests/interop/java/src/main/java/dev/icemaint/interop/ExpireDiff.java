/*
 * ExpireDiff: runs Java Iceberg's ExpireSnapshots on one table with the given options and prints
 * what it did, so the expire tests can compare icemaint's result on an identical copy:
 *   {"table": NAME, "expired": [ids, oldest first], "retained": [ids, oldest first],
 *    "refs": [names of the refs left, sorted],
 *    "deleted_paths": [sorted paths passed to the delete callback]}
 * Files are really deleted (the callback collects each path, then deletes it through the table's
 * FileIO), so the copy afterwards shows Java's end state.
 *
 * Usage: ExpireDiff --uri JDBC_URL --warehouse DIR --table ns.t [--now-ms MS] [--older-than-ms MS]
 *        [--retain-last N] [--snapshot-id ID]... [--cleanup-level NONE|METADATA_ONLY|ALL]
 *        [--clean-expired-metadata] [--cleanup-strategy reachable|incremental|auto]
 * --now-ms fixes the clock Java measures ref ages, per-branch snapshot ages and the default
 * cutoff (now - history.expire.max-snapshot-age-ms) from; without it, the JVM's clock.
 * --cleanup-strategy defaults to reachable (the file-set semantics icemaint is compared with);
 * auto lets Java choose as it does by default.
 */
package dev.icemaint.interop;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentSkipListSet;
import org.apache.iceberg.ExpireSnapshots;
import org.apache.iceberg.IcmExpireControl;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.util.PropertyUtil;

public final class ExpireDiff {
  private ExpireDiff() {}

  public static void main(String[] argv) throws Exception {
    Harness.Args a = Harness.Args.parse(argv, Set.of("clean-expired-metadata"));
    try (var catalog = Harness.openCatalog(a)) {
      String name = a.require("table");
      Table table = Harness.loadTable(catalog, name);
      List<Snapshot> before = sortedSnapshots(table);

      Set<String> deleted = new ConcurrentSkipListSet<>();
      ExpireSnapshots expire = table.expireSnapshots().deleteWith(path -> {
        deleted.add(path);
        table.io().deleteFile(path);
      });
      String nowMs = a.get("now-ms", null);
      if (nowMs != null) {
        IcmExpireControl.setNow(expire, Long.parseLong(nowMs), maxSnapshotAgeMs(table));
      }
      String olderThan = a.get("older-than-ms", null);
      if (olderThan != null) {
        expire.expireOlderThan(Long.parseLong(olderThan));
      }
      String strategy = a.get("cleanup-strategy", "reachable");
      if (!strategy.equals("auto")) {
        IcmExpireControl.useIncrementalCleanup(expire, strategy.equals("incremental"));
      }
      String retainLast = a.get("retain-last", null);
      if (retainLast != null) {
        expire.retainLast(Integer.parseInt(retainLast));
      }
      for (String id : a.all("snapshot-id")) {
        expire.expireSnapshotId(Long.parseLong(id));
      }
      String level = a.get("cleanup-level", null);
      if (level != null) {
        expire.cleanupLevel(ExpireSnapshots.CleanupLevel.valueOf(level));
      }
      if (a.get("clean-expired-metadata", null) != null) {
        expire.cleanExpiredMetadata(true);
      }
      expire.commit();

      table.refresh();
      Set<Long> kept = new TreeSet<>();
      table.snapshots().forEach(s -> kept.add(s.snapshotId()));
      List<Long> expired = new ArrayList<>();
      List<Long> retained = new ArrayList<>();
      for (Snapshot s : before) {
        (kept.contains(s.snapshotId()) ? retained : expired).add(s.snapshotId());
      }
      System.out.println("{\"table\":" + Harness.json(name) + ",\"expired\":" + Harness.jsonLongs(expired)
          + ",\"retained\":" + Harness.jsonLongs(retained) + ",\"refs\":"
          + Harness.jsonStrings(new TreeSet<>(table.refs().keySet())) + ",\"deleted_paths\":"
          + Harness.jsonStrings(new TreeSet<>(deleted)) + "}");
    }
  }

  private static long maxSnapshotAgeMs(Table table) {
    return PropertyUtil.propertyAsLong(table.properties(),
        TableProperties.MAX_SNAPSHOT_AGE_MS, TableProperties.MAX_SNAPSHOT_AGE_MS_DEFAULT);
  }

  private static List<Snapshot> sortedSnapshots(Table table) {
    List<Snapshot> out = new ArrayList<>();
    table.snapshots().forEach(out::add);
    out.sort(Comparator.comparingLong(Snapshot::timestampMillis)
        .thenComparingLong(Snapshot::sequenceNumber));
    return out;
  }
}
