// chromium_page.h: a page opened in headless Chromium (Debian's `chromium`,
// installed by deploy/install-deps.sh), for the tests that check what a
// person would see: the model page a training run writes (report.html) and
// the pages the server serves.
//
// OpenPage loads a URL (file:// or http://127.0.0.1:...) twice, once for the
// DOM after load (--dump-dom, with the browser's stderr: console messages
// included) and once for a screenshot, with its profile in a temporary
// directory and no network beyond the URL. ExpectPlotsRendered checks a page
// written by the model page's writer (train/pipeline/report_html.h): every
// plot in the DOM with the element counts of the file, the page's own error
// count 0, no console message, a PNG of the window's size.
//
// Hermetic: temporary profile, no timing (the browser's own 240 s timeout
// bounds a hung run). Thread-compatible: one page at a time per profile.
#ifndef INVARIANT_TESTS_BROWSER_CHROMIUM_PAGE_H_
#define INVARIANT_TESTS_BROWSER_CHROMIUM_PAGE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace invariant::browser {

inline constexpr int kWidth = 1200, kHeight = 1800;

// What the browser saw of one page.
struct Page {
  std::string dom;  // --dump-dom after load
  std::string log;  // the browser's stderr (console messages included)
  std::string png;  // the screenshot's bytes
};

// The chromium on PATH; "" (and a test failure saying how to install it)
// when there is none.
std::string RequireChromium();

// Opens `url` with its profile under `work_dir`; the screenshot is written
// to `screenshot` (and read back into Page::png).
Page OpenPage(const std::string& chromium, const std::string& work_dir, const std::string& url,
              const std::string& screenshot);

// The number of times `needle` occurs in `text`.
int Count(const std::string& text, const std::string& needle);
// The <svg class="plot" id="`id`"> element of `html` ("" when none).
std::string Svg(const std::string& html, const std::string& id);
// The body's data-<name> attribute in `dom`, or "missing".
std::string BodyData(const std::string& dom, const std::string& name);
// A screenshot of the window's size, and no console message.
void ExpectCleanScreenshot(const Page& page);
// Every plot of the page whose source is `html_text` rendered in `page`
// (the ids in `ids` among them), and nothing went wrong.
void ExpectPlotsRendered(const std::string& html_text, const Page& page,
                         const std::vector<std::string>& ids);

// Runs `command` through the shell; its exit code, stdout in *out.
int RunCommand(const std::string& command, std::string* out);
// `s` in single quotes for the shell.
std::string ShellQuote(const std::string& s);

}  // namespace invariant::browser

#endif  // INVARIANT_TESTS_BROWSER_CHROMIUM_PAGE_H_
