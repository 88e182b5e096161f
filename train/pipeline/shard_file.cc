#include "train/pipeline/shard_file.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

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

int64_t ShardFileBytes(int64_t feature_dim, int64_t target_dim) {
  return static_cast<int64_t>(sizeof(Header)) +
         GramAccumulator::SerializedSize(feature_dim, target_dim) *
             static_cast<int64_t>(sizeof(double));
}

absl::Status WriteShardFile(const std::string& path, uint64_t fingerprint, int shard,
                            int num_shards, const GramAccumulator& sums) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof(kMagic));
  h.fingerprint = fingerprint;
  h.shard = shard;
  h.num_shards = num_shards;
  h.num_doubles =
      static_cast<uint64_t>(GramAccumulator::SerializedSize(sums.feature_dim(), sums.target_dim()));
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(&h), sizeof(h));
    sums.SerializeTo([&out](const double* values, int64_t n) {
      out.write(reinterpret_cast<const char*>(values),
                static_cast<std::streamsize>(n * static_cast<int64_t>(sizeof(double))));
      return static_cast<bool>(out);
    });
    out.close();
    if (!out) {
      std::filesystem::remove(tmp, ec);
      return absl::InternalError(absl::StrCat(tmp, ": write failed: ", std::strerror(errno), " (",
                                              ShardFileBytes(sums.feature_dim(), sums.target_dim()),
                                              " bytes needed)"));
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) return absl::InternalError(absl::StrCat("rename to ", path, ": ", ec.message()));
  return absl::OkStatus();
}

absl::Status MergeShardFile(const std::string& path, uint64_t fingerprint, int shard,
                            int num_shards, GramAccumulator* total) {
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
  const auto expected = static_cast<uint64_t>(
      GramAccumulator::SerializedSize(total->feature_dim(), total->target_dim()));
  if (h.num_doubles != expected) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": holds ", h.num_doubles, " sums, expected ", expected, " for ",
                     total->feature_dim(), " features and ", total->target_dim(), " targets"));
  }
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  const auto bytes =
      static_cast<uintmax_t>(ShardFileBytes(total->feature_dim(), total->target_dim()));
  if (ec || size != bytes) {
    return absl::DataLossError(absl::StrCat(path, ": ", ec ? 0 : size,
                                            " bytes, its header declares ", bytes,
                                            " (truncated or padded)"));
  }
  const absl::Status merged = total->MergeSerialized([&in](double* values, int64_t n) {
    in.read(reinterpret_cast<char*>(values),
            static_cast<std::streamsize>(n * static_cast<int64_t>(sizeof(double))));
    return static_cast<bool>(in);
  });
  if (merged.ok()) return merged;
  if (merged.code() == absl::StatusCode::kInvalidArgument) {
    return absl::FailedPreconditionError(absl::StrCat(path, ": ", merged.message()));
  }
  return absl::DataLossError(absl::StrCat(path, ": ", merged.message()));
}

absl::Status WaitForShardFiles(const std::string& dir, int num_shards, int64_t timeout_seconds) {
  const auto start = std::chrono::steady_clock::now();
  while (true) {
    std::vector<int> missing;
    for (int i = 0; i < num_shards; ++i) {
      std::error_code ec;
      if (!std::filesystem::exists(ShardFilePath(dir, i, num_shards), ec)) missing.push_back(i);
    }
    if (missing.empty()) return absl::OkStatus();
    const auto waited =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - start)
            .count();
    if (waited >= timeout_seconds) {
      return absl::NotFoundError(absl::StrCat(
          dir, ": shard files of shards ", absl::StrJoin(missing, ", "), " of ", num_shards,
          " still missing after ", waited, " s (--shard_wait_seconds=", timeout_seconds, "), e.g. ",
          ShardFilePath(dir, missing[0], num_shards)));
    }
    std::this_thread::sleep_for(std::chrono::seconds(kShardPollSeconds));
  }
}

void RemoveShardFiles(const std::string& dir, int num_shards) {
  std::error_code ec;
  for (int i = 0; i < num_shards; ++i)
    std::filesystem::remove(ShardFilePath(dir, i, num_shards), ec);
  if (std::filesystem::is_empty(dir, ec) && !ec) std::filesystem::remove(dir, ec);
}

}  // namespace invariant::train
