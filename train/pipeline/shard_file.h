// shard_file.h: the partial sums one shard of a sharded training run writes.
//
// File layout (little-endian): 8 bytes magic "INVSHRD1", uint64 config
// fingerprint, int32 shard, int32 num_shards, uint64 count of doubles, then
// GramAccumulator::Serialize() as doubles. Written to a temporary file and
// renamed, so a reader never sees half a shard.
#ifndef INVARIANT_TRAIN_PIPELINE_SHARD_FILE_H_
#define INVARIANT_TRAIN_PIPELINE_SHARD_FILE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "core/rls/gram_accumulator.h"

namespace invariant::train {

// FNV-1a 64 of the config text: shards of different configs never merge.
uint64_t ConfigFingerprint(const std::string& config_text);

// DIR/shard-<shard>-of-<num_shards>.gram
std::string ShardFilePath(const std::string& dir, int shard, int num_shards);

// Creates `dir` when missing.
absl::Status WriteShardFile(const std::string& path, uint64_t fingerprint, int shard,
                            int num_shards, const GramAccumulator& sums);

// Errors: NOT_FOUND (missing file), DATA_LOSS (bad magic, truncated,
// corrupt sums), FAILED_PRECONDITION (another config or shard numbering),
// each naming the path.
absl::StatusOr<GramAccumulator> ReadShardFile(const std::string& path, uint64_t fingerprint,
                                              int shard, int num_shards);

}  // namespace invariant::train

#endif  // INVARIANT_TRAIN_PIPELINE_SHARD_FILE_H_
