// invariant-bench-model-footprint: what a model version states it will hold
// (core/model/model_footprint.h) against the resident memory its load adds,
// in this process, measured as the server loads it: the bundle read, the
// encoder rebuilt, then warm-up rows answered (server/handlers/model_warmup.h)
// and a batch of `--rows` computed on the compute pool, with the server's
// malloc settings. A model of sound is fed as the server feeds it: every row
// is a seeded synthetic clip (a tone in noise, clip_seconds long at the
// model's rate, as the warm-up's) put through the model's audio front end,
// so the front end's workspaces count. One JSON line per bundle:
//   {"bundle": path, "file_bytes", "stated_held", "stated_workspace", "threads",
//    "rss_added": resident bytes added (the input and output buffers of the
//    batch not counted), "held_vs_rss": stated_held / rss_added}
//
//   build/bin/invariant-bench-model-footprint --rows=256 MODELS/m/1/model.bundle ...
// (bench/serving/model_footprint.sh trains the shipped configs and runs it.)
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "core/base/random.h"
#include "core/base/thread_pool.h"
#include "core/model/model.h"

ABSL_FLAG(int64_t, rows, 256, "Rows of the batch computed after the load");

namespace {

// Row i of x ← the front end applied to a seeded tone in noise, as
// server/handlers/model_warmup.cc builds its warm-up clip.
bool FillFromClips(const invariant::audio::AudioFrontEnd& front_end, int64_t rows, int64_t dim,
                   invariant::Rng& rng, float* x) {
  const int rate = front_end.spec().sample_rate();
  const double seconds =
      std::min(front_end.spec().clip_seconds(), front_end.spec().max_clip_seconds() > 0
                                                    ? front_end.spec().max_clip_seconds()
                                                    : front_end.spec().clip_seconds());
  std::vector<float> clip(static_cast<size_t>(std::max<int64_t>(1, std::llround(seconds * rate))));
  constexpr double kPi = 3.14159265358979323846;
  for (int64_t r = 0; r < rows; ++r) {
    for (size_t i = 0; i < clip.size(); ++i) {
      clip[i] = static_cast<float>(0.5 * std::sin(2 * kPi * 440.0 * static_cast<double>(i) / rate) +
                                   0.05 * rng.Normal());
    }
    if (absl::Status s = front_end.Apply(clip, rate, x + r * dim, "clip"); !s.ok()) {
      std::fprintf(stderr, "%s\n", s.ToString().c_str());
      return false;
    }
  }
  return true;
}

int64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace

int main(int argc, char** argv) {
  mallopt(M_MMAP_THRESHOLD, 1 << 20);  // as invariant-server
  std::vector<char*> paths = absl::ParseCommandLine(argc, argv);
  const int64_t rows = absl::GetFlag(FLAGS_rows);
  invariant::ThreadPool& pool = invariant::DefaultThreadPool();
  pool.ParallelFor(pool.num_threads(), [](int64_t) {});  // the pool's threads exist
  for (size_t i = 1; i < paths.size(); ++i) {
    const int64_t before = ResidentBytes();
    auto model = invariant::Model::Load(paths[i]);
    if (!model.ok()) {
      std::fprintf(stderr, "%s\n", model.status().ToString().c_str());
      return 1;
    }
    const invariant::Model& m = **model;
    std::vector<float> x(static_cast<size_t>(rows * m.input_dim()));
    invariant::Rng rng(1);
    for (float& v : x) v = static_cast<float>(rng.Normal());
    const invariant::audio::AudioFrontEnd* front_end = m.audio_front_end();
    const int64_t width = m.has_head() ? m.output_dim() : m.feature_dim();
    std::vector<float> out(static_cast<size_t>(rows * width));
    for (int64_t n : {int64_t{8}, rows}) {  // warm-up rows, then a batch
      if (front_end != nullptr && !FillFromClips(*front_end, n, m.input_dim(), rng, x.data())) {
        return 1;
      }
      if (m.has_head()) {
        m.Predict(n, x.data(), out.data());
      } else {
        m.Featurize(n, x.data(), out.data());
      }
    }
    const int64_t after = ResidentBytes();
    const invariant::ModelFootprint& f = m.footprint();
    const int64_t input_bytes = static_cast<int64_t>((x.size() + out.size()) * sizeof(float));
    const int64_t added = after - before - input_bytes;
    std::printf(
        "{\"bundle\":\"%s\",\"file_bytes\":%llu,\"stated_held\":%llu,\"stated_workspace\":%llu,"
        "\"threads\":%d,\"rss_added\":%lld,\"held_vs_rss\":%.3f}\n",
        paths[i], static_cast<unsigned long long>(f.bundle),
        static_cast<unsigned long long>(f.held()), static_cast<unsigned long long>(f.workspace),
        pool.num_threads(), static_cast<long long>(added),
        added > 0 ? static_cast<double>(f.held()) / static_cast<double>(added) : 0.0);
  }
  return 0;
}
