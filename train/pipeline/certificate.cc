#include "train/pipeline/certificate.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/base/file.h"
#include "core/base/random.h"
#include "core/base/status_macros.h"
#include "core/encoders/patch_statistics.h"
#include "core/encoders/preprocess_encoder.h"
#include "core/encoders/projector.h"
#include "core/groups/group_factory.h"
#include "core/groups/permutation_distributions.h"
#include "core/model/patch_kind.h"
#include "core/spectral/invariant_subspace.h"
#include "core/spectral/spectral_encoder.h"
#include "core/spectral/spectral_proto.h"
#include "core/spectral/torus_group.h"
#include "train/pipeline/clip_certificate.h"
#include "train/pipeline/config.h"
#include "train/pipeline/discrepancy.h"
#include "train/pipeline/invariance_curve.h"

namespace invariant::train {
namespace {

using Transform = std::function<void(int64_t n, const float* x, float* out)>;

// Rows per block when streaming a k-fold plan's training rows.
constexpr int64_t kCertificationBlockRows = 4096;

// The group elements a certificate applies: the same transforms to every
// point, or (per_input set) draws_per_input draws of an input-dependent law
// for each point.
struct Elements {
  std::vector<Transform> transforms;
  std::shared_ptr<const GroupDistribution> per_input;
  int64_t draws_per_input = 0;
  bool exhaustive = false;
  std::string method;

