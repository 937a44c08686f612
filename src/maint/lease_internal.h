/*
 * maint/lease_internal.h: keeping the table lease during a delete phase (internal).
 */
#ifndef ICM_MAINT_LEASE_INTERNAL_H
#define ICM_MAINT_LEASE_INTERNAL_H

#include "icemaint/maint.h"

/* icm_lease_renew before a delete batch, at most every 5 s (and a quarter of the lease's
 * lifetime) while the lease is not due for renewal: within that time after a check that
 * found it ours, no other run can hold it (maint/lease.c). Returns what icm_lease_renew
 * returns, or 0 when no check was due. */
int icm__lease_keep(icm_lease *l);

#endif /* ICM_MAINT_LEASE_INTERNAL_H */
