/*
 * IcmManifestEntries: every entry of a manifest as Java Iceberg decodes it, including DELETED
 * entries and the status of each. ManifestReader.entries() and ManifestEntry are package-private,
 * so this one class lives in Iceberg's package (a split package on the plain classpath); it only
 * reads, and copies each value out because the reader reuses its entry objects.
 */
package org.apache.iceberg;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.FileIO;

public final class IcmManifestEntries {
  private IcmManifestEntries() {}

  /** One manifest entry, decoded with Iceberg's sequence-number and snapshot-id inheritance. */
  public record Entry(String status, Long snapshotId, Long dataSequenceNumber,
      Long fileSequenceNumber, String content, String path, String format, long recordCount,
      long fileSizeBytes, int specId) {}

  public static List<Entry> read(ManifestFile manifest, FileIO io, Map<Integer, PartitionSpec> specs)
      throws IOException {
    List<Entry> out = new ArrayList<>();
    if (manifest.content() == ManifestContent.DATA) {
      try (ManifestReader<DataFile> r = ManifestFiles.read(manifest, io, specs)) {
        copy(r.entries(), out);
      }
    } else {
      try (ManifestReader<DeleteFile> r = ManifestFiles.readDeleteManifest(manifest, io, specs)) {
        copy(r.entries(), out);
      }
    }
    return out;
  }

  private static <F extends ContentFile<F>> void copy(CloseableIterable<ManifestEntry<F>> entries,
      List<Entry> out) throws IOException {
    try (entries) {
      for (ManifestEntry<F> e : entries) {
        F f = e.file();
        out.add(new Entry(e.status().name(), e.snapshotId(), e.dataSequenceNumber(),
            e.fileSequenceNumber(), f.content().name(), f.location(), f.format().name(),
            f.recordCount(), f.fileSizeInBytes(), f.specId()));
      }
    }
  }
}
