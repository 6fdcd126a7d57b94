// The constant-time check behind `layersec kem ct-check`: ML-KEM keygen,
// encapsulation and decapsulation (valid and implicit rejection) with the
// secrets (d, z, m, the s and z parts of dk) marked undefined for valgrind
// memcheck (crypto/mlkem_ct.h). Run under `valgrind --error-exitcode=1`, any
// secret-dependent branch or memory index fails the process. Outside
// valgrind the marking is a no-op and only the results are checked.
// Pure computation, no I/O; fixed, non-secret inputs.
#pragma once

#include <cstdint>
#include <string_view>

#include "layersec/base/result.h"
#include "layersec/crypto/mlkem.h"

namespace layersec::kex {

// What run_mlkem_ct_check() found: rounds run and wrong results among them
// (decapsulation differing from encapsulation, or the rejection key equal
// to the real one).
struct MlKemCtReport {
  int rounds = 0;
  int wrong_results = 0;
};

// The step whose call returned an error (a bug, not a timing finding).
enum class MlKemCtStep : std::uint8_t { kKeygen, kEncaps, kDecaps, kDecapsRejection };
// "keygen", "encaps", "decaps", "decaps (rejection)".
std::string_view to_string(MlKemCtStep s);

// Runs `rounds` rounds with inputs derived from the round number. Fails
// with the step whose call returned an error.
[[nodiscard]] Result<MlKemCtReport, MlKemCtStep> run_mlkem_ct_check(crypto::MlKemParameterSet set, int rounds);

// Negative control: branches on a byte marked secret on purpose, which
// memcheck must report ("Conditional jump ... depends on uninitialised
// value"). Returns the branch's outcome so it is not optimised away.
int mlkem_ct_leak_control();

}  // namespace layersec::kex
