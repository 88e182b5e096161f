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

// The bytes of a shard file for D features and T targets.
int64_t ShardFileBytes(int64_t feature_dim, int64_t target_dim);

// Creates `dir` when missing. Streams the sums to the file (no copy of them
// is held: the shard's memory is its accumulator's).
absl::Status WriteShardFile(const std::string& path, uint64_t fingerprint, int shard,
                            int num_shards, const GramAccumulator& sums);

// Adds the sums in `path` to `total`, one column at a time (the reduce holds
// one D × D Gram however many shards it merges). The header is checked
// before anything else is read: the config fingerprint, the shard
// numbering, the file's length against the count it declares and that
// count against `total`'s D and T. Errors: NOT_FOUND (missing file),
// DATA_LOSS (bad magic, a length that disagrees, corrupt sums),
// FAILED_PRECONDITION (another config, shard numbering or D and T), each
// naming the path. After a DATA_LOSS past the header `total` is partial and
// must be discarded.
absl::Status MergeShardFile(const std::string& path, uint64_t fingerprint, int shard,
                            int num_shards, GramAccumulator* total);

// Waits until DIR holds the files of all num_shards shards (a shard file
// appears whole, by rename), checking every kShardPollSeconds for up to
// `timeout_seconds` (0: one check). NOT_FOUND naming the shards still
// missing, the first one's path and the time waited.
inline constexpr int kShardPollSeconds = 5;
absl::Status WaitForShardFiles(const std::string& dir, int num_shards, int64_t timeout_seconds);

// Removes the num_shards shard files from DIR, and DIR when it is then
// empty; best effort (what cannot be removed stays).
void RemoveShardFiles(const std::string& dir, int num_shards);

}  // namespace invariant::train

#endif  // INVARIANT_TRAIN_PIPELINE_SHARD_FILE_H_
