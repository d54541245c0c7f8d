// mallopt and its parameters, which Swift's Glibc module leaves out.
#include <malloc.h>
