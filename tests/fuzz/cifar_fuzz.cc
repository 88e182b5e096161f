// cifar_fuzz.cc: libFuzzer target for the CIFAR-10 binary reader
// (train/data/cifar.h).
//
// Input: one control byte, two bytes (little-endian) giving the length of
// the first file, the first file, then the rest; control bit 0 reads the
// rest as a second file after the first (else it is ignored). Each file is
// plain or gzip (the reader detects the gzip magic) and lives in a memfd
// (tests/fuzz/fuzz_util.h). Every load must return a status with a message
// (never crash); files that load must give a valid Dataset of 32 × 32 × 3
// rows in [0, 1] with labels 0..9, and the same rows when streamed in blocks
// of 3.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_util.h"
#include "train/data/cifar.h"
#include "train/data/dataset.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using invariant::fuzz::Check;
  if (size < 3) return 0;
  const uint8_t control = data[0];
  const size_t rest = size - 3;
  const size_t first_length = std::min<size_t>(rest, data[1] | (size_t{data[2]} << 8));
  const char* bytes = reinterpret_cast<const char*>(data + 3);
  std::vector<std::string> paths = {
      invariant::fuzz::WriteMemFile(0, std::string(bytes, first_length))};
  if (control & 1) {
    paths.push_back(
        invariant::fuzz::WriteMemFile(1, std::string(bytes + first_length, rest - first_length)));
  }
  const auto loaded = invariant::train::LoadCifar(paths, "fuzz");
  if (!loaded.ok()) {
    Check(!loaded.status().message().empty(), "a refused file has an error message");
    return 0;
  }
  Check(invariant::train::ValidateDataset(*loaded).ok(), "loaded CIFAR files are a valid Dataset");
  Check(loaded->rows() > 0 && loaded->has_labels(), "every file holds a labelled record");
  Check(loaded->dim() == invariant::train::kCifarImageBytes, "rows are 32 x 32 x 3");
  Check(loaded->num_classes() == 10, "ten classes");
  const float* x = loaded->x.data();
  for (int64_t i = 0; i < loaded->rows() * loaded->dim(); ++i) {
    Check(x[i] >= 0.0f && x[i] <= 1.0f, "byte pixels lie in [0, 1]");
  }
  auto source = invariant::train::OpenCifarSource(paths, "fuzz");
  Check(source.ok(), "files that load open as a source");
  const auto blocks = invariant::train::ReadAllRows(**source, 3);
  Check(blocks.ok(), "files that load stream");
  Check(blocks->labels == loaded->labels, "the same labels in blocks of 3");
  Check(std::equal(x, x + loaded->rows() * loaded->dim(), blocks->x.data()),
        "the same rows in blocks of 3");
  return 0;
}
