/*
 * fuzz_import_envoy.c - libFuzzer target: the envoy import parser (src/io/import.h)
 * with any bytes.  A parse must either give a result whose nodes are well
 * formed (names valid, within the limits; its JSON encodable) or a refusal
 * with a message and a line inside the text; never a crash, a leak or
 * undefined behaviour.  The input's first byte chooses whether a section
 * name is asked for.  Built by `make fuzz` (clang, ASan, UBSan).
 */
#include "fuzz_import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_import_one(IMPORT_ENVOY, data, size);
}
