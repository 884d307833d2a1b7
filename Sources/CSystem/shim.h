#ifndef PORTALAUTH_CSYSTEM_SHIM_H
#define PORTALAUTH_CSYSTEM_SHIM_H
#include <sys/prctl.h>

// prctl is variadic, which Swift cannot call; typed wrappers, prefixed pa_.

/// Sets whether the process may be dumped (core files) or attached to by same-user processes (PR_SET_DUMPABLE).
static inline int pa_set_dumpable(int dumpable) { return prctl(PR_SET_DUMPABLE, (unsigned long)dumpable, 0UL, 0UL, 0UL); }
/// Whether the process may be dumped: 1 yes, 0 no, -1 on error (PR_GET_DUMPABLE).
static inline int pa_get_dumpable(void) { return prctl(PR_GET_DUMPABLE, 0UL, 0UL, 0UL, 0UL); }
#endif
