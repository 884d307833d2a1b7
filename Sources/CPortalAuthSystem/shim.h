#ifndef PORTALAUTH_CSYSTEM_SHIM_H
#define PORTALAUTH_CSYSTEM_SHIM_H
#include <sys/prctl.h>
#include <spawn.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

// prctl is variadic, which Swift cannot call; typed wrappers, prefixed pa_.

/// Sets whether the process may be dumped (core files) or attached to by same-user processes (PR_SET_DUMPABLE).
static inline int pa_set_dumpable(int dumpable) { return prctl(PR_SET_DUMPABLE, (unsigned long)dumpable, 0UL, 0UL, 0UL); }
/// Whether the process may be dumped: 1 yes, 0 no, -1 on error (PR_GET_DUMPABLE).
static inline int pa_get_dumpable(void) { return prctl(PR_GET_DUMPABLE, 0UL, 0UL, 0UL, 0UL); }
/// Names the calling thread for the kernel (ps -L, /proc/self/task/N/comm; 15 bytes kept). Foundation's Thread.name
/// does not reach the kernel.
static inline int pa_set_thread_name(const char *name) { return prctl(PR_SET_NAME, (unsigned long)name, 0UL, 0UL, 0UL); }

/// The scheduling attributes of a thread, as sched_setattr(2) and sched_getattr(2) take them (SCHED_ATTR_SIZE_VER0).
struct pa_sched_attr {
    unsigned int size;
    unsigned int policy;
    unsigned long long flags;
    int nice;
    unsigned int priority;
    unsigned long long runtime;
    unsigned long long deadline;
    unsigned long long period;
};

/// The calling thread's scheduling attributes (sched_getattr(2)); for a thread under SCHED_OTHER, `runtime` is its
/// slice in nanoseconds. 0, or -1 with errno.
static inline int pa_get_sched_attr(struct pa_sched_attr *attr, unsigned int size) {
    return (int)syscall(SYS_sched_getattr, 0, attr, size, 0U);
}

/// Asks the scheduler for a time slice of `nanoseconds` for the calling thread, keeping its policy, nice value and
/// reset-on-fork flag: with Linux's EEVDF scheduler (6.12 and later) a waking thread whose slice is shorter than the
/// running one's takes the processor at once, instead of waiting for the end of that slice (the custom slice of
/// sched_setattr(2), which an unprivileged thread may set; it changes no share of the processor). Only for a thread
/// under SCHED_OTHER: 0 when set; -1 with errno otherwise (EPERM for another policy; older kernels may refuse or
/// ignore it).
static inline int pa_request_time_slice(unsigned long long nanoseconds) {
    struct pa_sched_attr attr;
    memset(&attr, 0, sizeof attr);
    if (pa_get_sched_attr(&attr, (unsigned int)sizeof attr) != 0) return -1;
    if (attr.policy != 0) {  // SCHED_OTHER
        errno = EPERM;
        return -1;
    }
    attr.size = sizeof attr;
    attr.flags &= 1ULL;  // SCHED_FLAG_RESET_ON_FORK, as it was
    attr.runtime = nanoseconds;
    return (int)syscall(SYS_sched_setattr, 0, &attr, 0U);
}

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

// Signals forwarded to a pipe (`SignalForwarder` in the library): the handler only writes the signal's number,
// which is async-signal-safe; a thread reading the pipe does the rest. The state lives in function-local statics
// (Swift does not emit a header's static variables); only the PortalAuth module calls these, so there is one copy.

extern int pipe2(int pipefd[2], int flags);  // glibc, declared under _GNU_SOURCE only
/// A pipe whose ends close on exec (and, with O_NONBLOCK in `flags`, never block).
static inline int pa_pipe2(int ends[2], int flags) { return pipe2(ends, flags); }

/// The pipe's write end, or -1 before the first forwarding.
static inline volatile int *pa_signal_pipe(void) {
    static volatile int descriptor = -1;
    return &descriptor;
}

/// The action that forwarding or ignoring replaced for `number`, for pa_signal_restore.
static inline struct sigaction *pa_signal_saved(int number) {
    static struct sigaction saved[NSIG];
    return &saved[number];
}

static void pa_signal_forwarder(int number) {
    int saved = errno;
    unsigned char byte = (unsigned char)number;
    int descriptor = *pa_signal_pipe();
    if (descriptor >= 0) {
        ssize_t written = write(descriptor, &byte, 1);
        (void)written;  // a full pipe already holds signals enough to cancel the work
    }
    errno = saved;
}

/// Sets the pipe's write end (non-blocking; once, before the first pa_signal_forward).
static inline void pa_signal_set_pipe(int descriptor) { *pa_signal_pipe() = descriptor; }

/// Saves the action of `number` and installs the forwarder (SA_RESTART), unless the signal is ignored (a process
/// started under nohup): 1 forwarded, 0 left ignored, -1 error (errno).
static inline int pa_signal_forward(int number) {
    if (number <= 0 || number >= NSIG) { errno = EINVAL; return -1; }
    struct sigaction *saved = pa_signal_saved(number);
    if (sigaction(number, NULL, saved) != 0) return -1;
    if (!(saved->sa_flags & SA_SIGINFO) && saved->sa_handler == SIG_IGN) return 0;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = pa_signal_forwarder;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    return sigaction(number, &action, NULL) == 0 ? 1 : -1;
}

/// Saves the action of `number` and ignores the signal: 0, or -1 on error (errno).
static inline int pa_signal_ignore(int number) {
    if (number <= 0 || number >= NSIG) { errno = EINVAL; return -1; }
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = SIG_IGN;
    sigemptyset(&action.sa_mask);
    return sigaction(number, &action, pa_signal_saved(number));
}

/// Puts back the action saved for `number` by pa_signal_forward or pa_signal_ignore.
static inline int pa_signal_restore(int number) {
    if (number <= 0 || number >= NSIG) { errno = EINVAL; return -1; }
    return sigaction(number, pa_signal_saved(number), NULL);
}
#endif
