"""The request messages of invariant_serve's clients: model specs, rows, clips and images.

Pure functions of their arguments (no channel, no call), shared by Client and
AsyncClient (client.py). Arguments a request cannot carry raise ValueError or
TypeError naming the argument before any call is made.
"""

import os
from typing import List, Tuple, Union

import numpy as np

from invariant_serve._proto.inference import grpc_service_pb2 as oip
from invariant_serve._proto.invariant.v1 import feature_service_pb2 as fs

Version = Union[int, str, None]


def model_spec(model: str, version: Version) -> fs.ModelSpec:
    spec = fs.ModelSpec(name=model)
    if version is None or version == "":
        return spec
    if isinstance(version, (int, np.integer)) or (isinstance(version, str) and version.isdigit()):
        spec.version = int(version)
    else:
        spec.version_label = str(version)
    return spec


def _rows(X) -> Tuple[int, bytes]:
    """(n, little-endian float32 bytes) of an [n, ...] array-like."""
    array = np.asarray(X)
    if array.ndim < 2:
        raise ValueError(f"X: expected an array of shape [n, d] (one row per sample), "
                         f"received shape {array.shape}")
    rows = array.shape[0]
    return rows, np.ascontiguousarray(array, dtype="<f4").tobytes()


_WAV_MAGIC = (b"RIFF", b"RIFX", b"RF64")


def _is_wav(data: bytes) -> bool:
    return len(data) >= 12 and bytes(data[:4]) in _WAV_MAGIC and bytes(data[8:12]) == b"WAVE"


def _samples_clip(samples: np.ndarray, sample_rate: int, what: str) -> fs.AudioClip:
    """One array of mono samples as an AudioClip: int16 as int16_le, floats as float32_le."""
    if samples.ndim != 1:
        hint = (" (several channels: average them, e.g. x.mean(axis=1))"
                if samples.ndim == 2 else "")
        raise ValueError(f"{what}: expected a 1-D array of mono samples, received shape "
                         f"{samples.shape}{hint}")
    if samples.size == 0:
        raise ValueError(f"{what}: no samples")
    kind, size = samples.dtype.kind, samples.dtype.itemsize
    if kind == "i" and size == 2:
        return fs.AudioClip(int16_le=samples.astype("<i2", copy=False).tobytes(),
                            sample_rate=sample_rate)
    if kind == "f" and size in (4, 8):
        floats = samples.astype("<f4", copy=False)
        if not np.isfinite(floats).all():
            raise ValueError(f"{what}: samples must be finite (NaN or infinity at index "
                             f"{int(np.flatnonzero(~np.isfinite(floats))[0])})")
        return fs.AudioClip(float32_le=floats.tobytes(), sample_rate=sample_rate)
    raise TypeError(f"{what}: expected float32, float64 (in [-1, 1]) or int16 samples, "
                    f"received dtype {samples.dtype}")


def _wav_clip(data, what: str) -> fs.AudioClip:
    data = bytes(data)
    if not _is_wav(data):
        raise ValueError(f"{what}: not a WAV file (no RIFF/RIFX/RF64 header with WAVE)")
    return fs.AudioClip(wav=data)


def _one_clip(clip, sample_rate: int, what: str) -> fs.AudioClip:
    if isinstance(clip, fs.AudioClip):
        return clip
    if isinstance(clip, (bytes, bytearray, memoryview)):
        return _wav_clip(clip, what)
    if isinstance(clip, (str, os.PathLike)):
        path = os.fspath(clip)
        with open(path, "rb") as f:
            return _wav_clip(f.read(), f"{what} ({path})")
    if isinstance(clip, np.ndarray):
        return _samples_clip(clip, sample_rate, what)
    raise TypeError(f"{what}: expected a 1-D numpy array of samples, WAV bytes or a path to a "
                    f"WAV file, received {type(clip).__name__}")


