// Linked into every fuzz target (both drivers). Targets that build a whole
// node per input (a runtime, a MACsec link, a transport) allocate and free
// the same few hundred KiB each time; with glibc's defaults that memory goes
// back to the kernel after every input (the heap top is trimmed, blocks of
// 128 KiB and more are mmapped) and is faulted in again on the next one,
// which cost those targets a quarter of their time in page faults. Keeping
// it in the process changes nothing a target checks. Under ASan the calls
// are no-ops (its allocator does not read these settings).
#include <malloc.h>

namespace {

struct HeapTuning {
  HeapTuning() {
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
  }
};

const HeapTuning heap_tuning;

}  // namespace
