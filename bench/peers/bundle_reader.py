"""Reads an invariant bundle (core/bundle/bundle.h) with numpy: the manifest and its tensors.

Layout (format version 1, little-endian): a 64-byte header
  [0, 8) magic b"INVBNDL\\0", [8, 12) format_version, [12, 16) CRC-32C of the
  manifest, [16, 24) manifest length M, [24, 32) file length, [60, 64) header CRC;
then the serialized invariant.v1.Manifest at [64, 64 + M), then each tensor at
its TensorEntry.offset (64-byte aligned), row-major. This reader checks the
magic, version, lengths and tensor bounds (not the CRCs: the server does that).
"""

import struct

import numpy as np

MAGIC = b"INVBNDL\0"
FORMAT_VERSION = 1
# invariant.v1.DType -> numpy dtype.
DTYPES = {1: np.float32, 2: np.float64, 3: np.int32}


class BundleError(ValueError):
    pass


def read_bundle(path, manifest_cls):
    """(manifest, {name: ndarray}) of the bundle at `path`; arrays are read-only views of one read."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 64 or data[:8] != MAGIC:
        raise BundleError(f"{path}: not a bundle (bad magic)")
    version, _crc, manifest_len, file_len = struct.unpack_from("<IIQQ", data, 8)
    if version != FORMAT_VERSION:
        raise BundleError(f"{path}: format version {version}, expected {FORMAT_VERSION}")
    if file_len != len(data) or 64 + manifest_len > len(data):
        raise BundleError(f"{path}: truncated ({len(data)} bytes, header says {file_len})")
    manifest = manifest_cls()
    manifest.ParseFromString(data[64 : 64 + manifest_len])
    tensors = {}
    for entry in manifest.tensors:
        dtype = DTYPES.get(entry.dtype)
        if dtype is None:
            raise BundleError(f"{path}: tensor {entry.name}: unsupported dtype {entry.dtype}")
        count = int(np.prod(entry.shape)) if len(entry.shape) else 1
        if entry.offset + entry.size_bytes > len(data) or count * np.dtype(dtype).itemsize != entry.size_bytes:
            raise BundleError(f"{path}: tensor {entry.name}: bad offset or size")
        array = np.frombuffer(data, dtype=dtype, count=count, offset=entry.offset)
        tensors[entry.name] = array.reshape(tuple(entry.shape))
    return manifest, tensors
