// The web console's files (console/src and its browser libraries from console/node_modules), embedded in
// the binary when it is built (embed_assets.cmake writes their bytes into a generated source): the server
// reads no file to serve them, and what it serves is what was built and tested.
#pragma once

#include <span>
#include <string_view>

namespace siomq::surfaces::console {

struct ConsoleAsset {
  std::string_view path;          // relative to /console/: "index.html", "vendor/uPlot.min.css"
  std::string_view content_type;  // from the file's extension
  std::string_view etag;          // quoted: the first 16 hex digits of its SHA-256
  std::string_view body;
};

// Every file, in no particular order; static data, safe from any thread.
std::span<const ConsoleAsset> console_assets();

}  // namespace siomq::surfaces::console
