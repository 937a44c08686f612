/*
 * IcmDryExpire: Java's ExpireSnapshots (RemoveSnapshots) on table metadata held in memory, for
 * the expiry benchmark: "committing" only swaps the in-memory metadata, so the same decision and
 * the same file cleanup (reachable or incremental) run as in a real expiry, with every delete
 * going to the caller's callback, and nothing on disk changes. That lets a benchmark repeat the
 * expiry on one table after JVM warm-up; `decide` runs the decision alone for the retention
 * differential (RetentionDiff). RemoveSnapshots' constructor is package-private, hence this
 * class's package.
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

  /**
   * The metadata Java's expiry decision leaves of `metadata` (which snapshots and refs remain),
   * with "now" fixed at nowMs and the table's own retention properties, plus expireOlderThan /
   * retainLast when not null. Nothing is read from or deleted in storage (cleanup level NONE).
   * Throws what RemoveSnapshots throws (a malformed history.expire.* property: its constructor).
   */
  public static TableMetadata decide(
      TableMetadata metadata, FileIO io, long nowMs, Long olderThanMs, Integer retainLast) {
    MemoryOps ops = new MemoryOps(metadata, io);
    ExpireSnapshots expire = new RemoveSnapshots(ops);
    IcmExpireControl.setNow(expire, nowMs, org.apache.iceberg.util.PropertyUtil.propertyAsLong(
        metadata.properties(), TableProperties.MAX_SNAPSHOT_AGE_MS,
        TableProperties.MAX_SNAPSHOT_AGE_MS_DEFAULT));
    if (olderThanMs != null) {
      expire.expireOlderThan(olderThanMs);
    }
    if (retainLast != null) {
      expire.retainLast(retainLast);
    }
    expire.cleanupLevel(ExpireSnapshots.CleanupLevel.NONE).commit();
    return ops.current();
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
