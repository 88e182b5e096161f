// The model page (report.html) in a real browser: headless Chromium (Debian's
// `chromium`, installed by deploy/install-deps.sh) opens the page a real
// invariant-train run wrote, from a file with no network, and the test checks
// that every plot is in the DOM after load with a layout box, that the page
// counted no error and the browser logged no console message, and saves a
// screenshot of each page under the build directory
// (test-artifacts/model_page/). Hermetic: temporary directories (the
// browser's profile too), seeded data, no timing.

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/browser/chromium_page.h"
#include "tests/unit/train/train_test_util.h"

namespace invariant::train {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::ReadText;
using testing::TempDir;
using namespace ::invariant::browser;  // NOLINT: the page helpers

// Trains `config` as model `name` (the version directory; empty on failure).
std::string Train(const TempDir& dir, const std::string& name, const std::string& config) {
  std::string out;
  const int code = RunCommand(
      std::string(INVARIANT_TRAIN_BINARY) +
          " --config=" + ShellQuote(dir.Write(name + ".textproto", config)) +
          " --models=" + ShellQuote(dir.path() + "/models") + " --name=" + name + " 2>&1",
      &out);
  EXPECT_EQ(code, 0) << out;
  return code == 0 ? dir.path() + "/models/" + name + "/1" : "";
}

// The artifact directory of this test's screenshots and pages.
std::string Artifacts() {
  const std::string dir = INVARIANT_TEST_ARTIFACT_DIR;
  fs::create_directories(dir);
  return dir;
}

constexpr char kXperm[] = R"pb(
  data { xperm { seed: 1 } }
  split { per_class_train: 60 validation: 100 test: 600 seed: 3 }
  encoder {
    cdf { num_templates: 8 num_bins: 8 range: 1.0 template_kind: TEMPLATE_STANDARD_NORMAL }
    group { GROUP }
    seed: 7
  }
  learner {
    kind: RIDGE
    task: TASK_CLASSIFICATION
    lambda_grid: [ 1e-4, 1e-3, 1e-2, 1e-1, 1 ]
  }
  certificate { num_points: 40 CERTIFICATE }
)pb";

std::string Xperm(const std::string& group, const std::string& certificate) {
  std::string c = kXperm;
  c.replace(c.find("GROUP"), 5, group);
  c.replace(c.find("CERTIFICATE"), 11, certificate);
  return c;
}

TEST(ModelPageBrowserTest, AClassifierWithABaselineRendersEveryPlot) {
  const std::string chromium = RequireChromium();
  ASSERT_FALSE(chromium.empty());
  TempDir dir;
  constexpr char kBlocks[] = "block_permutation { num_blocks: 5 block_size: 8 } enumerate: true";
  const std::string plain = Train(
      dir, "plain",
      Xperm("identity { dim: 40 } enumerate: true", std::string("group { ") + kBlocks + " }"));
  ASSERT_FALSE(plain.empty());
  const std::string invariant = Train(dir, "xperm", Xperm(kBlocks, "baseline: \"" + plain + "\""));
  ASSERT_FALSE(invariant.empty());
  const std::string html = invariant + "/report.html";
  const std::string shot = Artifacts() + "/xperm.png";
  const Page page = OpenPage(chromium, dir.path(), "file://" + html, shot);
  ExpectPlotsRendered(ReadText(html), page, {"invariance-1", "validation-curve", "confusion"});
  EXPECT_EQ(Count(page.dom, "<rect class=\"cell\""), 4);  // 2 classes
  fs::copy_file(html, Artifacts() + "/xperm.html", fs::copy_options::overwrite_existing);
}

TEST(ModelPageBrowserTest, ARegressionRendersItsResiduals) {
  const std::string chromium = RequireChromium();
  ASSERT_FALSE(chromium.empty());
  TempDir dir;
  const std::string version = Train(dir, "torus", testing::kTorusConfig);
  ASSERT_FALSE(version.empty());
  const std::string html = version + "/report.html";
  const Page page = OpenPage(chromium, dir.path(), "file://" + html, Artifacts() + "/torus.png");
  // Six sign-flip generators, each a curve of sizes 0 and 1.
  ExpectPlotsRendered(ReadText(html), page, {"invariance-1", "invariance-6", "residuals"});
  EXPECT_EQ(Count(Svg(page.dom, "invariance-1"), "<circle class=\"point\""), 2);
  EXPECT_EQ(Count(Svg(page.dom, "residuals"), "<circle class=\"point\""), 100);  // test rows
  fs::copy_file(html, Artifacts() + "/torus.html", fs::copy_options::overwrite_existing);
}

}  // namespace
}  // namespace invariant::train
