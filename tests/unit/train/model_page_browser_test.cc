// The model page (report.html) in a real browser: headless Chromium (Debian's
// `chromium`, installed by deploy/install-deps.sh) opens the page a real
// invariant-train run wrote, from a file with no network, and the test checks
// that every plot is in the DOM after load with a layout box, that the page
// counted no error and the browser logged no console message, and saves a
// screenshot of each page under the build directory
// (test-artifacts/model_page/). Hermetic: temporary directories (the
// browser's profile too), seeded data, no timing.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/train/train_test_util.h"

namespace invariant::train {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::ReadText;
using testing::TempDir;

// Runs `command` through the shell; its exit code, stdout in *out.
int Run(const std::string& command, std::string* out) {
  FILE* p = popen(command.c_str(), "r");
  char buf[4096];
  size_t got;
  while ((got = fread(buf, 1, sizeof(buf), p)) > 0) out->append(buf, got);
  const int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string Quote(const std::string& s) { return "'" + s + "'"; }

// The chromium on PATH, or "" when there is none.
std::string FindChromium() {
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  for (size_t start = 0; start <= dirs.size();) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    for (const char* name : {"chromium", "chromium-browser"}) {
      const std::string candidate = dirs.substr(start, end - start) + "/" + name;
      if (access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    start = end + 1;
  }
  return "";
}

int Count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// The <svg …>…</svg> element with id `id` in `html` (empty when none).
std::string Svg(const std::string& html, const std::string& id) {
  const size_t at = html.find("<svg class=\"plot\" id=\"" + id + "\"");
  if (at == std::string::npos) return "";
  return html.substr(at, html.find("</svg>", at) + 6 - at);
}

// Trains `config` as model `name` (the version directory; empty on failure).
std::string Train(const TempDir& dir, const std::string& name, const std::string& config) {
  std::string out;
  const int code =
      Run(std::string(INVARIANT_TRAIN_BINARY) +
              " --config=" + Quote(dir.Write(name + ".textproto", config)) +
              " --models=" + Quote(dir.path() + "/models") + " --name=" + name + " 2>&1",
          &out);
  EXPECT_EQ(code, 0) << out;
  return code == 0 ? dir.path() + "/models/" + name + "/1" : "";
}

// What the browser saw of one page.
struct Page {
  std::string dom;  // --dump-dom after load
  std::string log;  // the browser's stderr (console messages included)
  std::string png;  // the screenshot's bytes
};

constexpr int kWidth = 1200, kHeight = 1800;

Page Open(const std::string& chromium, const TempDir& dir, const std::string& html,
          const std::string& screenshot) {
  const std::string common =
      "timeout 240 " + Quote(chromium) +
      " --headless=new --disable-gpu --no-sandbox --no-first-run --no-default-browser-check"
      " --disable-extensions --disable-background-networking --disable-component-update"
      " --disable-sync --mute-audio --hide-scrollbars --user-data-dir=" +
      Quote(dir.path() + "/profile") + " --window-size=" + std::to_string(kWidth) + "," +
      std::to_string(kHeight) + " ";
  const std::string url = Quote("file://" + html);
  Page page;
  std::string unused;
  EXPECT_EQ(Run(common + "--enable-logging=stderr --v=0 --dump-dom " + url + " 2>" +
                    Quote(dir.path() + "/browser.log"),
                &page.dom),
            0)
      << ReadText(dir.path() + "/browser.log");
  page.log = ReadText(dir.path() + "/browser.log");
  fs::remove(screenshot);
  EXPECT_EQ(Run(common + "--screenshot=" + Quote(screenshot) + " " + url + " 2>&1", &unused), 0)
      << unused;
  page.png = ReadText(screenshot);
  return page;
}

// The body's data-<name> attribute, or "missing".
std::string BodyData(const std::string& dom, const std::string& name) {
  std::smatch m;
  const std::regex re("<body[^>]* data-" + name + "=\"([^\"]*)\"");
  return std::regex_search(dom, m, re) ? m[1].str() : "missing";
}

// A big-endian 32-bit value of a PNG header.
uint32_t Be32(const std::string& s, size_t at) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  return v;
}

// Every plot of `html` (the file) rendered in `page`, and nothing went wrong.
void ExpectRendered(const std::string& html, const Page& page,
                    const std::vector<std::string>& ids) {
  const std::string file = ReadText(html);
  const int plots = Count(file, "<svg class=\"plot\"");
  ASSERT_GT(plots, 0);
  EXPECT_EQ(BodyData(page.dom, "errors"), "0") << BodyData(page.dom, "error-text");
  EXPECT_EQ(BodyData(page.dom, "plots"), std::to_string(plots)) << page.dom.substr(0, 2000);
  EXPECT_EQ(BodyData(page.dom, "rendered-plots"), std::to_string(plots));
  for (const std::string& id : ids) {
    EXPECT_THAT(page.dom, HasSubstr("<svg class=\"plot\" id=\"" + id + "\"")) << id;
  }
  for (const char* element : {"<circle class=\"point\"", "<rect class=\"cell\"",
                              "<polyline class=\"series\"", "<line class=\"marker\""}) {
    EXPECT_EQ(Count(page.dom, element), Count(file, element)) << element;
  }
  // The page logs nothing: any console message is a fault.
  EXPECT_EQ(Count(page.log, ":CONSOLE"), 0) << page.log;
  ASSERT_GE(page.png.size(), 24u) << "no screenshot";
  EXPECT_EQ(page.png.substr(1, 3), "PNG");
  EXPECT_EQ(Be32(page.png, 16), static_cast<uint32_t>(kWidth));
  EXPECT_EQ(Be32(page.png, 20), static_cast<uint32_t>(kHeight));
}

// The artifact directory of this test's screenshots and pages.
std::string Artifacts() {
  const std::string dir = INVARIANT_TEST_ARTIFACT_DIR;
  fs::create_directories(dir);
  return dir;
}

std::string RequireChromium() {
  const std::string chromium = FindChromium();
  EXPECT_FALSE(chromium.empty())
      << "chromium is not installed (no chromium on PATH): the model page's browser test needs "
         "Debian's chromium; deploy/install-deps.sh installs it (TEST_PKGS), or run "
         "sudo apt-get install -y --no-install-recommends chromium";
  return chromium;
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
  const Page page = Open(chromium, dir, html, shot);
  ExpectRendered(html, page, {"invariance-1", "validation-curve", "confusion"});
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
  const Page page = Open(chromium, dir, html, Artifacts() + "/torus.png");
  // Six sign-flip generators, each a curve of sizes 0 and 1.
  ExpectRendered(html, page, {"invariance-1", "invariance-6", "residuals"});
  EXPECT_EQ(Count(Svg(page.dom, "invariance-1"), "<circle class=\"point\""), 2);
  EXPECT_EQ(Count(Svg(page.dom, "residuals"), "<circle class=\"point\""), 100);  // test rows
  fs::copy_file(html, Artifacts() + "/torus.html", fs::copy_options::overwrite_existing);
}

}  // namespace
}  // namespace invariant::train
