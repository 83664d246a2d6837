/* Marker accesses for the cache model; see marker.h. */
#include "marker.h"

bool markers_on = true;

void marker_define(int asid, int domain, const char *name)
{
    marker(MARK_DEFINE, (unsigned)asid);
    marker(MARK_DOMAIN, (unsigned)domain);
    for (const char *p = name; *p; p++)
        marker(MARK_NAME_CHAR, (u8)*p);
    marker(MARK_DEFINE_END, (unsigned)asid);
}
