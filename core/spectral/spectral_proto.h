// spectral_proto.h: conversion between the spectral encoder and its manifest
// message invariant.v1.SpectralParams (bundle.proto). The only protobuf
// dependency of core/spectral; the numeric code never includes it.
#ifndef INVARIANT_CORE_SPECTRAL_SPECTRAL_PROTO_H_
#define INVARIANT_CORE_SPECTRAL_SPECTRAL_PROTO_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "core/spectral/spectral_encoder.h"
#include "core/spectral/torus_group.h"
#include "invariant/v1/bundle.pb.h"

namespace invariant {

v1::TorusGenerator TorusGeneratorToProto(const TorusGeneratorSpec& g);
// Errors: KIND_UNSPECIFIED (named by index).
absl::StatusOr<TorusGeneratorSpec> TorusGeneratorFromProto(const v1::TorusGenerator& g, int index);

// Every field, including num_invariant = d_out and the build facts.
v1::SpectralParams SpectralParamsToProto(const SpectralEncoder& encoder);
// Options only (dim, budget, generators, tolerance), validated: dim >= 1,
// budget >= 1, generators well-formed. Errors name the field.
absl::StatusOr<SpectralEncoderOptions> SpectralOptionsFromProto(const v1::SpectralParams& p);

// Rebuilds an encoder from a manifest's params and its stored tensors; checks
// that num_invariant matches the combination's feature count.
absl::StatusOr<std::unique_ptr<SpectralEncoder>> SpectralEncoderFromProto(
    const v1::SpectralParams& p, SpectralTensors tensors);

}  // namespace invariant

#endif  // INVARIANT_CORE_SPECTRAL_SPECTRAL_PROTO_H_
