// What Swift's Glibc module leaves out: mallopt and its parameters, malloc_trim, naming a thread, setting
// a thread's own priority, and asking for a signal when the parent ends.
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

// prctl is variadic, which Swift cannot call; PR_SET_NAME names the calling thread.
// The kernel keeps the first 15 bytes.
static inline int strata_name_this_thread(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0UL, 0UL, 0UL);
}

// Linux keeps a nice value per thread: PRIO_PROCESS with a thread id reads and sets that
// thread's alone (POSIX would say the whole process). `by` is added to the thread's nice
// value (at most 19): lowering one's own priority needs no privilege, and a process started
// with `nice` keeps its threads in the same order.
static inline int strata_lower_this_thread_priority(int by) {
    id_t thread = (id_t)syscall(SYS_gettid);
    errno = 0;
    int nice = getpriority(PRIO_PROCESS, thread);
    if (nice == -1 && errno != 0) return -1;
    return setpriority(PRIO_PROCESS, thread, nice + by > 19 ? 19 : nice + by);
}

// PR_SET_PDEATHSIG: the kernel sends `signal` to the calling process when the thread that
// started it ends, however it ends (SIGKILL included).
static inline int strata_set_parent_death_signal(int signal) {
    return prctl(PR_SET_PDEATHSIG, (unsigned long)signal, 0UL, 0UL, 0UL);
}

// Whether `signal`'s action is to ignore it (SIG_IGN, a macro Swift cannot import), as `nohup`
// leaves SIGHUP for the command it starts.
static inline int strata_signal_is_ignored(int signal) {
    struct sigaction action;
    return sigaction(signal, NULL, &action) == 0 && action.sa_handler == SIG_IGN;
}
