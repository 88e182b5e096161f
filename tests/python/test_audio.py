"""invariant_serve with a model of sound: clips as numpy arrays, WAV bytes and WAV files, against
the real server, and the same WAV through invariant-client giving the same scores bit for bit.

The model "words" (tests/cli/audio_test_model.h, written by the test helper) takes 8000 Hz
clips; the WAV files are written here with the `wave` module.
"""

import asyncio
import csv
import io
import os
import subprocess
import wave

import numpy as np
import pytest

from invariant_serve import AsyncClient, Client, InvariantServeError
from invariant_serve import _requests

from conftest import ServerProcess

RATE = 8000
CLASSES = ("yes", "no", "maybe")


@pytest.fixture(scope="module")
def audio_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("audio_models")
    subprocess.run([os.environ["INVARIANT_TEST_HELPER"], "write-audio-model", str(root)],
                   check=True)
    process = ServerProcess(root, tmp_path_factory.mktemp("audio_server") / "server.log")
    yield process
    process.stop()


@pytest.fixture(scope="module")
def client(audio_server):
    with Client(audio_server.target, timeout=30) as c:
        yield c


def tone(seconds, rate=RATE, f0=300.0, seed=0):
    """Seeded int16 samples: a chirp plus a little noise."""
    t = np.arange(int(seconds * rate)) / rate
    noise = np.random.default_rng(seed).standard_normal(t.size)
    x = 0.6 * np.sin(2 * np.pi * f0 * t * (1 + t)) + 0.05 * noise
    return np.round(np.clip(x, -1, 1) * 32767).astype(np.int16)


def write_wav(path, pcm, rate=RATE):
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm.astype("<i2").tobytes())


def read_wav(path):
    """(int16 samples, rate) with the standard library's wave module."""
    with wave.open(str(path), "rb") as w:
        assert (w.getnchannels(), w.getsampwidth()) == (1, 2)
        return np.frombuffer(w.readframes(w.getnframes()), dtype="<i2"), w.getframerate()


