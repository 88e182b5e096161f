#!/usr/bin/env bash
# split_idx.sh MNIST_DIR OUT FIRST COUNT NAME: images FIRST .. FIRST+COUNT−1 of
# MNIST_DIR/train-{images-idx3,labels-idx1}-ubyte.gz written as the plain IDX
# files OUT/NAME-images.idx and OUT/NAME-labels.idx (new headers, same bytes).
set -eu
src=$1 out=$2 first=$3 count=$4 name=$5
be32() { # a 32-bit big-endian integer
  local v=$1
  printf "$(printf '\\x%02x\\x%02x\\x%02x\\x%02x' $(((v >> 24) & 255)) $(((v >> 16) & 255)) \
    $(((v >> 8) & 255)) $((v & 255)))"
}
# gzip may die of SIGPIPE once head has its bytes: not an error here.
{ printf '\x00\x00\x08\x03'; be32 "$count"; be32 28; be32 28
  { gzip -dc "$src/train-images-idx3-ubyte.gz" || true; } | tail -c +$((16 + first * 784 + 1)) |
    head -c $((count * 784)); } >"$out/$name-images.idx"
{ printf '\x00\x00\x08\x01'; be32 "$count"
  { gzip -dc "$src/train-labels-idx1-ubyte.gz" || true; } | tail -c +$((8 + first + 1)) |
    head -c "$count"; } >"$out/$name-labels.idx"
[[ $(stat -c %s "$out/$name-images.idx") -eq $((16 + count * 784)) ]] ||
  { echo "split_idx.sh: $src has fewer than $((first + count)) images" >&2; exit 1; }
