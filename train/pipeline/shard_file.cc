#include "train/pipeline/shard_file.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "absl/strings/str_cat.h"

namespace invariant::train {
namespace {

constexpr char kMagic[8] = {'I', 'N', 'V', 'S', 'H', 'R', 'D', '1'};

struct Header {
  char magic[8];
  uint64_t fingerprint;
  int32_t shard;
  int32_t num_shards;
  uint64_t num_doubles;
};

}  // namespace

uint64_t ConfigFingerprint(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string ShardFilePath(const std::string& dir, int shard, int num_shards) {
  return (std::filesystem::path(dir) / absl::StrCat("shard-", shard, "-of-", num_shards, ".gram"))
      .string();
}

absl::Status WriteShardFile(const std::string& path, uint64_t fingerprint, int shard,
                            int num_shards, const GramAccumulator& sums) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  const std::vector<double> data = sums.Serialize();
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof(kMagic));
  h.fingerprint = fingerprint;
  h.shard = shard;
  h.num_shards = num_shards;
  h.num_doubles = data.size();
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(&h), sizeof(h));
    out.write(reinterpret_cast<const char*>(data.data()),
              static_cast<std::streamsize>(data.size() * sizeof(double)));
    out.close();
    if (!out) return absl::InternalError(absl::StrCat(tmp, ": write failed"));
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) return absl::InternalError(absl::StrCat("rename to ", path, ": ", ec.message()));
  return absl::OkStatus();
}

absl::StatusOr<GramAccumulator> ReadShardFile(const std::string& path, uint64_t fingerprint,
                                              int shard, int num_shards) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": shard file not found"));
  Header h{};
  in.read(reinterpret_cast<char*>(&h), sizeof(h));
  if (!in || std::memcmp(h.magic, kMagic, sizeof(kMagic)) != 0) {
    return absl::DataLossError(absl::StrCat(path, ": not a shard file (bad magic)"));
  }
  if (h.fingerprint != fingerprint) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": written from a different training config"));
  }
  if (h.shard != shard || h.num_shards != num_shards) {
    return absl::FailedPreconditionError(absl::StrCat(path, ": holds shard ", h.shard, " of ",
                                                      h.num_shards, ", expected ", shard, " of ",
                                                      num_shards));
  }
  if (h.num_doubles > (uint64_t{1} << 34)) {
    return absl::DataLossError(absl::StrCat(path, ": implausible length ", h.num_doubles));
  }
  std::vector<double> data(h.num_doubles);
  in.read(reinterpret_cast<char*>(data.data()),
          static_cast<std::streamsize>(data.size() * sizeof(double)));
  if (!in) return absl::DataLossError(absl::StrCat(path, ": truncated"));
  absl::StatusOr<GramAccumulator> acc = GramAccumulator::Deserialize(data);
  if (!acc.ok()) return absl::DataLossError(absl::StrCat(path, ": ", acc.status().message()));
  return acc;
}

}  // namespace invariant::train
