// Constant-time instrumentation for ML-KEM (and the other KEMs of kex).
//
// ct_poison() marks secret bytes as "undefined" for valgrind memcheck; any
// branch, memory index or system call that depends on them is then reported
// (the technique of Langley's ctgrind, as used by BoringSSL's
// CONSTTIME_SECRET). ct_declassify() marks a value that is public by design
// (the matrix seed rho, a ciphertext, a public key) as defined again, so
// rejection sampling on public data is not reported.
//
// Outside valgrind the client requests cost a handful of instructions and do
// nothing; without <valgrind/memcheck.h> they compile to nothing.
#pragma once

#include <cstddef>

#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define LAYERSEC_HAVE_VALGRIND 1
#endif
#endif

namespace layersec::crypto {

// True when the process runs under valgrind (and the header was available).
inline bool running_on_valgrind() {
#ifdef LAYERSEC_HAVE_VALGRIND
  return RUNNING_ON_VALGRIND != 0;
#else
  return false;
#endif
}

inline void ct_poison([[maybe_unused]] const void* p, [[maybe_unused]] std::size_t n) {
#ifdef LAYERSEC_HAVE_VALGRIND
  (void)VALGRIND_MAKE_MEM_UNDEFINED(p, n);
#endif
}

inline void ct_declassify([[maybe_unused]] const void* p, [[maybe_unused]] std::size_t n) {
#ifdef LAYERSEC_HAVE_VALGRIND
  (void)VALGRIND_MAKE_MEM_DEFINED(p, n);
#endif
}

}  // namespace layersec::crypto
