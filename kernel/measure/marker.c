/* Marker accesses for the cache model; see marker.h. */
#include "marker.h"

/* markers_on (option markers: off unless a plugin reads them): defined in arch ipcfast.S,
 * a byte of the IPC fastpath's CR3 gate (docs/ipc.md). */

void marker_define(int asid, int domain, const char *name)
{
    marker(MARK_DEFINE, (unsigned)asid);
    marker(MARK_DOMAIN, (unsigned)domain);
    for (const char *p = name; *p; p++)
        marker(MARK_NAME_CHAR, (u8)*p);
    marker(MARK_DEFINE_END, (unsigned)asid);
}
