#ifndef PORTALAUTH_CSYSTEM_SHIM_H
#define PORTALAUTH_CSYSTEM_SHIM_H
#include <sys/prctl.h>
#include <spawn.h>

// prctl is variadic, which Swift cannot call; typed wrappers, prefixed pa_.

/// Sets whether the process may be dumped (core files) or attached to by same-user processes (PR_SET_DUMPABLE).
static inline int pa_set_dumpable(int dumpable) { return prctl(PR_SET_DUMPABLE, (unsigned long)dumpable, 0UL, 0UL, 0UL); }
/// Whether the process may be dumped: 1 yes, 0 no, -1 on error (PR_GET_DUMPABLE).
static inline int pa_get_dumpable(void) { return prctl(PR_GET_DUMPABLE, 0UL, 0UL, 0UL, 0UL); }

// glibc declares these only under _GNU_SOURCE, which Swift's Glibc module is not built with: declared here as glibc
// (2.29 and 2.34) defines them, prefixed wrappers for Swift.
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);
extern int posix_spawn_file_actions_addchdir_np(posix_spawn_file_actions_t *actions, const char *path);

/// Closes every descriptor from `from` up in the child (after the dup2 actions before it).
static inline int pa_spawn_addclosefrom(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}
/// Changes the child's working directory before it runs the program.
static inline int pa_spawn_addchdir(posix_spawn_file_actions_t *actions, const char *path) {
    return posix_spawn_file_actions_addchdir_np(actions, path);
}
#endif
