"""Reads a packed float field straight out of a serialized protobuf message.

invariant.v1 responses carry features and scores as `repeated float` (packed:
one length-delimited field whose payload is the little-endian float32 values).
`split_packed_floats` finds that payload and returns it as a numpy array
(np.frombuffer, no per-value work) together with the message bytes without
it, which the protobuf library then parses for the small fields. The scan
walks the top-level fields only up to the float field (the server writes
fields in number order), so its cost does not grow with the number of values.
"""

import numpy as np

_FLOAT32 = np.dtype("<f4")


def _read_varint(data, pos):
    result = 0
    shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7


def split_packed_floats(data, field_number):
    """(float32 values of `field_number`, the message bytes without that field).

    Values of the field that appear after the first field with a higher number
    (never written so by the server) stay in the returned bytes, where the
    protobuf parser picks them up; callers append those.
    """
    view = memoryview(data)
    pos = 0
    end = len(data)
    chunks = []
    kept = []
    kept_from = 0
    while pos < end:
        start = pos
        key, pos = _read_varint(data, pos)
        field, wire_type = key >> 3, key & 7
        if field > field_number:
            break
        if wire_type == 0:
            _, pos = _read_varint(data, pos)
        elif wire_type == 1:
            pos += 8
        elif wire_type == 2:
            length, pos = _read_varint(data, pos)
            if field == field_number:
                chunks.append(view[pos:pos + length])
            pos += length
        elif wire_type == 5:
            if field == field_number:
                chunks.append(view[pos:pos + 4])
            pos += 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire_type} of field {field}")
        if field == field_number:
            kept.append(view[kept_from:start])
            kept_from = pos
    kept.append(view[kept_from:])
    payload = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    values = np.frombuffer(payload, dtype=_FLOAT32)
    return values, b"".join(kept)
