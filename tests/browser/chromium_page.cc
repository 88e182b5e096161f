#include "tests/browser/chromium_page.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace invariant::browser {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

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

// A big-endian 32-bit value of a PNG header.
uint32_t Be32(const std::string& s, size_t at) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  return v;
}

}  // namespace

int RunCommand(const std::string& command, std::string* out) {
  FILE* p = popen(command.c_str(), "r");
  char buf[4096];
  size_t got;
  while ((got = fread(buf, 1, sizeof(buf), p)) > 0) out->append(buf, got);
  const int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string ShellQuote(const std::string& s) { return "'" + s + "'"; }

std::string RequireChromium() {
  const std::string chromium = FindChromium();
  EXPECT_FALSE(chromium.empty())
      << "chromium is not installed (no chromium on PATH): the model page's browser tests need "
         "Debian's chromium; deploy/install-deps.sh installs it (TEST_PKGS), or run "
         "sudo apt-get install -y --no-install-recommends chromium";
  return chromium;
}

Page OpenPage(const std::string& chromium, const std::string& work_dir, const std::string& url,
              const std::string& screenshot) {
  const std::string common =
      "timeout 240 " + ShellQuote(chromium) +
      " --headless=new --disable-gpu --no-sandbox --no-first-run --no-default-browser-check"
      " --disable-extensions --disable-background-networking --disable-component-update"
      " --disable-sync --mute-audio --hide-scrollbars --user-data-dir=" +
      ShellQuote(work_dir + "/profile") + " --window-size=" + std::to_string(kWidth) + "," +
      std::to_string(kHeight) + " ";
  const std::string log = work_dir + "/browser.log";
  Page page;
  std::string unused;
  EXPECT_EQ(RunCommand(common + "--enable-logging=stderr --v=0 --dump-dom " + ShellQuote(url) +
                           " 2>" + ShellQuote(log),
                       &page.dom),
            0)
      << ReadFile(log);
  page.log = ReadFile(log);
  fs::remove(screenshot);
  EXPECT_EQ(RunCommand(
                common + "--screenshot=" + ShellQuote(screenshot) + " " + ShellQuote(url) + " 2>&1",
                &unused),
            0)
      << unused;
  page.png = ReadFile(screenshot);
  return page;
}

int Count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

std::string Svg(const std::string& html, const std::string& id) {
  const size_t at = html.find("<svg class=\"plot\" id=\"" + id + "\"");
  if (at == std::string::npos) return "";
  return html.substr(at, html.find("</svg>", at) + 6 - at);
}

std::string BodyData(const std::string& dom, const std::string& name) {
  std::smatch m;
  const std::regex re("<body[^>]* data-" + name + "=\"([^\"]*)\"");
  return std::regex_search(dom, m, re) ? m[1].str() : "missing";
}

void ExpectCleanScreenshot(const Page& page) {
  // The page logs nothing: any console message is a fault.
  EXPECT_EQ(Count(page.log, ":CONSOLE"), 0) << page.log;
  ASSERT_GE(page.png.size(), 24u) << "no screenshot";
  EXPECT_EQ(page.png.substr(1, 3), "PNG");
  EXPECT_EQ(Be32(page.png, 16), static_cast<uint32_t>(kWidth));
  EXPECT_EQ(Be32(page.png, 20), static_cast<uint32_t>(kHeight));
}

void ExpectPlotsRendered(const std::string& file, const Page& page,
                         const std::vector<std::string>& ids) {
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
  ExpectCleanScreenshot(page);
}

}  // namespace invariant::browser