def _clips(clips, sample_rate) -> List[fs.AudioClip]:
    """The AudioClips of `clips`: one clip (array, WAV bytes, path) or a sequence of them; a
    2-D array is one clip per row."""
    if sample_rate is None:
        rate = 0  # the server uses the model's rate
    elif isinstance(sample_rate, (int, np.integer)) and not isinstance(sample_rate, bool) \
            and sample_rate > 0:
        rate = int(sample_rate)
    else:
        raise ValueError(f"sample_rate: expected a positive integer (Hz) or None for the "
                         f"model's rate, received {sample_rate!r}")
    if isinstance(clips, np.ndarray) and clips.ndim == 2:
        items = list(clips)
    elif isinstance(clips, (list, tuple)):
        items = list(clips)
    else:
        return [_one_clip(clips, rate, "clips")]
    if not items:
        raise ValueError("clips: expected at least one clip, received none")
    return [_one_clip(c, rate, f"clips[{i}]") for i, c in enumerate(items)]


_JPEG_MAGIC = b"\xff\xd8\xff"
_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _one_image(image, what: str) -> bytes:
    """One encoded image: JPEG or PNG bytes, or the path of such a file (sent as it is)."""
    if isinstance(image, (str, os.PathLike)):
        path = os.fspath(image)
        with open(path, "rb") as f:
            return _one_image(f.read(), f"{what} ({path})")
    if isinstance(image, (bytes, bytearray, memoryview)):
        data = bytes(image)
        if not (data.startswith(_JPEG_MAGIC) or data.startswith(_PNG_MAGIC)):
            raise ValueError(f"{what}: expected a JPEG or PNG file, received {len(data)} bytes "
                             f"starting {data[:8].hex(' ')}")
        return data
    if isinstance(image, np.ndarray):
        raise TypeError(f"{what}: a model of image files takes encoded files (bytes or a path); "
                        "encode the array (e.g. Pillow's Image.fromarray(a).save(buffer, 'PNG')) "
                        "or send rows X to a model of rows")
    raise TypeError(f"{what}: expected JPEG or PNG bytes or a path, received "
                    f"{type(image).__name__}")


def _images(images) -> List[bytes]:
    """The encoded files of `images`: one (bytes or a path) or a sequence of them."""
    if isinstance(images, (list, tuple)):
        if not images:
            raise ValueError("images: expected at least one image, received none")
        return [_one_image(x, f"images[{i}]") for i, x in enumerate(images)]
    return [_one_image(images, "images")]


def _inputs(X, clips, sample_rate, images=None) -> fs.InputBatch:
    """Rows (X), or clips for a model of sound, or images for a model of image files:
    exactly one of them."""
    given = [name for name, v in (("X", X), ("clips", clips), ("images", images))
             if v is not None]
    if len(given) != 1:
        raise ValueError("give exactly one of X (rows), clips= (a model of sound) or images= "
                         "(a model of image files), received "
                         + (" and ".join(given) if given else "none"))
    if images is not None:
        if sample_rate is not None:
            raise ValueError("sample_rate: applies to clips=, not to images=")
        files = _images(images)
        return fs.InputBatch(num_rows=len(files), images=files)
    if clips is not None:
        batch = _clips(clips, sample_rate)
        return fs.InputBatch(num_rows=len(batch), clips=batch)
    if sample_rate is not None:
        raise ValueError("sample_rate: applies to clips=, not to rows X")
    rows, raw = _rows(X)
    return fs.InputBatch(num_rows=rows, raw_values=raw)


def featurize_request(model: str, X, version: Version, clips=None,
                      sample_rate=None, images=None) -> fs.FeaturizeRequest:
    return fs.FeaturizeRequest(model=model_spec(model, version),
                               inputs=_inputs(X, clips, sample_rate, images))


def predict_request(model: str, X, version: Version, clips=None,
                    sample_rate=None, images=None) -> fs.PredictRequest:
    return fs.PredictRequest(model=model_spec(model, version),
                             inputs=_inputs(X, clips, sample_rate, images))


def statistics_request(name: str, version) -> "oip.ModelStatisticsRequest":
    return oip.ModelStatisticsRequest(name=name, version="" if version is None else str(version))