  int64_t rounds() const {
    return per_input ? draws_per_input : static_cast<int64_t>(transforms.size());
  }
};

absl::StatusOr<std::vector<TorusGeneratorSpec>> Generators(const v1::SpectralParams& p) {
  std::vector<TorusGeneratorSpec> gens;
  for (int i = 0; i < p.generators_size(); ++i) {
    ASSIGN_OR_RETURN(TorusGeneratorSpec g, TorusGeneratorFromProto(p.generators(i), i));
    gens.push_back(std::move(g));
  }
  return gens;
}

absl::StatusOr<Elements> SpectralElements(const v1::SpectralParams& p,
                                          const v1::CertificateConfig& config, uint64_t seed) {
  ASSIGN_OR_RETURN(std::vector<TorusGeneratorSpec> gens, Generators(p));
  ASSIGN_OR_RETURN(TorusGroupElements group,
                   EnumerateOrSampleTorusGroup(gens, p.dim(), kMaxEnumeratedElements,
                                               config.num_group_elements(), 2 * p.dim() + 1, seed));
  Elements e;
  e.exhaustive = group.exhaustive;
  e.method = group.method;
  for (TorusIsometry& g : group.elements) {
    e.transforms.push_back(
        [g = std::move(g)](int64_t n, const float* x, float* out) { ApplyIsometry(g, n, x, out); });
  }
  return e;
}

// The whole group when it can be listed (at most kMaxEnumeratedElements),
// else num_group_elements seeded draws; for a law that does not depend on
// the input.
DrawnElements DrawElements(const GroupDistribution& q, const v1::CertificateConfig& config,
                           uint64_t seed) {
  DrawnElements e;
  if (q.enumerable()) {
    e.list = q.Enumerate();
    if (static_cast<int64_t>(e.list.size()) <= kMaxEnumeratedElements) {
      e.exhaustive = true;
      e.method = absl::StrCat("all ", e.list.size(), " elements of ", q.name());
      return e;
    }
  }
  Rng rng(seed);
  e.list = q.Sample(config.num_group_elements(), rng);
  e.method = absl::StrCat(e.list.size(), " elements drawn from ", q.name());
  return e;
}

absl::StatusOr<Elements> GroupElements(const v1::GroupSpec& spec,
                                       const v1::CertificateConfig& config, uint64_t seed) {
  ASSIGN_OR_RETURN(std::unique_ptr<GroupDistribution> q, MakeGroupDistribution(spec));
  std::shared_ptr<const GroupDistribution> shared(std::move(q));
  Elements e;
  if (shared->depends_on_input()) {
    // Sample() of such a law ignores the input (NoisySort: uniform
    // permutations), so its draws are made per point in CertifyPredictor.
    const auto* sort = dynamic_cast<const NoisySort*>(shared.get());
    const bool deterministic = sort != nullptr && sort->sigma() == 0;
    e.per_input = shared;
    e.draws_per_input = deterministic ? 1 : config.num_group_elements();
    e.method = absl::StrCat(e.draws_per_input, deterministic ? " draw" : " draws",
                            " per point from ", shared->name(),
                            deterministic ? " (the deterministic sort of each point)"
                                          : " (input-dependent: drawn for each point)");
    return e;
  }
  DrawnElements drawn = DrawElements(*shared, config, seed);
  e.exhaustive = drawn.exhaustive;
  e.method = std::move(drawn.method);
  for (GroupElement& g : drawn.list) {
    e.transforms.push_back([shared, g = std::move(g)](int64_t n, const float* x, float* out) {
      shared->action().Apply(g, n, x, out);
    });
  }
  return e;
}

// max over generators and head columns of ‖D(g)f − f‖ (spectral models).
absl::StatusOr<double> SpectralGeneratorResidual(const Model& model) {
  const v1::SpectralParams& p = model.manifest().encoder().spectral();
  const ModelTensors& t = model.tensors();
  SpectralTensors st;
  st.basis = t.i32.at(kSpectralBasisTensor);
  st.combination_index = t.i32.at(kSpectralCombinationIndexTensor);
  st.combination_value = t.f64.at(kSpectralCombinationValueTensor);
  ASSIGN_OR_RETURN(std::unique_ptr<SpectralEncoder> enc, SpectralEncoderFromProto(p, st));
  ASSIGN_OR_RETURN(std::vector<TorusGeneratorSpec> gens, Generators(p));
  const FloatMatrix& w = model.head().weights;
  double worst = 0;
  for (int64_t c = 0; c < w.cols(); ++c) {
    Eigen::VectorXd coef(w.rows());
    for (int64_t i = 0; i < w.rows(); ++i) coef[i] = w.row(i)[c];
    ASSIGN_OR_RETURN(double r,
                     GeneratorResidual(enc->tensors().basis, gens, enc->ExpandToBasis(coef)));
    worst = std::max(worst, r);
  }
  return worst;
}

// Whether a patch model's certificate measures the per-patch map: its own
// group (certificate.group unset, encoder.group acts on patches) or a
// certificate.group of the patches' length; a group of the input's length
// checks the model's scores on whole images instead.
absl::StatusOr<bool> CertifiesPatches(const v1::EncoderSpec& spec, int64_t input_dim,
                                      const v1::CertificateConfig& config) {
  if (!config.has_group()) return true;
  ASSIGN_OR_RETURN(PatchGeometry g, PatchGeometryOf(spec, input_dim));
  ASSIGN_OR_RETURN(std::unique_ptr<GroupDistribution> q, MakeGroupDistribution(config.group()));
  const int64_t dim = q->action().dim();
  if (dim == input_dim) return false;
  if (dim == g.patch_dim()) return true;
  return absl::InvalidArgumentError(absl::StrCat("certificate.group acts on vectors of length ",
                                                 dim, ", but the model's inputs have ", input_dim,
                                                 " values and its patches ", g.patch_dim()));
}

// The held-out images as the encoder sees them (after the preprocessing).
absl::StatusOr<FloatMatrix> PreprocessedRows(const Model& model, const FloatMatrix& x) {
  const v1::Preprocess& pre = model.manifest().preprocess();
  if (!pre.center() && !pre.scale() && !pre.l2_normalize()) return x;
  auto tensor = [&](const char* name) {
    auto it = model.tensors().f32.find(name);
    return it == model.tensors().f32.end() ? FloatMatrix() : it->second;
  };
  PreprocessOptions o{pre.center(), pre.scale(), pre.l2_normalize()};
  ASSIGN_OR_RETURN(std::unique_ptr<PreprocessEncoder> stage,
                   PreprocessEncoder::Create(o, model.input_dim(), tensor("preprocess/mean"),
                                             tensor("preprocess/scale")));
  FloatMatrix out = FloatMatrix::Zeros(x.rows(), x.cols());
  stage->Encode(x.rows(), x.data(), out.mutable_data());
  return out;
}

// A patch model against a group acting on patches: the per-patch map φ
// (PatchEncoder::EncodePatches) on num_points patches drawn from the first
// num_points held-out images.
absl::StatusOr<v1::InvarianceCertificate> CertifyPatchMap(const Model& model,
                                                          const FloatMatrix& test_x,
                                                          const v1::CertificateConfig& config,
                                                          uint64_t seed) {
  const v1::EncoderSpec& spec = model.manifest().encoder();
  const int64_t n = std::min<int64_t>(test_x.rows(), config.num_points());
  if (n <= 0) return absl::InvalidArgumentError("certificate: no test points to check");
  ASSIGN_OR_RETURN(std::shared_ptr<const PatchEncoder> encoder,
                   LoadPatchEncoder(spec, model.input_dim(), model.tensors()));
  const FloatMatrix first = FloatMatrix::View(test_x.data(), n, test_x.cols(), nullptr);
  ASSIGN_OR_RETURN(FloatMatrix images, PreprocessedRows(model, first));
  Rng rng = Rng::ForStream(seed, 3);
  // Raw patches: EncodePatches normalises them as Encode does.
  ASSIGN_OR_RETURN(FloatMatrix patches,
                   SamplePatches(encoder->options().geometry, images, config.num_points(),
                                 /*normalize=*/false, 1.0, rng));
  BatchFunction f = [&](int64_t rows, const float* x, float* out) {
    encoder->EncodePatches(rows, x, out);
  };
  ASSIGN_OR_RETURN(v1::InvarianceCertificate c,
                   CertifyPredictor(f, encoder->patch_features(), spec, patches, config, seed));
  c.set_method(absl::StrCat("per-patch map on ", patches.rows(), " patches of ", n,
                            " held-out images: ", c.method()));
  return c;
}

}  // namespace

absl::StatusOr<v1::InvarianceCertificate> CertifyPredictor(
    const BatchFunction& f, int64_t num_outputs, const v1::EncoderSpec& spec,
    const FloatMatrix& test_x, const v1::CertificateConfig& config, uint64_t seed) {
  const int64_t n = std::min<int64_t>(test_x.rows(), config.num_points());
  if (n <= 0) return absl::InvalidArgumentError("certificate: no test points to check");
  const int64_t d = test_x.cols();
  const int64_t k = num_outputs;
  Elements e;
  const bool own_group = !config.has_group();
  const v1::GroupSpec& group = own_group ? spec.group() : config.group();
  if (own_group && spec.has_spectral()) {
    ASSIGN_OR_RETURN(e, SpectralElements(spec.spectral(), config, seed));
  } else {
    ASSIGN_OR_RETURN(std::unique_ptr<GroupDistribution> q, MakeGroupDistribution(group));
    if (q->action().dim() != d) {
      return absl::InvalidArgumentError(absl::StrCat(
          own_group ? "encoder.group" : "certificate.group", " acts on vectors of length ",
          q->action().dim(), ", but the model's inputs have ", d, " values"));
    }
    ASSIGN_OR_RETURN(e, GroupElements(group, config, seed));
  }
  std::vector<float> base(static_cast<size_t>(n * k)), moved(base.size());
  std::vector<float> gx(static_cast<size_t>(n * d));
  f(n, test_x.data(), base.data());
  // An input-dependent law: each point's draws, seeded by its bytes as the
  // encoder seeds them (Projector::ForEachBlockOverInput).
  std::vector<std::vector<GroupElement>> drawn;
  if (e.per_input) {
    for (int64_t i = 0; i < n; ++i) {
      Rng rng = Rng::ForStream(seed, HashRowBytes(test_x.row(i), d));
      drawn.push_back(e.per_input->SampleFor(test_x.row(i), e.draws_per_input, rng));
    }
  }
  double scale = 0;
  Discrepancy discrepancy;
  for (float v : base) scale = std::max(scale, static_cast<double>(std::fabs(v)));
  for (int64_t round = 0; round < e.rounds(); ++round) {
    if (e.per_input) {
      const GroupAction& action = e.per_input->action();
      for (int64_t i = 0; i < n; ++i) {
        const std::vector<GroupElement>& mine = drawn[static_cast<size_t>(i)];
        action.Apply(round < static_cast<int64_t>(mine.size()) ? mine[static_cast<size_t>(round)]
                                                               : action.Identity(),
                     1, test_x.row(i), gx.data() + i * d);
      }
    } else {
      e.transforms[static_cast<size_t>(round)](n, test_x.data(), gx.data());
    }
    f(n, gx.data(), moved.data());
    discrepancy.Add(moved.data(), base.data(), static_cast<int64_t>(base.size()));
  }
  v1::InvarianceCertificate c;
  const double spread = MeanPairwiseDifference(base.data(), n, k);
  SetDiscrepancyFigures(discrepancy, scale, spread, c);
  std::vector<GeneratorPath> paths;
  if (own_group && spec.has_spectral()) {
    ASSIGN_OR_RETURN(paths, SpectralPaths(spec.spectral()));
  } else {
    ASSIGN_OR_RETURN(paths, GroupPaths(group, seed));
  }
  for (v1::InvarianceCurvePoint& p :
       CurveAlong(paths, f, k, n, test_x.data(), d, base.data(), spread)) {
    *c.add_curve() = std::move(p);
  }
  c.set_num_points(n);
  c.set_num_group_elements(e.rounds());
  c.set_exhaustive(e.exhaustive);
  c.set_method(e.method);
  if (!(own_group && spec.has_spectral())) *c.mutable_group() = group;
  return c;
}

absl::StatusOr<v1::InvarianceCertificate> CertifyModel(const Model& model,
                                                       const FloatMatrix& test_x,
                                                       const v1::CertificateConfig& config,
                                                       uint64_t seed) {
  const v1::EncoderSpec& spec = model.manifest().encoder();
  if (spec.has_patch()) {
    ASSIGN_OR_RETURN(bool on_patches, CertifiesPatches(spec, model.input_dim(), config));
    if (on_patches) return CertifyPatchMap(model, test_x, config, seed);
  }
  int64_t outputs = 0;
  const BatchFunction f = ModelOutputs(model, &outputs);
  ASSIGN_OR_RETURN(v1::InvarianceCertificate c,
                   CertifyPredictor(f, outputs, model.manifest().encoder(), test_x, config, seed));
  if (model.manifest().encoder().has_spectral() && model.has_head()) {
    ASSIGN_OR_RETURN(double r, SpectralGeneratorResidual(model));
    c.set_generator_residual(r);
  }
  return c;
}

absl::StatusOr<FloatMatrix> CertificationRows(DataPlan& plan, int64_t max_rows) {
  const Dataset& held_out = plan.test.rows() > 0 ? plan.test : plan.validation;
  if (plan.fold.empty() || held_out.rows() > 0) {
    const int64_t n = std::min(held_out.rows(), max_rows);
    if (n <= 0) {
      return absl::InvalidArgumentError(
          "certificate: the split leaves no test or validation rows to check");
    }
    FloatMatrix x = FloatMatrix::Zeros(n, held_out.x.cols());
    std::copy(held_out.x.data(), held_out.x.data() + n * held_out.x.cols(), x.mutable_data());
    return x;
  }
  // k-fold: the first max_rows rows of fold 1 (fold index 0), in training
  // order; originals only (an augmented copy is never a held-out row).
  const int64_t d = plan.schema.dim;
  int64_t in_fold = 0;
  for (size_t t = 0; t < plan.fold.size(); ++t) {
    in_fold += plan.fold[t] == 0 && !plan.IsCopy(static_cast<int64_t>(t));
  }
  const int64_t n = std::min(in_fold, max_rows);
  if (n <= 0) return absl::InvalidArgumentError("certificate: fold 1 of the split has no rows");
  FloatMatrix x = FloatMatrix::Zeros(n, d);
  int64_t next = 0;
  RETURN_IF_ERROR(ForEachTrainBlock(plan, kCertificationBlockRows, 0, 1, [&](const TrainBlock& b) {
    for (int64_t i = 0; i < b.n && next < n; ++i) {
      const int64_t ordinal = b.first_ordinal + i;
      if (plan.fold[static_cast<size_t>(ordinal)] != 0 || plan.IsCopy(ordinal)) continue;
      std::copy(b.x + i * d, b.x + (i + 1) * d, x.mutable_row(next++));
    }
    return absl::OkStatus();
  }));
  if (next != n) {
    return absl::InternalError(
        absl::StrCat("certificate: fold 1 should hold ", n, " rows, the stream gave ", next));
  }
  return x;
}

BatchFunction ModelOutputs(const Model& model, int64_t* num_outputs) {
  const bool head = model.has_head();
  *num_outputs = head ? model.output_dim() : model.feature_dim();
  return [&model, head](int64_t n, const float* x, float* out) {
    if (head) {
      model.Predict(n, x, out);
    } else {
      model.Featurize(n, x, out);
    }
  };
}

namespace {

// The group a certificate checks: certificate.group, else the encoder's.
const v1::GroupSpec& CheckedGroup(const Model& model, const v1::CertificateConfig& config) {
  return config.has_group() ? config.group() : model.manifest().encoder().group();
}

}  // namespace

bool CertifiesClips(const Model& model, const v1::TrainConfig& config) {
  return model.audio_front_end() != nullptr &&
         CheckedGroup(model, config.certificate()).has_audio() && config.data().has_audio();
}

absl::StatusOr<v1::InvarianceCertificate> CertifyOnClips(const Model& model, const BatchFunction& f,
                                                         int64_t num_outputs,
                                                         const v1::TrainConfig& config,
                                                         const DataPlan& plan, uint64_t seed) {
  const v1::CertificateConfig& cc = config.certificate();
  const v1::GroupSpec& group = CheckedGroup(model, cc);
  ASSIGN_OR_RETURN(std::unique_ptr<GroupDistribution> q, MakeGroupDistribution(group));
  const audio::AudioFrontEnd& front_end = *model.audio_front_end();
  ASSIGN_OR_RETURN(const std::vector<audio::Clip> clips,
                   HeldOutClips(config.data().audio(), plan, front_end, cc.num_points()));
  ASSIGN_OR_RETURN(v1::InvarianceCertificate c,
                   CertifyClips(f, num_outputs, front_end, group.audio(),
                                DrawElements(*q, cc, seed), clips, seed));
  *c.mutable_group() = group;
  return c;
}

absl::StatusOr<v1::InvarianceCertificate> CertifyServedModel(const Model& model,
                                                             const FloatMatrix& test_x,
                                                             const v1::TrainConfig& config,
                                                             const DataPlan& plan, uint64_t seed) {
  if (!CertifiesClips(model, config)) {
    return CertifyModel(model, test_x, config.certificate(), seed);
  }
  int64_t outputs = 0;
  const BatchFunction f = ModelOutputs(model, &outputs);
  return CertifyOnClips(model, f, outputs, config, plan, seed);
}

absl::StatusOr<std::shared_ptr<const Model>> LoadModelAt(const std::string& model_path) {
  std::error_code ec;
  const std::string bundle = std::filesystem::is_directory(model_path, ec)
                                 ? (std::filesystem::path(model_path) / kBundleFileName).string()
                                 : model_path;
  return Model::Load(bundle);
}

absl::StatusOr<v1::InvarianceCertificate> CertifySavedModel(const std::string& config_path,
                                                            const std::string& model_path) {
  std::optional<std::string> text = ReadWholeFile(config_path);
  if (!text.has_value()) {
    return absl::NotFoundError(absl::StrCat(config_path, ": cannot open the config file"));
  }
  ASSIGN_OR_RETURN(v1::TrainConfig config, ParseTrainConfig(*text, config_path));
  ASSIGN_OR_RETURN(std::shared_ptr<const Model> model, LoadModelAt(model_path));
  ASSIGN_OR_RETURN(DataPlan plan, PlanData(config));
  ASSIGN_OR_RETURN(plan.test.x, CertificationRows(plan, config.certificate().num_points()));
  if (plan.test.x.cols() != model->input_dim()) {
    return absl::InvalidArgumentError(absl::StrCat(config_path, ": the test rows have ",
                                                   plan.test.x.cols(), " values, but ", model_path,
                                                   " takes input_dim ", model->input_dim()));
  }
  return CertifyServedModel(*model, plan.test.x, config, plan,
                            config.encoder().seed() ^ kCertificateSeedSalt);
}

}  // namespace invariant::train
