// The model pages the REAL invariant-server serves, in headless Chromium
// (tests/browser/chromium_page.h): a model trained by the real
// invariant-train, served, its page fetched from
// /v2/models/{name}/versions/{v}/report renders every plot as the file
// does, and the index page (/v2/report) lists the model with its state,
// certificate and a link to its page. Screenshots are saved under the build
// directory (test-artifacts/model_page/served_*.png).
#include <gmock/gmock.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/browser/chromium_page.h"
#include "tests/integration/integration_env.h"

namespace invariant::testing_server {
namespace {

using ::testing::HasSubstr;
namespace browser = ::invariant::browser;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

class ModelPageServedTest : public ServerTestBase {};

TEST_F(ModelPageServedTest, TheServedPageAndTheIndexRenderInABrowser) {
  const std::string chromium = browser::RequireChromium();
  ASSERT_FALSE(chromium.empty());
  std::string out;
  ASSERT_EQ(browser::RunCommand(std::string(INVARIANT_TRAIN_BINARY) + " --config=" +
                                    browser::ShellQuote(std::string(INVARIANT_SOURCE_DIR) +
                                                        "/train/configs/default.textproto") +
                                    " --models=" + browser::ShellQuote(models()) +
                                    " --name=xperm --version=1 2>&1",
                                &out),
            0)
      << out;
  const std::string file = ReadFile(models() + "/xperm/1/report.html");
  ASSERT_FALSE(file.empty());
  StartServer({"--http_port=0"});
  const std::string base = "http://127.0.0.1:" + std::to_string(server_->http_port());
  const std::string artifacts = INVARIANT_TEST_ARTIFACT_DIR;
  std::filesystem::create_directories(artifacts);

  // The served bytes are the file's.
  absl::StatusOr<std::string> served =
      HttpGet(server_->http_port(), "/v2/models/xperm/versions/1/report");
  ASSERT_TRUE(served.ok()) << served.status();
  EXPECT_EQ(*served, file);
  const browser::Page page =
      browser::OpenPage(chromium, dir_.string(), base + "/v2/models/xperm/versions/1/report",
                        artifacts + "/served_xperm.png");
  browser::ExpectPlotsRendered(file, page, {"invariance-1", "validation-curve", "confusion"});

  const browser::Page index = browser::OpenPage(chromium, dir_.string(), base + "/v2/report",
                                                artifacts + "/served_index.png");
  EXPECT_THAT(index.dom, HasSubstr("<td>xperm</td>"));
  EXPECT_THAT(index.dom, HasSubstr("READY"));
  EXPECT_THAT(index.dom, HasSubstr("exhaustive"));  // the certificate's summary
  EXPECT_THAT(index.dom, HasSubstr("href=\"/v2/models/xperm/versions/1/report\""));
  browser::ExpectCleanScreenshot(index);

  // A version that is not served has no page.
  absl::StatusOr<std::string> missing =
      HttpGet(server_->http_port(), "/v2/models/xperm/versions/9/report");
  EXPECT_FALSE(missing.ok());
}

}  // namespace
}  // namespace invariant::testing_server
