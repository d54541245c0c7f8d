// Binds sodium.h (Debian: libsodium-dev) for Swift.
#include <sodium.h>
