"""Image files end to end: the image front end against Pillow (the reference it follows to
the byte), and a model of image files served to the Python client, the Open Inference
Protocol over gRPC (BYTES) and REST (binary tensor data) and invariant-client, all giving
the features the model computes in process for the same file, bit for bit.

The images are made here with Pillow (python3-pil); the model "pictures"
(tests/test_models/test_image_model.h: 8 x 8 RGB, crop, bilinear) by the test helper.
"""

import io
import json
import os
import struct
import subprocess
import urllib.request

import numpy as np
import pytest
from PIL import Image, ImageOps

from invariant_serve import Client, InvariantServeError

from conftest import ServerProcess

HELPER = os.environ.get("INVARIANT_TEST_HELPER", "")
FILTERS = {"bilinear": Image.Resampling.BILINEAR, "bicubic": Image.Resampling.BICUBIC}


def noise(mode, size, seed, smooth=0):
    rng = np.random.default_rng(seed)
    bands = {"L": 1, "RGB": 3, "RGBA": 4, "LA": 2}[mode]
    a = rng.integers(0, 256, (size[1], size[0], bands), dtype=np.uint8)
    im = Image.fromarray(a[:, :, 0] if bands == 1 else a, mode)
    for _ in range(smooth):
        im = im.resize((max(1, size[0] // 2), max(1, size[1] // 2)), Image.Resampling.BILINEAR)
        im = im.resize(size, Image.Resampling.BILINEAR)
    return im


def encode(im, fmt, **kw):
    buf = io.BytesIO()
    im.save(buf, fmt, **kw)
    return buf.getvalue()


def prepare(tmp_path, data, h, w, c, fit="crop", filt="bilinear", bg=0):
    """What the front end makes of `data` before scaling: uint8 [h, w, c]."""
    src, out = tmp_path / "in.img", tmp_path / "out.u8"
    src.write_bytes(data)
    subprocess.run([HELPER, "prepare-image", str(src), str(h), str(w), str(c), fit, filt,
                    str(bg), str(out)], check=True)
    return np.frombuffer(out.read_bytes(), np.uint8).reshape(h, w, c)


def pillow(data, h, w, c, fit="crop", filt="bilinear", bg=0):
    """Pillow's answer: open, exif_transpose, RGB or L, then ImageOps.fit / pad / resize."""
    im = ImageOps.exif_transpose(Image.open(io.BytesIO(data)))
    im = im.convert("RGB" if c == 3 else "L")
    method = FILTERS[filt]
    if fit == "crop":
        im = ImageOps.fit(im, (w, h), method)
    elif fit == "pad":
        im = ImageOps.pad(im, (w, h), method, color=(bg,) * 3 if c == 3 else bg)
    else:
        im = im.resize((w, h), method)
    a = np.asarray(im, np.uint8)
    return a.reshape(h, w, c)


@pytest.mark.parametrize("size", [(37, 53), (200, 120), (16, 16), (33, 7)])
@pytest.mark.parametrize("fit", ["crop", "pad", "stretch"])
@pytest.mark.parametrize("filt", ["bilinear", "bicubic"])
def test_resampling_equals_pillow_to_the_byte(tmp_path, size, fit, filt):
    data = encode(noise("RGB", size, sum(size), smooth=1), "PNG")
    for h, w in [(32, 32), (24, 40), (8, 8)]:
        ours = prepare(tmp_path, data, h, w, 3, fit, filt, bg=17)
        np.testing.assert_array_equal(ours, pillow(data, h, w, 3, fit, filt, bg=17),
                                      err_msg=f"{size} -> {w}x{h} {fit} {filt}")


def test_grey_from_colour_equals_pillows_luma(tmp_path):
    data = encode(noise("RGB", (40, 30), 3), "PNG")
    np.testing.assert_array_equal(prepare(tmp_path, data, 30, 40, 1),
                                  pillow(data, 30, 40, 1))


@pytest.mark.parametrize("kw", [{}, {"progressive": True}, {"subsampling": 2}])
def test_jpeg_decoding_equals_pillows(tmp_path, kw):
    data = encode(noise("RGB", (48, 40), 5, smooth=1), "JPEG", quality=85, **kw)
    np.testing.assert_array_equal(prepare(tmp_path, data, 40, 48, 3, fit="stretch"),
                                  np.asarray(Image.open(io.BytesIO(data)).convert("RGB")))


@pytest.mark.parametrize("orientation", range(1, 9))
def test_exif_orientation_equals_exif_transpose(tmp_path, orientation):
    exif = Image.Exif()
    exif[0x0112] = orientation
    data = encode(noise("RGB", (24, 16), orientation, smooth=1), "JPEG", exif=exif.tobytes())
    upright = ImageOps.exif_transpose(Image.open(io.BytesIO(data)))
    w, h = upright.size
    np.testing.assert_array_equal(prepare(tmp_path, data, h, w, 3, fit="stretch"),
                                  np.asarray(upright.convert("RGB")))


def test_alpha_is_composited_on_the_background_within_one_level(tmp_path):
    im = noise("RGBA", (20, 12), 9)
    data = encode(im, "PNG")
    ours = prepare(tmp_path, data, 12, 20, 3, fit="stretch", bg=255)
    white = Image.new("RGBA", im.size, (255, 255, 255, 255))
    theirs = np.asarray(Image.alpha_composite(white, im).convert("RGB"), np.int16)
    assert np.abs(ours.astype(np.int16) - theirs).max() <= 1


@pytest.mark.parametrize("mode,kw", [("L", {}), ("LA", {}), ("P", {"transparency": 0}),
                                     ("I;16", {})])
def test_other_png_layouts_decode_as_pillow_reads_them(tmp_path, mode, kw):
    base = noise("RGB", (10, 6), 4)
    im = {"L": lambda: base.convert("L"), "LA": lambda: base.convert("LA"),
          "P": lambda: base.quantize(colors=8),
          "I;16": lambda: Image.fromarray((np.asarray(base.convert("L"), np.uint16) * 257))}[mode]()
    data = encode(im, "PNG", **kw)
    ours = prepare(tmp_path, data, 6, 10, 3, fit="stretch", bg=0)
    rgba = Image.open(io.BytesIO(data))
    if mode == "I;16":  # 16-bit samples to 8 bits: the high byte (b * 257 >> 8 = b)
        theirs = np.repeat(np.asarray(base.convert("L"))[:, :, None], 3, axis=2)
    else:
        black = Image.new("RGBA", rgba.size, (0, 0, 0, 255))
        theirs = np.asarray(Image.alpha_composite(black, rgba.convert("RGBA")).convert("RGB"))
    assert np.abs(ours.astype(np.int16) - theirs.astype(np.int16)).max() <= 1


def test_a_cmyk_jpeg_is_refused_by_name(tmp_path):
    src = tmp_path / "print.jpg"
    src.write_bytes(encode(noise("RGB", (8, 8), 1).convert("CMYK"), "JPEG"))
    r = subprocess.run([HELPER, "prepare-image", str(src), "8", "8", "3", "crop", "bilinear",
                        "0", str(tmp_path / "o")], capture_output=True, text=True)
    assert r.returncode == 1
    assert "a CMYK JPEG (print colour)" in r.stderr


# --- served -----------------------------------------------------------------


@pytest.fixture(scope="module")
def image_models(tmp_path_factory):
    root = tmp_path_factory.mktemp("image_models")
    subprocess.run([HELPER, "write-image-model", str(root)], check=True)
    return root


@pytest.fixture(scope="module")
def image_server(image_models, tmp_path_factory):
    process = ServerProcess(image_models, tmp_path_factory.mktemp("image_server") / "server.log",
                            extra_flags=("--max_image_pixels=1000000",))
    yield process
    process.stop()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("photos")
    paths = []
    for i, (size, fmt) in enumerate([((64, 48), "JPEG"), ((30, 41), "PNG"), ((8, 8), "PNG")]):
        path = folder / f"p{i}.{'jpg' if fmt == 'JPEG' else 'png'}"
        path.write_bytes(encode(noise("RGB", size, 20 + i, smooth=1), fmt))
        paths.append(path)
    return paths


def in_process(image_models, path, tmp_path):
    out = tmp_path / "f.f32"
    bundle = image_models / "pictures" / "1" / "model.bundle"
    subprocess.run([HELPER, "featurize-image", str(bundle), str(path), str(out)], check=True)
    return np.frombuffer(out.read_bytes(), "<f4")


def test_the_python_client_sends_paths_and_bytes(image_server, image_models, files, tmp_path):
    expected = np.stack([in_process(image_models, p, tmp_path) for p in files])
    with Client(image_server.target, timeout=30) as client:
        meta = client.metadata("pictures")
        assert meta.image["height"] == 8 and meta.image["formats"] == ["jpeg", "png"]
        assert meta.image["max_pixels"] == 1000000
        by_path = client.featurize("pictures", images=[str(p) for p in files])
        by_bytes = client.featurize("pictures", images=[p.read_bytes() for p in files])
        prediction = client.predict("pictures", images=files[0])
    np.testing.assert_array_equal(by_path, expected)
    np.testing.assert_array_equal(by_bytes, expected)
    assert prediction.classes[0].startswith("shape_")


def test_the_protocol_over_grpc_takes_bytes(image_server, image_models, files, tmp_path):
    import grpc
    from invariant_serve._proto.inference import grpc_service_pb2 as oip
    from invariant_serve._proto.inference import grpc_service_pb2_grpc as oip_grpc

    expected = np.stack([in_process(image_models, p, tmp_path) for p in files])
    request = oip.ModelInferRequest(model_name="pictures")
    tensor = request.inputs.add(name="input", datatype="BYTES", shape=[len(files)])
    tensor.contents.bytes_contents.extend(p.read_bytes() for p in files)
    request.outputs.add(name="features")
    with grpc.insecure_channel(image_server.target) as channel:
        reply = oip_grpc.GRPCInferenceServiceStub(channel).ModelInfer(request, timeout=30)
        meta = oip_grpc.GRPCInferenceServiceStub(channel).ModelMetadata(
            oip.ModelMetadataRequest(name="pictures"), timeout=30)
    got = (np.frombuffer(reply.raw_output_contents[0], "<f4") if reply.raw_output_contents
           else np.asarray(reply.outputs[0].contents.fp32_contents, np.float32))
    got = got.reshape(len(files), -1)
    np.testing.assert_array_equal(got, expected)
    assert meta.inputs[0].datatype == "BYTES"
    assert json.loads(meta.properties["image"])["height"] == 8


def test_rest_takes_binary_bytes_tensors(image_server, image_models, files, tmp_path):
    expected = np.stack([in_process(image_models, p, tmp_path) for p in files])
    blob = b"".join(struct.pack("<I", len(p.read_bytes())) + p.read_bytes() for p in files)
    head = json.dumps({"inputs": [{"name": "input", "datatype": "BYTES", "shape": [len(files)],
                                   "parameters": {"binary_data_size": len(blob)}}],
                       "outputs": [{"name": "features",
                                    "parameters": {"binary_data": True}}]}).encode()
    request = urllib.request.Request(
        image_server.http_base + "/v2/models/pictures/infer", data=head + blob,
        headers={"Inference-Header-Content-Length": str(len(head))})
    with urllib.request.urlopen(request, timeout=30) as reply:
        n = int(reply.headers["Inference-Header-Content-Length"])
        body = reply.read()
    np.testing.assert_array_equal(np.frombuffer(body[n:], "<f4").reshape(len(files), -1),
                                  expected)


def test_invariant_client_predicts_files_and_a_folder(image_server, files):
    with Client(image_server.target, timeout=30) as client:
        expected = client.predict("pictures", images=files).classes
    cli = os.environ["INVARIANT_CLIENT_BINARY"]
    r = subprocess.run([cli, "predict", "pictures", f"--target={image_server.target}",
                        f"--input={files[0].parent}"], capture_output=True, text=True, check=True)
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 1 + len(files), r.stdout  # a header, then one line per file
    assert [line.split(",")[0] for line in lines[1:]] == [p.name for p in files]
    assert [line.split(",")[1] for line in lines[1:]] == list(expected)


def test_a_bomb_is_refused_naming_the_image(image_server, files):
    bomb = (b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" +
            struct.pack(">IIBBBBB", 30000, 30000, 8, 0, 0, 0, 0))
    bomb += struct.pack(">I", __import__("zlib").crc32(bomb[12:29]))
    with Client(image_server.target, timeout=30) as client:
        with pytest.raises(InvariantServeError) as error:
            client.featurize("pictures", images=[files[0].read_bytes(), bomb])
    assert "images[1]: the PNG declares 30000 x 30000 = 900000000 pixels, above the limit " \
           "of 1000000 pixels" in str(error.value)
