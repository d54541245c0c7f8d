// What Swift's Glibc module leaves out: mallopt and its parameters, and naming a thread.
#include <malloc.h>
#include <sys/prctl.h>

// prctl is variadic, which Swift cannot call; PR_SET_NAME names the calling thread.
// The kernel keeps the first 15 bytes.
static inline int strata_name_this_thread(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0UL, 0UL, 0UL);
}
