#include <stddef.h>
#include <stdint.h>

// libFuzzer's driver, from the toolchain's libclang_rt.fuzzer (linked by -sanitize=fuzzer).
// Only the fuzzing build (scripts/fuzz) calls it, so the plain build never needs the symbol.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
