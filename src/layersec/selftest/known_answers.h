// The primitives of `layersec selftest`: every cryptographic primitive the
// product uses, each with its known-answer checks over the published vectors
// (the decoders beside this file), the source of those vectors, and one
// operation timed for throughput.
//
// A check function counts each vector in the Tally under the vector's name
// and may throw VectorFileError (missing or malformed file), which the
// runner (selftest.h) records as an error of that primitive alone.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "layersec/selftest/vector_file.h"

namespace layersec::selftest {

// An operation to time. `prepare` builds its contexts once and returns the
// operation (true on success), or an empty function if a context cannot be
// built.
struct TimedOperation {
  std::string what;       // "MAC over 1500 B"
  std::size_t bytes = 0;  // bytes per operation; throughput is shown from 64 B
  std::function<std::function<bool()>()> prepare;
};

struct Primitive {
  std::string name;    // "AES-CMAC-128"
  std::string source;  // where its vectors come from, e.g. "RFC 4231 §4.2-4.8"
  std::function<void(const VectorDirs&, Tally&)> check;
  TimedOperation timed;
};

// Every primitive, in report order: MACs, AEADs and KDFs, then KEMs and DH,
// then signatures.
std::vector<Primitive> all_primitives();

// The parts of all_primitives(), by file.
std::vector<Primitive> mac_primitives();        // checks_mac.cc
std::vector<Primitive> aead_kdf_primitives();   // checks_aead_kdf.cc
std::vector<Primitive> kem_primitives();        // checks_kem.cc
std::vector<Primitive> signature_primitives();  // checks_signature.cc

// The 1500-byte message every throughput run uses.
Bytes bench_message();

}  // namespace layersec::selftest
