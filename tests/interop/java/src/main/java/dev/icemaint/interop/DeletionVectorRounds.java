/*
 * DeletionVectorRounds: a healthy format-v3 merge-on-read workload, as Spark's DELETE writes it.
 * `--files` data files of 20 rows (partitioned by identity(category) over 4 values unless
 * `--partitioned false`); each of `--rounds` rounds deletes one more row from each of
 * `--per-round` data files chosen at random (`--seed`): one Puffin file for the round
 * (PartitioningDVWriter) holding a vector per touched data file with all its deleted positions,
 * the previous vectors of those data files removed in the same commit. Vectors of one
 * cardinality have one size, so many replaced Puffin files have the size of a retained one.
 *
 * Usage: DeletionVectorRounds --uri JDBC --warehouse URI [--catalog NAME] --table ns.t
 *        [--partitioned true|false] [--files 40] [--rounds 30] [--per-round 3] [--seed 1]
 * Prints {"snapshots": N, "puffin_files": M} (M: Puffin files written).
 */
package dev.icemaint.interop;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.deletes.PositionDelete;
import org.apache.iceberg.io.PartitioningDVWriter;

public final class DeletionVectorRounds {
  private DeletionVectorRounds() {}

  static final Schema SCHEMA = SharedDeletionVectors.SCHEMA;

  public static void main(String[] argv) throws Exception {
    Harness.Args a = Harness.Args.parse(argv, Set.of());
    boolean partitioned = Boolean.parseBoolean(a.get("partitioned", "true"));
    int nFiles = Integer.parseInt(a.get("files", "40"));
    int rounds = Integer.parseInt(a.get("rounds", "30"));
    int perRound = Integer.parseInt(a.get("per-round", "3"));
    Random rnd = new Random(Long.parseLong(a.get("seed", "1")));
    try (var catalog = Harness.openCatalog(a)) {
      TableIdentifier id = TableIdentifier.parse(a.require("table"));
      if (!catalog.namespaceExists(id.namespace())) catalog.createNamespace(id.namespace());
      PartitionSpec spec = partitioned
          ? PartitionSpec.builderFor(SCHEMA).identity("category").build()
          : PartitionSpec.unpartitioned();
      Map<String, String> props = new TreeMap<>();
      props.put(TableProperties.FORMAT_VERSION, "3");
      props.put(TableProperties.DELETE_MODE, "merge-on-read");
      Table t = catalog.buildTable(id, SCHEMA).withPartitionSpec(spec).withProperties(props).create();

      List<DataFile> data = new ArrayList<>();
      AppendFiles append = t.newAppend();
      for (int i = 0; i < nFiles; i++) {
        DataFile f = SharedDeletionVectors.writeRows(t, "c" + (i % 4), i * 100L, 20, -1);
        data.add(f);
        append.appendFile(f);
      }
      append.commit();

      Map<String, TreeSet<Long>> deleted = new HashMap<>();
      Map<String, DeleteFile> vectorOf = new HashMap<>();
      int puffins = 0;
      for (int r = 0; r < rounds; r++) {
        List<DataFile> pick = new ArrayList<>(data);
        Collections.shuffle(pick, rnd);
        pick = pick.subList(0, Math.min(perRound, pick.size()));
        PartitioningDVWriter<Record> w =
            new PartitioningDVWriter<>(SharedDeletionVectors.files(t, FileFormat.PUFFIN),
                path -> null);
        PositionDelete<Record> row = PositionDelete.create();
        try (w) {
          for (DataFile f : pick) {
            TreeSet<Long> positions = deleted.computeIfAbsent(f.location(), k -> new TreeSet<>());
            if (positions.size() < 20) {
              long pos;
              do {
                pos = rnd.nextInt(20);
              } while (positions.contains(pos));
              positions.add(pos);
            }
            for (long p : positions) w.write(row.set(f.location(), p), t.spec(), f.partition());
          }
        }
        RowDelta delta = t.newRowDelta();
        Set<String> written = new java.util.HashSet<>();
        for (DeleteFile d : w.result().deleteFiles()) {
          written.add(d.location());
          delta.addDeletes(d);
          DeleteFile old = vectorOf.put(d.referencedDataFile(), d);
          if (old != null) delta.removeDeletes(old);
        }
        puffins += written.size();
        delta.validateFromSnapshot(t.currentSnapshot().snapshotId()).commit();
        t.refresh();
      }
      int snapshots = 0;
      for (var s : t.snapshots()) snapshots++;
      System.out.println("{\"snapshots\":" + snapshots + ",\"puffin_files\":" + puffins + "}");
    }
  }

}
