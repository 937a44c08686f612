/*
 * IcmDryExpire: Java's ExpireSnapshots (RemoveSnapshots) on table metadata held in memory, for
 * the expiry benchmark: "committing" only swaps the in-memory metadata, so the same decision and
 * the same file cleanup (reachable or incremental) run as in a real expiry, with every delete
 * going to the caller's callback, and nothing on disk changes. That lets a benchmark repeat the
 * expiry on one table after JVM warm-up. RemoveSnapshots' constructor is package-private, hence
 * this class's package.
 */
package org.apache.iceberg;

import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.LocationProvider;

public final class IcmDryExpire {
  private IcmDryExpire() {}

  /** A new RemoveSnapshots over `metadata`; its commit changes only an in-memory copy. */
  public static ExpireSnapshots create(TableMetadata metadata, FileIO io) {
    return new RemoveSnapshots(new MemoryOps(metadata, io));
  }

  /** TableOperations whose state is one TableMetadata object in memory. */
  private static final class MemoryOps implements TableOperations {
    private TableMetadata current;
    private final FileIO io;

    MemoryOps(TableMetadata metadata, FileIO io) {
      this.current = metadata;
      this.io = io;
    }

    @Override
    public TableMetadata current() {
      return current;
    }

    @Override
    public TableMetadata refresh() {
      return current;
    }

    @Override
    public void commit(TableMetadata base, TableMetadata metadata) {
      if (base != current) {
        throw new IllegalStateException("in-memory commit on a stale base");
      }
      current = metadata;
    }

    @Override
    public FileIO io() {
      return io;
    }

    @Override
    public String metadataFileLocation(String fileName) {
      return current.location() + "/metadata/" + fileName;
    }

    @Override
    public LocationProvider locationProvider() {
      return LocationProviders.locationsFor(current.location(), current.properties());
    }
  }
}
