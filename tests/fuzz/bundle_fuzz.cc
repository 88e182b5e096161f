// bundle_fuzz.cc: libFuzzer target for Bundle::Open on arbitrary file bytes.
//
// Input: one control byte, then the file. Control bit 0 re-seals the header
// and manifest CRCs (when the claimed manifest length fits), so mutations get
// past the checksums into the manifest parser and the tensor-table checks;
// bit 1 skips tensor checksums. Every open must return a status (never crash,
// never read outside the file), and every tensor of an accepted bundle must be
// readable through its accessor. The file lives in a memfd, not on disk
// (tests/fuzz/fuzz_util.h).
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/bundle/bundle.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t control = data[0];
  std::string file(reinterpret_cast<const char*>(data + 1), size - 1);
  if (control & 1) invariant::fuzz::ResealBundle(file);
  const std::string path = invariant::fuzz::WriteMemFile(0, file);
  invariant::OpenOptions options;
  options.verify_tensor_checksums = (control & 2) == 0;
  const auto bundle = invariant::Bundle::Open(path, options);
  if (!bundle.ok()) {
    if (bundle.status().message().empty()) std::abort();
    return 0;
  }
  volatile double sink = 0;
  for (const invariant::v1::TensorEntry& entry : (*bundle)->manifest().tensors()) {
    switch (entry.dtype()) {
      case invariant::v1::DTYPE_FLOAT32: {
        auto m = (*bundle)->Float(entry.name());
        if (!m.ok()) std::abort();
        if (!m->empty()) sink = sink + m->data()[m->size() - 1] + m->data()[0];
        break;
      }
      case invariant::v1::DTYPE_FLOAT64: {
        auto m = (*bundle)->Double(entry.name());
        if (!m.ok()) std::abort();
        if (!m->empty()) sink = sink + m->data()[m->size() - 1] + m->data()[0];
        break;
      }
      case invariant::v1::DTYPE_INT32: {
        auto m = (*bundle)->Int32(entry.name());
        if (!m.ok()) std::abort();
        if (!m->empty()) sink = sink + m->data()[m->size() - 1] + m->data()[0];
        break;
      }
      default:
        std::abort();  // Open must have rejected an unknown dtype
    }
  }
  return 0;
}
