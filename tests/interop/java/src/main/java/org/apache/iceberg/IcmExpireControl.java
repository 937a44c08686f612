/*
 * IcmExpireControl: the two knobs of Java's snapshot expiry that its public API does not offer,
 * needed to compare icemaint with Java exactly: the cleanup strategy (RemoveSnapshots picks
 * incremental or reachable cleanup by itself; withIncrementalCleanup is package-private, hence
 * this class's package) and the clock (RemoveSnapshots reads "now" once, when it is created, into
 * a private field that ref ages and per-branch snapshot ages are measured from).
 */
package org.apache.iceberg;

import java.lang.reflect.Field;

public final class IcmExpireControl {
  private IcmExpireControl() {}

  /** true: incremental cleanup; false: reachable cleanup. */
  public static ExpireSnapshots useIncrementalCleanup(ExpireSnapshots expire, boolean incremental) {
    return ((RemoveSnapshots) expire).withIncrementalCleanup(incremental);
  }

  /**
   * Replaces the "now" the expiry measures ages from. Call before any option that depends on it;
   * the default cutoff it derived is replaced too (expireOlderThan(nowMs - maxSnapshotAgeMs)).
   */
  public static void setNow(ExpireSnapshots expire, long nowMs, long maxSnapshotAgeMs) {
    try {
      Field now = RemoveSnapshots.class.getDeclaredField("now");
      now.setAccessible(true);
      now.setLong(expire, nowMs);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("cannot fix RemoveSnapshots.now in this Iceberg version", e);
    }
    expire.expireOlderThan(nowMs - maxSnapshotAgeMs);
  }
}