def cli_predict(audio_server, input_arg):
    """invariant-client predict words --input=... as (ids, float32 scores [n, 3], classes)."""
    result = subprocess.run(
        [os.environ["INVARIANT_CLIENT_BINARY"], "predict", "words",
         f"--target={audio_server.target}", f"--input={input_arg}"],
        capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    rows = list(csv.reader(io.StringIO(result.stdout)))
    assert rows[0] == ["id", "predicted_class", "predicted_index"] + [f"score_{c}"
                                                                      for c in CLASSES]
    scores = np.array([[np.float32(v) for v in r[3:]] for r in rows[1:]], dtype=np.float32)
    return [r[0] for r in rows[1:]], scores, [r[1] for r in rows[1:]]


def test_metadata_has_the_audio_front_end(client):
    metadata = client.metadata("words")
    assert metadata.audio is not None
    assert metadata.audio["sample_rate"] == RATE
    assert metadata.audio["frequency_bins"] * metadata.audio["frames"] == metadata.input_dim
    assert metadata.audio["clip_policy"] == "centre"
    assert metadata.audio["max_clip_seconds"] > 0
    assert metadata.class_names == list(CLASSES)


def test_the_same_wav_through_the_cli_and_python_gives_the_same_scores(client, audio_server,
                                                                      tmp_path):
    path = tmp_path / "hello.wav"
    write_wav(path, tone(0.8, seed=1))
    ids, cli_scores, cli_classes = cli_predict(audio_server, path)
    assert ids == [str(path)]

    pcm, rate = read_wav(path)
    as_int16 = client.predict("words", clips=pcm, sample_rate=rate)
    # float samples x / 32768, exactly what the server makes of 16-bit PCM
    as_float = client.predict("words", clips=pcm.astype(np.float32) / 32768, sample_rate=rate)
    as_path = client.predict("words", clips=path)
    as_bytes = client.predict("words", clips=path.read_bytes())
    for prediction in (as_int16, as_float, as_path, as_bytes):
        assert prediction.scores.dtype == np.float32 and prediction.scores.shape == (1, 3)
        assert prediction.scores.tobytes() == cli_scores.tobytes()
        assert prediction.classes.tolist() == cli_classes
        assert prediction.columns == CLASSES


def test_a_folder_through_the_cli_equals_a_list_of_arrays_of_different_lengths(
        client, audio_server, tmp_path):
    clips = {"b.wav": tone(0.3, seed=2), "a.wav": tone(1.1, seed=3, f0=700),
             "c.wav": tone(0.05, seed=4, f0=150)}
    for name, pcm in clips.items():
        write_wav(tmp_path / name, pcm)
    ids, cli_scores, _ = cli_predict(audio_server, tmp_path)
    assert ids == ["a.wav", "b.wav", "c.wav"]

    arrays = [clips[name] for name in ids]
    prediction = client.predict("words", clips=arrays)  # sample_rate None: the model's
    assert prediction.scores.shape == (3, 3)
    assert prediction.scores.tobytes() == cli_scores.tobytes()
    features = client.featurize("words", clips=arrays)
    assert features.shape == (3, client.metadata("words").feature_dim)
    one = client.featurize("words", clips=arrays[1])
    assert one.tobytes() == features[1:2].tobytes()


def test_a_two_dimensional_array_is_one_clip_per_row(client):
    X = np.stack([tone(0.5, seed=5), tone(0.5, seed=6)])
    both = client.featurize("words", clips=X)
    assert both.shape[0] == 2
    assert client.featurize("words", clips=X[1]).tobytes() == both[1:2].tobytes()


def test_sample_rate_is_sent_with_the_samples(client):
    pcm = tone(0.5, rate=16000, seed=7)
    at_16k = client.featurize("words", clips=pcm, sample_rate=16000)
    at_model_rate = client.featurize("words", clips=pcm)  # taken as 8000 Hz
    assert at_16k.shape == at_model_rate.shape
    assert at_16k.tobytes() != at_model_rate.tobytes()
    request = _requests.featurize_request("words", None, None, [pcm, pcm.astype(np.float64)],
                                          16000)
    assert [c.sample_rate for c in request.inputs.clips] == [16000, 16000]
    assert request.inputs.clips[0].WhichOneof("data") == "int16_le"
    assert request.inputs.clips[1].WhichOneof("data") == "float32_le"
    assert request.inputs.num_rows == 2


@pytest.mark.parametrize("clips, error, match", [
    (np.zeros((2, 2, 2), np.float32), ValueError, r"clips: expected a 1-D array"),
    (np.zeros(0, np.float32), ValueError, r"clips: no samples"),
    (np.array([0.1, np.nan], np.float32), ValueError, r"clips: samples must be finite"),
    ([np.zeros(4, np.float32), np.array([np.inf])], ValueError, r"clips\[1\]: .*finite"),
    (np.zeros(8, np.int32), TypeError, r"clips: expected float32, float64 .* or int16"),
    (b"id,x\n1,2\n", ValueError, r"clips: not a WAV file"),
    ([], ValueError, r"at least one clip"),
    ([[0.1, 0.2]], TypeError, r"clips\[0\]: expected a 1-D numpy array"),
])
def test_bad_clips_are_refused_before_the_call(client, clips, error, match):
    with pytest.raises(error, match=match):
        client.predict("words", clips=clips)


def test_rows_and_clips_are_exclusive_and_sample_rate_is_checked(client):
    pcm = tone(0.1)
    with pytest.raises(ValueError, match="received X and clips"):
        client.featurize("words", np.zeros((1, 224), np.float32), clips=pcm)
    with pytest.raises(ValueError, match="received none"):
        client.featurize("words")
    with pytest.raises(ValueError, match="sample_rate: expected a positive integer"):
        client.featurize("words", clips=pcm, sample_rate=0)
    with pytest.raises(ValueError, match="sample_rate: applies to clips="):
        client.featurize("words", np.zeros((1, 224), np.float32), sample_rate=8000)


def test_a_wav_path_that_is_not_wav_names_the_path(client, tmp_path):
    path = tmp_path / "notes.wav"
    path.write_text("not a clip")
    with pytest.raises(ValueError, match=r"clips\[1\] \(.*notes.wav\): not a WAV file"):
        client.predict("words", clips=[tone(0.1), path])


def test_the_server_refusing_a_clip_is_an_invariant_serve_error(client):
    too_long = np.zeros(int(client.metadata("words").audio["max_clip_seconds"] * RATE) + RATE,
                        np.int16)
    with pytest.raises(InvariantServeError) as info:
        client.predict("words", clips=[tone(0.1), too_long])
    assert info.value.code.name == "INVALID_ARGUMENT"
    assert "clips[1]" in info.value.message


def test_async_client_sends_clips_too(client, audio_server):
    pcm = tone(0.6, seed=8)
    expected = client.predict("words", clips=pcm)

    async def run():
        async with AsyncClient(audio_server.target, timeout=30) as c:
            return await c.predict("words", clips=[pcm]), await c.metadata("words")

    prediction, metadata = asyncio.run(run())
    assert prediction.scores.tobytes() == expected.scores.tobytes()
    assert metadata.audio["sample_rate"] == RATE


def test_clips_without_speech_get_no_class_and_say_so(client):
    """The model "listening" has voice activity: silence and noise alone are reported per
    clip (speech_found False, scores NaN, class "" and index -1), a sound in silence is
    answered and placed."""
    rng = np.random.default_rng(3)
    silence = np.zeros(RATE // 2, dtype=np.float32)
    noise = (0.05 * rng.standard_normal(RATE)).astype(np.float32)
    sound = np.zeros(RATE, dtype=np.int16)
    envelope = np.sin(np.pi * np.arange(RATE // 2) / (RATE // 2)) ** 2  # a syllable's rise and fall
    sound[RATE // 4: RATE // 4 + RATE // 2] = np.round(tone(0.5) * envelope).astype(np.int16)
    prediction = client.predict("listening", clips=[silence, noise, sound])
    assert prediction.speech_found.tolist() == [False, False, True]
    assert prediction.classes[0] == "" and prediction.classes[1] == ""
    assert prediction.indices[:2].tolist() == [-1, -1]
    assert np.isnan(prediction.scores[:2]).all()
    assert prediction.classes[2] in CLASSES and prediction.indices[2] >= 0
    start, end = prediction.speech_seconds[2]
    assert abs(start - 0.25) < 0.06 and abs(end - 0.75) < 0.06
    # The model without voice activity answers every clip.
    plain = client.predict("words", clips=[silence, noise])
    assert plain.speech_found is None
    assert (plain.indices >= 0).all()
